import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@onsale/contracts';
import { type Config, loadConfig } from '@onsale/control-plane/config';
import { createSessionStore, SESSION_COOKIE } from '@onsale/control-plane/console/session';
import { closeServices, createServices, type ServiceOverrides, type Services } from '@onsale/control-plane/context';
import { startDevIdentityServer } from '@onsale/control-plane/dev-identity/server';
import { createApp } from '@onsale/control-plane/http/app';
import type { App } from '@onsale/control-plane/http/env';
import { ManualClock } from '@onsale/control-plane/lib/clock';
import { buildEventLoad } from '@onsale/control-plane/onsale/load';
import { Hono } from 'hono';
import { createTestDatabase } from './db';
import { serviceEnv } from './services';

export interface Harness {
  services: Services;
  app: App;
  clock: ManualClock;
  config: Config;
  dbName: string;
  redisDb: number;
  identity: Awaited<ReturnType<typeof startDevIdentityServer>>['identity'];
  operatorToken: string;
  req(
    method: string,
    path: string,
    o?: { token?: string; body?: unknown; raw?: string; contentType?: string; headers?: Record<string, string> },
    // biome-ignore lint/suspicious/noExplicitAny: test bodies are inspected ad hoc
  ): Promise<{ status: number; body: any; headers: Headers }>;
  tenant(name?: string): Promise<{ id: string; owner: string; manager: string; viewer: string }>;
  buyer(sub: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * A control plane on its own database (CREATE DATABASE cp_test_<random>, migrated) and its own
 * Redis DB index + key prefix, with a dev identity issuer serving a real JWKS over HTTP.
 */
export async function createHarness(
  o: { env?: Record<string, string>; overrides?: ServiceOverrides } = {},
): Promise<Harness> {
  const redisUrl = serviceEnv().REDIS_URL!;
  const db = await createTestDatabase('cp_test', 'control-plane');
  const dbName = db.name;
  const dbUrl = db.url;

  const redisDb = 1 + Math.floor(Math.random() * 15);
  const prefix = `cpt:${randomBytes(4).toString('hex')}:`;
  const idp = await startDevIdentityServer({ alg: 'RS256' });
  const config = loadConfig({
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATABASE_URL_CONTROL_PLANE: dbUrl,
    REDIS_URL: (() => {
      const u = new URL(redisUrl);
      u.pathname = `/${redisDb}`;
      return u.toString();
    })(),
    REDIS_KEY_PREFIX: prefix,
    IDENTITY_JWKS_URL: idp.jwksUrl,
    IDENTITY_ISSUER: idp.identity.issuer,
    IDENTITY_AUDIENCE: idp.identity.audience,
    CELL_INTERNAL_TOKEN: 'test-cell-internal-token-0123456789',
    SIGNING_KEY_KEK: randomBytes(32).toString('base64'),
    RATE_LIMIT_IP_PER_SECOND: '100000',
    RATE_LIMIT_IP_BURST: '100000',
    RATE_LIMIT_BUYER_PER_SECOND: '100000',
    RATE_LIMIT_BUYER_BURST: '100000',
    TRUST_PROXY: 'true',
    LOAD_RETRY_BASE_MS: '1000',
    ...o.env,
  });
  const clock = new ManualClock(Date.now());
  const services = createServices(config, {
    clock,
    log: createLogger({ service: 'control-plane' }, config.LOG_LEVEL),
    ...o.overrides,
  });
  await services.keys.ensureKey();
  const app = createApp(services);
  const operatorToken = await idp.identity.operator('op-1');

  const req: Harness['req'] = async (method, path, opt = {}) => {
    const headers: Record<string, string> = { ...(opt.headers ?? {}) };
    if (opt.token) headers.authorization = `Bearer ${opt.token}`;
    let body: string | undefined;
    if (opt.raw !== undefined) {
      body = opt.raw;
      headers['content-type'] = opt.contentType ?? 'text/csv';
    } else if (opt.body !== undefined) {
      body = JSON.stringify(opt.body);
      headers['content-type'] = 'application/json';
    }
    const res = await app.request(path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {}
    return { status: res.status, body: parsed, headers: res.headers };
  };

  return {
    services,
    app,
    clock,
    config,
    dbName,
    redisDb,
    identity: idp.identity,
    operatorToken,
    req,
    async tenant(name = 'Promoter') {
      const r = await req('POST', '/operator/tenants', { token: operatorToken, body: { name } });
      if (r.status !== 201) throw new Error(`tenant: ${r.status} ${JSON.stringify(r.body)}`);
      const id = r.body.id as string;
      const [owner, manager, viewer] = await Promise.all(
        (['owner', 'manager', 'viewer'] as const).map((role) =>
          idp.identity.promoter({ sub: `${role}@${id.slice(0, 8)}`, tenantId: id, role }),
        ),
      );
      return { id, owner: owner!, manager: manager!, viewer: viewer! };
    },
    buyer: (sub) => idp.identity.buyer(sub),
    async close() {
      // Remove this file's Redis keys (its prefix); tests delete the revocation keys they write.
      const r = services.redis;
      let cursor = '0';
      do {
        const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length) await r.del(...keys);
      } while (cursor !== '0');
      await closeServices(services);
      await idp.close();
      await db.drop();
    },
  };
}

/** Registers a cell and returns its id. */
export async function addCell(
  h: Harness,
  id: string,
  baseUrl = 'http://127.0.0.1:9',
  extra: Record<string, unknown> = {},
) {
  const r = await h.req('POST', '/operator/cells', {
    token: h.operatorToken,
    body: { id, baseUrl, region: 'eu-west-1', ...extra },
  });
  if (r.status !== 201) throw new Error(`cell: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** What the control plane sends a cell when it loads one of its events (seat map, prices, sale window). */
export function eventLoad(h: Harness, eventId: string) {
  return buildEventLoad(h.services, eventId);
}

export function smallSeatMap(n = 20, tier = 'A') {
  return {
    tiers: [{ code: tier, name: 'Stalls', price: 7500, currency: 'eur' }],
    seats: Array.from({ length: n }, (_, i) => ({
      section: 'S1',
      row: String.fromCharCode(65 + Math.floor(i / 10)),
      seat: String((i % 10) + 1),
      tier,
    })),
  };
}

/** Creates an event with a seat map and (optionally) schedules its onsale relative to the harness clock. */
export async function scheduledEvent(
  h: Harness,
  token: string,
  o: {
    seats?: number;
    opensInMs?: number;
    onsaleInMs?: number;
    maxReleaseRate?: number;
    minReleaseRate?: number;
    maxActiveShoppers?: number;
    cellId?: string;
    /** General-admission areas beside the seats, of the seat map's tier. */
    gaAreas?: { name: string; capacity: number; tier: string }[];
  } = {},
) {
  const now = h.clock.now().getTime();
  const ev = await h.req('POST', '/events', {
    token,
    body: {
      name: 'Gig',
      venue: 'Hall',
      startsAt: new Date(now + 30 * 86_400_000).toISOString(),
      ...(o.cellId ? { cellId: o.cellId } : {}),
    },
  });
  if (ev.status !== 201) throw new Error(`event: ${ev.status} ${JSON.stringify(ev.body)}`);
  const eventId = ev.body.id as string;
  const sm = await h.req('PUT', `/events/${eventId}/seat-map`, {
    token,
    body: {
      ...smallSeatMap(o.seats ?? 20),
      ...(o.gaAreas ? { gaAreas: o.gaAreas } : {}),
    },
  });
  if (sm.status !== 200) throw new Error(`seat map: ${sm.status} ${JSON.stringify(sm.body)}`);
  const on = await h.req('PUT', `/events/${eventId}/onsale`, {
    token,
    body: {
      roomOpensAt: new Date(now + (o.opensInMs ?? 60_000)).toISOString(),
      onsaleAt: new Date(now + (o.onsaleInMs ?? 120_000)).toISOString(),
      perBuyerLimit: 4,
      maxReleaseRate: o.maxReleaseRate ?? 100,
      ...(o.minReleaseRate !== undefined ? { minReleaseRate: o.minReleaseRate } : {}),
      ...(o.maxActiveShoppers !== undefined ? { maxActiveShoppers: o.maxActiveShoppers } : {}),
    },
  });
  if (on.status !== 200) throw new Error(`onsale: ${on.status} ${JSON.stringify(on.body)}`);
  return { eventId, event: ev.body, onsale: on.body };
}

export interface FakeCell {
  url: string;
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are inspected ad hoc
  loads: { auth: string | undefined; body: any }[];
  /** Answer the next N load requests with this status. */
  refuse(n: number, status?: number): void;
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are inspected ad hoc
  signals: any;
  close(): Promise<void>;
}

/** A node:http stand-in for a cell's internal API (load + signals), used only for failure modes and signal sources. */
export async function startFakeCell(cellId: string): Promise<FakeCell> {
  let refusals = 0;
  let refuseStatus = 503;
  const loaded = new Map<string, string>();
  const state: FakeCell = {
    url: '',
    loads: [],
    refuse(n, status = 503) {
      refusals = n;
      refuseStatus = status;
    },
    signals: {
      cellId,
      measuredAt: new Date().toISOString(),
      holdLatencyP99Ms: 100,
      commitLatencyP99Ms: 20,
      lockWaits: 0,
      connectionUse: 0.2,
      outboxAgeMs: 50,
      consumerLag: 0,
      activeHolds: 0,
      expiryDelayMs: 0,
      availableSeats: {},
    },
    close: async () => {},
  };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.headers.authorization !== 'Bearer test-cell-internal-token-0123456789')
      return send(401, { error: { code: 'unauthenticated', message: 'bad token' } });
    if (req.method === 'GET' && req.url === '/internal/signals')
      return send(200, { ...state.signals, measuredAt: new Date().toISOString() });
    const m = /^\/internal\/events\/([0-9a-f-]{36})$/.exec(req.url ?? '');
    if (req.method === 'PUT' && m) {
      const text = Buffer.concat(chunks).toString('utf8');
      const body = JSON.parse(text);
      state.loads.push({ auth: req.headers.authorization, body });
      if (refusals > 0) {
        refusals--;
        return send(refuseStatus, { error: { code: 'cell_unavailable', message: 'cell is warming up' } });
      }
      const seatsKey = JSON.stringify(body.seats);
      const prev = loaded.get(m[1]!);
      if (prev && prev !== seatsKey) return send(409, { error: { code: 'conflict', message: 'different seats' } });
      loaded.set(m[1]!, seatsKey);
      return send(200, { eventId: m[1], seats: body.seats.length, created: !prev });
    }
    send(404, { error: { code: 'not_found', message: 'not found' } });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () => new Promise((r) => server.close(() => r()));
  return state;
}

/**
 * A console session of one of the tenant's promoters, made by the console's own store (the OIDC sign-in is driven in
 * a browser by test/e2e/console.test.ts): pages read and forms posted with its cookie and CSRF token.
 */
export async function consoleSession(
  h: Harness,
  tenant: { id: string },
  role: 'owner' | 'manager' | 'viewer' = 'manager',
) {
  const sessions = createSessionStore(h.services, { ttlSeconds: 600, secure: false });
  const mint = new Hono();
  mint.get('/', async (c) => {
    await sessions.create(c, { sub: `${role}@${tenant.id.slice(0, 8)}`, tenantId: tenant.id, role });
    return c.text('ok');
  });
  const res = await mint.request('/');
  const cookie = `${SESSION_COOKIE}=${/onsale_console=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1]}`;
  const team = await (await h.app.request('/console/team', { headers: { cookie } })).text();
  const csrf = /<meta name="csrf-token" content="([^"]+)"/.exec(team)?.[1] ?? '';
  const get = async (path: string) => {
    const r = await h.app.request(path, { headers: { cookie } });
    return { status: r.status, text: await r.text() };
  };
  const post = async (path: string, form: Record<string, string> = {}) => {
    const r = await h.app.request(path, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...form, _csrf: csrf }).toString(),
    });
    return { status: r.status, location: r.headers.get('location'), text: await r.text() };
  };
  return { get, post };
}
