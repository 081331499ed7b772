import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { PROMOTER_ROLES } from '@onsale/contracts';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { z } from 'zod';
import type { Services } from '../context';
import type { PromoterActor } from '../lib/actors';

/**
 * Console sessions live in Redis under a hash of the cookie's value (a stolen Redis dump opens no
 * session). The cookie is HttpOnly and SameSite=Lax (Lax, not Strict: the browser must send it on
 * the top-level redirect back from the identity provider); each session carries its own CSRF token.
 */
export const SESSION_COOKIE = 'onsale_console';
const LOGIN_COOKIE = 'onsale_console_login';

const Session = z.object({
  sub: z.string(),
  tenantId: z.string().uuid(),
  role: z.enum(PROMOTER_ROLES),
  csrf: z.string(),
  createdAt: z.string(),
});
export type ConsoleSession = z.infer<typeof Session> & { actor: PromoterActor };

const LoginState = z.object({ verifier: z.string(), redirectUri: z.string() });

const digest = (v: string) => createHash('sha256').update(v).digest('hex');

export function createSessionStore(ctx: Services, o: { ttlSeconds: number; secure: boolean }) {
  const key = (kind: string, id: string) => `${ctx.prefix}console:${kind}:${digest(id)}`;
  const cookie = { httpOnly: true, sameSite: 'Lax' as const, path: '/console', secure: o.secure };

  return {
    async beginLogin(c: Context, state: string, data: z.infer<typeof LoginState>) {
      await ctx.redis.set(key('login', state), JSON.stringify(data), 'EX', 600);
      setCookie(c, LOGIN_COOKIE, state, { ...cookie, maxAge: 600 });
    },
    /** The login this browser started, once: the state in the URL must be the one in its cookie. */
    async finishLogin(c: Context, state: string) {
      const mine = getCookie(c, LOGIN_COOKIE);
      deleteCookie(c, LOGIN_COOKIE, cookie);
      if (!mine || !sameToken(mine, state)) return null;
      const raw = await ctx.redis.getdel(key('login', state));
      const parsed = raw ? LoginState.safeParse(JSON.parse(raw)) : null;
      return parsed?.success ? parsed.data : null;
    },
    async create(c: Context, who: { sub: string; tenantId: string; role: PromoterActor['role'] }) {
      const id = randomBytes(32).toString('base64url');
      const s = { ...who, csrf: randomBytes(32).toString('base64url'), createdAt: new Date().toISOString() };
      await ctx.redis.set(key('session', id), JSON.stringify(s), 'EX', o.ttlSeconds);
      // Who has signed in, per tenant, with the role their issuer gave them: the console's team page.
      await ctx.redis.hset(
        `${ctx.prefix}console:members:${who.tenantId}`,
        who.sub,
        JSON.stringify({ role: who.role, lastSignIn: s.createdAt }),
      );
      setCookie(c, SESSION_COOKIE, id, { ...cookie, maxAge: o.ttlSeconds });
    },
    async get(c: Context): Promise<ConsoleSession | null> {
      const id = getCookie(c, SESSION_COOKIE);
      if (!id) return null;
      const raw = await ctx.redis.get(key('session', id));
      const parsed = raw ? Session.safeParse(JSON.parse(raw)) : null;
      if (!parsed?.success) return null;
      const s = parsed.data;
      return { ...s, actor: { kind: 'promoter', sub: s.sub, tenantId: s.tenantId, role: s.role } };
    },
    async destroy(c: Context) {
      const id = getCookie(c, SESSION_COOKIE);
      if (id) await ctx.redis.del(key('session', id));
      deleteCookie(c, SESSION_COOKIE, cookie);
    },
    async members(tenantId: string) {
      const all = await ctx.redis.hgetall(`${ctx.prefix}console:members:${tenantId}`);
      return Object.entries(all)
        .map(([sub, v]) => ({ sub, ...(JSON.parse(v) as { role: string; lastSignIn: string }) }))
        .sort((a, b) => a.sub.localeCompare(b.sub));
    },
  };
}
export type SessionStore = ReturnType<typeof createSessionStore>;

export function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
