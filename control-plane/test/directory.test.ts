import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError, DirectoryFeed, EDGE_PATHS, pathPattern } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { addCell, createHarness, type Harness, scheduledEvent } from '../../test/support/control-plane';
import { loadConfig } from '../src/config';
import { MIGRATIONS_FOLDER, migrateDatabase } from '../src/db/migrate';

let h: Harness;
let t: Awaited<ReturnType<Harness['tenant']>>;

beforeAll(async () => {
  h = await createHarness({
    env: {
      RATE_LIMIT_BUYER_PER_SECOND: '1',
      RATE_LIMIT_BUYER_BURST: '3',
      RATE_LIMIT_IP_PER_SECOND: '2',
      RATE_LIMIT_IP_BURST: '5',
    },
  });
  t = await h.tenant();
});
afterAll(() => h?.close());

const newEvent = async (body: Record<string, unknown> = {}) => {
  const r = await h.req('POST', '/events', {
    token: t.manager,
    body: { name: 'E', venue: 'V', startsAt: new Date(Date.now() + 86_400_000 * 20).toISOString(), ...body },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
};

describe('cells, placement and the directory feed', () => {
  it('places a new event on the least-loaded active cell, honours pins and dedicated cells', async () => {
    await addCell(h, 'cell-a', 'http://127.0.0.1:9101', { capacity: 2 });
    await addCell(h, 'cell-b', 'http://127.0.0.1:9102', { capacity: 4 });
    await addCell(h, 'cell-c', 'http://127.0.0.1:9103', { status: 'draining' });
    const placed = [];
    for (let i = 0; i < 6; i++) placed.push((await newEvent()).cellId);
    // Load = events ÷ capacity: b (capacity 4) takes twice as many as a; draining c takes none.
    expect(placed.filter((c) => c === 'cell-a')).toHaveLength(2);
    expect(placed.filter((c) => c === 'cell-b')).toHaveLength(4);
    const cells = (await h.req('GET', '/operator/cells', { token: h.operatorToken })).body.cells;
    expect(cells.find((c: { id: string }) => c.id === 'cell-a')).toMatchObject({ events: 2, load: 1 });

    // A headline onsale: the operator dedicates cell-d; nothing else is placed there.
    await addCell(h, 'cell-d', 'http://127.0.0.1:9104', { capacity: 100 });
    const headline = await newEvent({ cellId: 'cell-b' });
    expect(headline).toMatchObject({ cellId: 'cell-b', cellPinned: true, directoryEpoch: 1 });
    const moved = await h.req('PUT', `/operator/events/${headline.id}/placement`, {
      token: h.operatorToken,
      body: { cellId: 'cell-d', dedicated: true },
    });
    expect(moved.body).toMatchObject({ cellId: 'cell-d', directoryEpoch: 2 });
    for (let i = 0; i < 3; i++) expect((await newEvent()).cellId).not.toBe('cell-d');
    // Pinning onto a draining cell is refused.
    expect(
      (await h.req('PUT', `/events/${headline.id}/placement`, { token: t.manager, body: { cellId: 'cell-c' } })).status,
    ).toBe(409);
  });

  it('serves the feed with an ETag; a poll with If-None-Match is a 304 until something changes', async () => {
    const first = await h.req('GET', '/directory');
    expect(first.status).toBe(200);
    const feed = DirectoryFeed.parse(first.body);
    expect(feed.cells.map((c) => c.id)).toEqual(expect.arrayContaining(['cell-a', 'cell-b', 'cell-c', 'cell-d']));
    const etag = first.headers.get('etag')!;
    expect(etag).toBe(`"dir-${feed.version}"`);
    expect((await h.req('GET', '/directory', { headers: { 'if-none-match': etag } })).status).toBe(304);
    await h.req('PATCH', '/operator/cells/cell-c', { token: h.operatorToken, body: { status: 'down' } });
    const changed = await h.req('GET', '/directory', { headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.body.version).toBeGreaterThan(feed.version);
    expect(changed.body.cells.find((c: { id: string }) => c.id === 'cell-c').status).toBe('down');
    const ev = await newEvent();
    const withEvent = DirectoryFeed.parse((await h.req('GET', '/directory')).body);
    expect(withEvent.events).toContainEqual({ eventId: ev.id, cellId: ev.cellId, epoch: 1 });
  });

  it('publishes an OpenAPI document', async () => {
    const doc = await h.req('GET', '/openapi.json');
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining(['/events/{eventId}/queue', '/events/{eventId}/seat-map', '/directory']),
    );
  });

  it("keeps the feed off the public edge: it lists every tenant's events and each cell's internal address", () => {
    const publicPaths = Object.values(EDGE_PATHS).flat().map(pathPattern);
    expect(publicPaths.filter((p) => p.test('/directory'))).toEqual([]);
    expect(publicPaths.some((p) => p.test('/events/{eventId}/queue'))).toBe(true);
  });
});

describe('rate limits', () => {
  it('answers 429 with Retry-After per buyer and per IP', async () => {
    await addCell(h, 'cell-rl', 'http://127.0.0.1:9105', { capacity: 1000 });
    const { eventId } = await scheduledEvent(h, t.manager, { cellId: 'cell-rl' });
    const buyer = await h.buyer('rl-1');
    const statuses = [];
    for (let i = 0; i < 5; i++)
      statuses.push(
        (
          await h.req('GET', `/events/${eventId}/queue/me`, {
            token: buyer,
            headers: { 'x-forwarded-for': '10.0.0.1' },
          })
        ).status,
      );
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    const limited = await h.req('GET', `/events/${eventId}/queue/me`, {
      token: buyer,
      headers: { 'x-forwarded-for': '10.0.0.9' },
    });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The bucket refills with time.
    h.clock.advance(2000);
    expect(
      (await h.req('GET', `/events/${eventId}/queue/me`, { token: buyer, headers: { 'x-forwarded-for': '10.0.0.9' } }))
        .status,
    ).toBe(200);
    // Per IP: many buyers from one address.
    const codes = [];
    for (let i = 0; i < 8; i++)
      codes.push(
        (
          await h.req('POST', `/events/${eventId}/queue`, {
            token: await h.buyer(`rl-ip-${i}`),
            headers: { 'x-forwarded-for': '10.0.0.2' },
          })
        ).status,
      );
    expect(codes).toContain(429);
  });

  it("charges a known token's buckets in the poll's own Redis call, and a new token's IP first", async () => {
    await addCell(h, 'cell-rl1', 'http://127.0.0.1:9106', { capacity: 1000 });
    const { eventId } = await scheduledEvent(h, t.manager, { cellId: 'cell-rl1' });
    const buyer = await h.buyer('rl-one-call');
    // Loads both scripts into Redis first, so no EVALSHA below falls back to EVAL.
    await h.req('GET', `/events/${eventId}/queue/me`, { token: await h.buyer('rl-warm') });
    const redis = h.services.redis;
    const sent = vi.spyOn(redis, 'sendCommand');
    const poll = async (ip: string) => {
      sent.mockClear();
      const r = await h.req('GET', `/events/${eventId}/queue/me`, { token: buyer, headers: { 'x-forwarded-for': ip } });
      return { status: r.status, commands: sent.mock.calls.map(([c]) => c.name) };
    };
    try {
      // First sight of the token: the IP's bucket alone, then the status script with the buyer's bucket.
      expect(await poll('10.0.1.1')).toEqual({ status: 200, commands: ['evalsha', 'evalsha'] });
      // Known now: one call in all.
      expect(await poll('10.0.1.1')).toEqual({ status: 200, commands: ['evalsha'] });
      const buckets = async () =>
        Number((await redis.hget(`${h.services.prefix}rl:buyer:rl-one-call`, 't')) ?? Number.NaN);
      const before = await buckets();
      expect(await poll('10.0.1.2')).toEqual({ status: 200, commands: ['evalsha'] });
      // The one call charged both buckets: the buyer's lost a token, and the new IP's bucket exists.
      expect(await buckets()).toBeCloseTo(before - 1, 5);
      expect(await redis.exists(`${h.services.prefix}rl:ip:10.0.1.2`)).toBe(1);
      // The buyer's burst is 3: the fourth poll is refused by that same call.
      expect(await poll('10.0.1.3')).toEqual({ status: 429, commands: ['evalsha'] });
    } finally {
      sent.mockRestore();
    }
  });
});

describe('configuration and migrations', () => {
  it('fails fast naming the variable', () => {
    expect(() => loadConfig({ REDIS_URL: 'redis://x' })).toThrow(ConfigError);
    try {
      loadConfig({
        DATABASE_URL_CONTROL_PLANE: 'postgres://x/y',
        REDIS_URL: 'redis://x',
        IDENTITY_JWKS_URL: 'http://x',
        IDENTITY_ISSUER: 'i',
        IDENTITY_AUDIENCE: 'a',
        CELL_INTERNAL_TOKEN: 'short',
        SIGNING_KEY_KEK: 'AA==',
      });
    } catch (e) {
      expect((e as Error).message).toMatch(/CELL_INTERNAL_TOKEN/);
      expect((e as Error).message).toMatch(/SIGNING_KEY_KEK/);
    }
  });

  it('applying the migrations twice is a no-op', async () => {
    await migrateDatabase(h.config.DATABASE_URL_CONTROL_PLANE);
    const r = await h.services.pool.query('select count(*)::int as n from drizzle.__drizzle_migrations');
    const journal = JSON.parse(readFileSync(resolve(MIGRATIONS_FOLDER, 'meta/_journal.json'), 'utf8'));
    expect(r.rows[0].n).toBe(journal.entries.length);
  });
});
