import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { DevIdentity } from './index';

/**
 * The development issuer's OpenID Connect face, the same shape the console uses against any
 * production issuer: discovery, an authorization endpoint (a sign-in form for users registered
 * here), and a token endpoint that exchanges a single-use code bound to a PKCE challenge.
 */

/** A promoter names their tenant and role; a buyer (the shop's sign-in) names neither. */
/**
 * A buyer's address as this issuer takes it: a plain pattern (local part of at most 64 characters, dotted domain)
 * that the published document states exactly, rather than a format every checker reads its own way.
 */
export const BuyerEmail = z
  .string()
  .max(254)
  .regex(/^[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(\.[A-Za-z0-9-]{1,63})+$/, 'must be an email address');

const DevUser = z
  .object({
    username: z.string().min(1).max(100),
    password: z.string().min(1).max(200),
    sub: z.string().min(1).max(200),
    tenantId: z.string().uuid().optional(),
    role: z.enum(['owner', 'manager', 'viewer']).optional(),
    // A buyer's address, carried as OIDC's `email` claim: where the cell sends their order's mail.
    email: BuyerEmail.optional(),
  })
  .refine((u) => (u.tenantId === undefined) === (u.role === undefined), {
    message: 'a promoter gives both tenantId and role; a buyer neither',
    path: ['role'],
  });
type DevUser = z.infer<typeof DevUser>;

const AuthorizeParams = z.object({
  response_type: z.literal('code'),
  client_id: z.string().min(1).max(200),
  redirect_uri: z
    .string()
    .url()
    // Development only: a code is only ever sent back to this machine.
    .refine((u) => ['127.0.0.1', 'localhost'].includes(new URL(u).hostname), 'must be a loopback URL'),
  state: z.string().min(16).max(200),
  code_challenge: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
  code_challenge_method: z.literal('S256'),
  nonce: z.string().max(200).optional(),
  scope: z.string().max(500).optional(),
});
type AuthorizeParams = z.infer<typeof AuthorizeParams>;

const TokenRequest = z.object({
  grant_type: z.literal('authorization_code'),
  code: z.string().min(1),
  redirect_uri: z.string().url(),
  client_id: z.string().min(1),
  code_verifier: z.string().regex(/^[A-Za-z0-9._~-]{43,128}$/),
});

interface PendingCode {
  params: AuthorizeParams;
  user: DevUser;
  expiresAt: number;
}

const CODE_TTL_MS = 60_000;
const esc = (s: string) =>
  s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);
const sameSecret = (a: string, b: string) => {
  const x = createHash('sha256').update(a).digest();
  const y = createHash('sha256').update(b).digest();
  return timingSafeEqual(x, y);
};

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function signInPage(p: AuthorizeParams, error?: string) {
  const hidden = Object.entries(p)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(String(v))}">`)
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Sign in · development issuer</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:24rem;margin:3rem auto;padding:0 1rem;color:#111}
label{display:block;margin-top:1rem}input{font:inherit;width:100%;padding:.5rem;box-sizing:border-box}
button{margin-top:1.5rem;font:inherit;padding:.5rem 1rem}.error{color:#a00}</style></head><body>
<h1>Sign in</h1><p>Development identity issuer (never exposed beyond this machine).</p>
${error ? `<p class="error" role="alert">${esc(error)}</p>` : ''}
<form method="post" action="/authorize">${hidden}
<label for="username">Username</label><input id="username" name="username" autocomplete="username" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form></body></html>`;
}

/** The OIDC routes, added to the dev issuer's server; answers true when it handled the request. */
export function createDevOidc(identity: DevIdentity, baseUrl: () => string) {
  const users = new Map<string, DevUser>();
  const codes = new Map<string, PendingCode>();

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
    res.end(JSON.stringify(body));
  };
  const html = (res: ServerResponse, status: number, page: string) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(page);
  };
  const invalid = (res: ServerResponse, error: string, description: string, status = 400) =>
    send(res, status, { error, error_description: description });

  const routes = [
    { method: 'GET', path: '/.well-known/openid-configuration' },
    { method: 'GET', path: '/authorize' },
    { method: 'POST', path: '/authorize' },
    { method: 'POST', path: '/token' },
    { method: 'POST', path: '/users' },
  ];

  async function handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    const url = new URL(req.url ?? '/', baseUrl());
    if (req.method === 'GET' && path === '/.well-known/openid-configuration') {
      send(res, 200, {
        issuer: identity.issuer,
        authorization_endpoint: `${baseUrl()}/authorize`,
        token_endpoint: `${baseUrl()}/token`,
        jwks_uri: `${baseUrl()}/.well-known/jwks.json`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: [identity.alg],
      });
      return true;
    }
    if (req.method === 'POST' && path === '/users') {
      let body: unknown;
      try {
        body = JSON.parse(await readBody(req));
      } catch {
        send(res, 400, { error: { code: 'bad_request', message: 'body must be JSON' } });
        return true;
      }
      const p = DevUser.safeParse(body);
      if (!p.success) {
        send(res, 400, { error: { code: 'validation_failed', message: 'invalid user', details: p.error.issues } });
        return true;
      }
      users.set(p.data.username, p.data);
      send(res, 201, { username: p.data.username, sub: p.data.sub, tenantId: p.data.tenantId, role: p.data.role });
      return true;
    }
    if (path === '/authorize') {
      const form = req.method === 'POST' ? new URLSearchParams(await readBody(req)) : url.searchParams;
      const p = AuthorizeParams.safeParse(Object.fromEntries(form));
      // A bad redirect is never followed: the error is shown here, not sent to an unchecked URL.
      if (!p.success) {
        html(
          res,
          400,
          `<!doctype html><title>Bad request</title><p>invalid authorization request: ${esc(
            p.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
          )}</p>`,
        );
        return true;
      }
      if (req.method === 'GET') {
        html(res, 200, signInPage(p.data));
        return true;
      }
      const user = users.get(form.get('username') ?? '');
      if (!user || !sameSecret(user.password, form.get('password') ?? '')) {
        html(res, 401, signInPage(p.data, 'Unknown username or wrong password.'));
        return true;
      }
      const code = randomBytes(32).toString('base64url');
      codes.set(code, { params: p.data, user, expiresAt: Date.now() + CODE_TTL_MS });
      const back = new URL(p.data.redirect_uri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', p.data.state);
      res.writeHead(303, { location: back.toString(), 'cache-control': 'no-store' });
      res.end();
      return true;
    }
    if (req.method === 'POST' && path === '/token') {
      const t = TokenRequest.safeParse(Object.fromEntries(new URLSearchParams(await readBody(req))));
      if (!t.success) {
        invalid(res, 'invalid_request', t.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
        return true;
      }
      const pending = codes.get(t.data.code);
      // Single use: a replayed code finds nothing.
      codes.delete(t.data.code);
      const challenge = createHash('sha256').update(t.data.code_verifier).digest('base64url');
      if (
        !pending ||
        pending.expiresAt < Date.now() ||
        pending.params.client_id !== t.data.client_id ||
        pending.params.redirect_uri !== t.data.redirect_uri ||
        pending.params.code_challenge !== challenge
      ) {
        invalid(res, 'invalid_grant', 'the code is unknown, used, expired, or not bound to this client and verifier');
        return true;
      }
      const { sub, tenantId, role, email } = pending.user;
      const claims = tenantId ? { sub, tenantId, role } : { sub, ...(email ? { email } : {}) };
      const ttlSeconds = 3600;
      send(res, 200, {
        token_type: 'Bearer',
        expires_in: ttlSeconds,
        access_token: await identity.mint(claims, { ttlSeconds }),
        id_token: await identity.mint(
          { ...claims, ...(pending.params.nonce ? { nonce: pending.params.nonce } : {}) },
          { ttlSeconds },
        ),
      });
      return true;
    }
    return false;
  }

  return { routes, handle };
}
