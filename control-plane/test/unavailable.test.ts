import { randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCell, createHarness, type Harness, scheduledEvent } from '../../test/support/control-plane';
import { startPgProxy } from '../../test/support/db-outage';
import { createSessionStore, SESSION_COOKIE } from '../src/console/session';
import { closeServices, connectServices, createServices, type Services } from '../src/context';
import { createApp } from '../src/http/app';
import { runSchedulerTick } from '../src/onsale/scheduler';

/**
 * A dependency that is down is not an error: while the control plane's PostgreSQL cannot be reached (its connections
 * cut, new ones refused, as through a crash and restart), every route of its API answers 503 with Retry-After in the
 * platform's error body, never 500, and the console a 503 page; when it is back, the same requests succeed.
 */

let h: Harness;
let t: Awaited<ReturnType<Harness['tenant']>>;
let eventId: string;
let proxy: Awaited<ReturnType<typeof startPgProxy>>;
let services: Services;
let app: ReturnType<typeof createApp>;

beforeAll(async () => {
  h = await createHarness();
  t = await h.tenant('Outage');
  const startsAt = new Date(Date.now() + 30 * 86_400_000).toISOString();
  const created = await h.req('POST', '/events', { token: t.manager, body: { name: 'Show', venue: 'Hall', startsAt } });
  expect(created.status).toBe(201);
  eventId = created.body.id;
  // A second API process of the same control plane, whose database is reached through a proxy the test can cut.
  proxy = await startPgProxy(h.config.DATABASE_URL_CONTROL_PLANE);
  services = createServices({ ...h.config, DATABASE_URL_CONTROL_PLANE: proxy.url }, { clock: h.clock });
  app = createApp(services);
});
afterAll(async () => {
  if (services) await closeServices(services);
  await proxy?.close();
  await h?.close();
});

interface Answer {
  label: string;
  status: number;
  retryAfter: string | null;
  code: string | undefined;
}
async function send(label: string, method: string, path: string, token?: string, body?: unknown): Promise<Answer> {
  const res = await app.request(path, {
    method,
    headers: {
      ...(token && { authorization: `Bearer ${token}` }),
      ...(body !== undefined && { 'content-type': 'application/json' }),
      'idempotency-key': randomUUID(),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let code: string | undefined;
  try {
    code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
  } catch {
    code = res.headers.get('x-error-code') ?? undefined;
  }
  return { label, status: res.status, retryAfter: res.headers.get('retry-after'), code };
}

describe("the control plane's API while its PostgreSQL is down", () => {
  it('answers 503 store_unavailable with Retry-After on every route, and serves again once it is back', async () => {
    const buyer = await h.buyer('outage-buyer');
    const everyday = () => [
      send('events listed', 'GET', '/events', t.viewer),
      send('an event read', 'GET', `/events/${eventId}`, t.viewer),
      send('an event created', 'POST', '/events', t.manager, {
        name: 'Another',
        venue: 'Hall',
        startsAt: new Date(Date.now() + 40 * 86_400_000).toISOString(),
      }),
      send('the onsale read', 'GET', `/events/${eventId}/onsale`, t.viewer),
      send('a buyer joining the queue', 'POST', `/events/${eventId}/queue`, buyer),
      send('the cells listed', 'GET', '/operator/cells', h.operatorToken),
    ];
    expect((await Promise.all(everyday())).map((a) => a.status)).not.toContain(503);

    proxy.down();
    for (const answer of await Promise.all(everyday())) {
      expect(answer).toEqual({ label: answer.label, status: 503, retryAfter: '5', code: 'store_unavailable' });
    }

    // Every route the API documents, as each kind of caller would send it: none is a 500, every 5xx says when.
    const doc = (await (await app.request('/openapi.json')).json()) as { paths: Record<string, object> };
    const ids: Record<string, string> = { eventId, id: eventId, tenantId: t.id };
    const answers: Answer[] = [];
    for (const [template, methods] of Object.entries(doc.paths)) {
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? randomUUID());
      for (const method of Object.keys(methods)) {
        const token = path.startsWith('/operator/') ? h.operatorToken : t.owner;
        const body = method === 'post' || method === 'put' || method === 'patch' ? {} : undefined;
        answers.push(await send(`${method.toUpperCase()} ${template}`, method.toUpperCase(), path, token, body));
      }
    }
    const serverErrors = answers.filter((a) => a.status >= 500);
    expect(serverErrors.filter((a) => a.status !== 503 || a.retryAfter === null)).toEqual([]);
    expect(serverErrors.length).toBeGreaterThanOrEqual(10);

    // The console, a promoter's events page (its session lives in Redis, its events in PostgreSQL): a 503 page that
    // says when to come back, not a 500.
    const page = await app.request('/console', { headers: { cookie: await consoleSession() } });
    expect({ status: page.status, retryAfter: page.headers.get('retry-after') }).toEqual({
      status: 503,
      retryAfter: '5',
    });
    expect(await page.text()).toContain('try again in a few seconds');

    proxy.up();
    const back = await Promise.all(everyday());
    expect(back.map((a) => a.status)).not.toContain(503);
    expect(back.map((a) => a.status)).not.toContain(500);
    // No connection was lost to the outage: a transaction whose BEGIN met a cut connection gave its client back
    // (drizzle's did not: patches/drizzle-orm@0.45.4.patch), so the pool is whole again.
    expect(services.pool.totalCount - services.pool.idleCount).toBe(0);
  });
});

describe("the control plane's API while its Redis hangs", () => {
  it('answers a joining buyer 503 store_unavailable with Retry-After before the router would give up on it (5 s), and lets them join once Redis answers', async () => {
    await addCell(h, 'cell-hung-redis');
    const { eventId: open } = await scheduledEvent(h, t.manager, { opensInMs: 0, onsaleInMs: 120_000 });
    await runSchedulerTick(h.services); // opens the room
    // A second API process of the same control plane, whose Redis is reached through a proxy the test can freeze:
    // its connection stays open and nothing comes back, as from a server stopped with SIGSTOP.
    const redis = await startPgProxy(h.config.REDIS_URL);
    const hung = createServices({ ...h.config, REDIS_URL: redis.url }, { clock: h.clock });
    await connectServices(hung);
    const api = createApp(hung);
    const join = (buyer: string) =>
      Promise.race([
        api.request(`/events/${open}/queue`, { method: 'POST', headers: { authorization: `Bearer ${buyer}` } }),
        new Promise<'no answer'>((r) => setTimeout(() => r('no answer'), 4_000)),
      ]);
    try {
      expect(((await join(await h.buyer('before'))) as Response).status).toBe(200);
      redis.freeze();
      const buyer = await h.buyer('during');
      const during = await join(buyer);
      expect(during).not.toBe('no answer');
      const refused = during as Response;
      expect({ status: refused.status, retryAfter: refused.headers.get('retry-after') }).toEqual({
        status: 503,
        retryAfter: '5',
      });
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('store_unavailable');
      redis.thaw();
      expect(((await join(buyer)) as Response).status).toBe(200);
    } finally {
      redis.thaw();
      await closeServices(hung);
      await redis.close();
    }
  });
});

/** A signed-in manager of the tenant, made by the console's own session store (the OIDC sign-in has its own test). */
async function consoleSession(): Promise<string> {
  const sessions = createSessionStore(services, { ttlSeconds: 600, secure: false });
  const mint = new Hono();
  mint.get('/', async (c) => {
    await sessions.create(c, { sub: `manager@${t.id.slice(0, 8)}`, tenantId: t.id, role: 'manager' });
    return c.text('ok');
  });
  const res = await mint.request('/');
  return `${SESSION_COOKIE}=${/onsale_console=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1]}`;
}
