import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCell, createHarness, type Harness, scheduledEvent } from '../../test/support/control-plane';
import { deleteClusterKeys, redisClusterClient } from '../../test/support/redis-cluster';
import { joinQueue } from '../src/waiting-room/join';
import { releaseStep } from '../src/waiting-room/release';
import { configureRoom, openRoom, setRoomControl, startReleasing } from '../src/waiting-room/room';
import { allShardKeys } from '../src/waiting-room/shards';
import { queueStatus } from '../src/waiting-room/status';

/**
 * Polls answered from a queue ticket and the room's released-up-to marks (GET queue/poll): no Redis call per poll,
 * a turn announced late by at most the marks' interval and never early, the admission still collected once from
 * Redis. For a room of one shard on a single Redis, and of three shards on a Redis Cluster of three primaries.
 */
const CASES = [
  { name: 'one shard on a single Redis', shards: 1, cluster: false },
  { name: 'three shards on a Redis Cluster', shards: 3, cluster: true },
] as const;
const INTERVAL = 250;
const buyer = (sub: string) => ({ kind: 'buyer' as const, sub });

/** Counts the commands this process sends through a (real) Redis client. */
function counted(redis: Redis) {
  const counter = { n: 0 };
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
    counter.n++;
    return send(...args);
  }) as Redis['sendCommand'];
  return counter;
}

describe.each(CASES)('queue tickets, $name', ({ shards, cluster }) => {
  let h: Harness;
  let manager: string;
  let clusterRedis: Redis | undefined;
  let commands: { n: number };

  beforeAll(async () => {
    clusterRedis = cluster ? await redisClusterClient() : undefined;
    h = await createHarness({
      env: {
        WAITING_ROOM_SHARDS: String(shards),
        WAITING_ROOM_MARK_INTERVAL_MS: String(INTERVAL),
        WAITING_ROOM_ABANDON_SECONDS: '60',
      },
      overrides: clusterRedis ? { redis: clusterRedis } : {},
    });
    commands = counted(h.services.redis);
    manager = (await h.tenant()).manager;
    await addCell(h, `cell-ticket-${shards}`);
  }, 60_000);
  afterAll(async () => {
    if (clusterRedis) await deleteClusterKeys(clusterRedis, h.config.REDIS_KEY_PREFIX);
    await h?.close();
  });

  const poll = (eventId: string, ticket: string) =>
    h.req('GET', `/events/${eventId}/queue/poll`, { headers: { 'x-queue-ticket': ticket } });

  /** An open room releasing `rate` per second, with `n` buyers who joined a millisecond apart; their tickets. */
  async function queue(prefix: string, n: number, rate: number) {
    const { eventId } = await scheduledEvent(h, manager, { opensInMs: 0, onsaleInMs: 0 });
    await openRoom(h.services, eventId);
    await startReleasing(h.services, eventId, rate);
    await setRoomControl(h.services, eventId, { rate, paused: false });
    const subs = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
    const tickets: string[] = [];
    for (const sub of subs) {
      h.clock.advance(1);
      const s = await joinQueue({ ctx: h.services, actor: buyer(sub), eventId });
      expect(s.ticket).toMatch(/^qt1\./);
      tickets.push(s.ticket!);
    }
    return { eventId, subs, tickets };
  }

  it("answers a waiting buyer's poll from the ticket, as the Redis poll would, with no Redis call per poll", async () => {
    const { eventId, subs, tickets } = await queue('place', 12, 5);
    h.clock.advance(INTERVAL);
    for (const [i, t] of tickets.entries()) {
      const r = await poll(eventId, t);
      expect(r.status).toBe(200);
      const viaRedis = await queueStatus({ ctx: h.services, actor: buyer(subs[i]!), eventId });
      expect(r.body).toMatchObject({
        status: 'waiting',
        roomOpen: true,
        position: viaRedis.position,
        peopleAhead: viaRedis.peopleAhead,
        refreshTicket: false,
      });
      if (shards === 1) expect(r.body.position).toBe(i + 1);
    }
    // Within an interval: 500 polls, not one Redis command.
    const before = commands.n;
    for (let i = 0; i < 500; i++) expect((await poll(eventId, tickets[i % 12]!)).status).toBe(200);
    expect(commands.n - before).toBe(0);
    // The next interval: the polls share one read of the marks (one HMGET per shard, and the seen buyers' batch per shard).
    h.clock.advance(INTERVAL);
    const next = commands.n;
    await Promise.all(Array.from({ length: 200 }, (_, i) => poll(eventId, tickets[i % 12]!)));
    expect(commands.n - next).toBeGreaterThan(0);
    expect(commands.n - next).toBeLessThanOrEqual(2 * shards);
  });

  it("joins and polls over HTTP, the rate limits charged in the call on the buyer's shard", async () => {
    const { eventId } = await queue('http', 0, 1);
    const token = await h.buyer('http-buyer');
    const joined = await h.req('POST', `/events/${eventId}/queue`, { token });
    expect(joined.status).toBe(200);
    expect(joined.body).toMatchObject({ status: 'waiting', position: 1, ticket: expect.stringMatching(/^qt1\./) });
    const me = await h.req('GET', `/events/${eventId}/queue/me`, { token });
    expect(me.body).toMatchObject({ status: 'waiting', position: 1 });
    h.clock.advance(INTERVAL);
    expect((await poll(eventId, me.body.ticket)).body).toMatchObject({ status: 'waiting', position: 1 });
  });

  it('a stale mark says "waiting" up to an interval late, never early; the admission is collected once, from Redis', async () => {
    const { eventId, subs, tickets } = await queue('turn', 6, 2);
    h.clock.advance(1000);
    expect((await poll(eventId, tickets[0]!)).body.status).toBe('waiting');
    const step = await releaseStep(h.services, eventId);
    expect(step.released).toEqual(subs.slice(0, 2));
    // The marks this process read before the step are still current for it: the released buyers hear "waiting".
    h.clock.advance(INTERVAL - 1);
    const stale = await poll(eventId, tickets[0]!);
    expect(stale.body).toMatchObject({ status: 'waiting' });
    expect(stale.body.markAgeMs).toBeLessThan(INTERVAL);
    // One interval on: their turn; the others are one step closer and still waiting.
    h.clock.advance(1);
    for (const t of tickets.slice(0, 2)) expect((await poll(eventId, t)).body.status).toBe('your_turn');
    for (const t of tickets.slice(2)) {
      const r = (await poll(eventId, t)).body;
      expect(r.status).toBe('waiting');
    }
    if (shards === 1) expect((await poll(eventId, tickets[2]!)).body.position).toBe(1);
    // Collecting: racing claims of one buyer get one admission (one jti, one token).
    const claims = await Promise.all(
      Array.from({ length: 6 }, () => queueStatus({ ctx: h.services, actor: buyer(subs[0]!), eventId })),
    );
    expect(claims.every((c) => c.status === 'released')).toBe(true);
    expect(new Set(claims.map((c) => c.admission!.jti)).size).toBe(1);
    // A buyer whose turn has not come cannot collect, whatever their ticket or the marks say.
    expect((await queueStatus({ ctx: h.services, actor: buyer(subs[2]!), eventId })).admission).toBeNull();
  });

  it("ticket polls keep a buyer's place; a buyer who stopped polling is skipped", async () => {
    const { eventId, subs, tickets } = await queue('seen', 2, 10);
    // Only the first buyer polls, with the ticket, every 20 s for 100 s (the room skips after 60 s of silence).
    for (let s = 0; s < 5; s++) {
      h.clock.advance(20_000);
      expect((await poll(eventId, tickets[0]!)).status).toBe(200);
    }
    // The seen buyers are written with the next read of the marks.
    h.clock.advance(INTERVAL);
    await poll(eventId, tickets[0]!);
    const step = await releaseStep(h.services, eventId);
    expect(step.released).toEqual([subs[0]]);
    expect(step.skipped).toBe(1);
    h.clock.advance(INTERVAL);
    expect((await poll(eventId, tickets[1]!)).body.status).toBe('your_turn');
    expect((await queueStatus({ ctx: h.services, actor: buyer(subs[1]!), eventId })).status).toBe('skipped');
  });

  it("refuses a forged, altered or missing ticket and another event's; a rebuilt room's ticket asks for a new one", async () => {
    const a = await queue('forge-a', 1, 1);
    const b = await queue('forge-b', 1, 1);
    const t = a.tickets[0]!;
    const [, claims, mac] = t.split('.');
    const raised = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(claims!, 'base64url').toString()), score: 0 }),
    ).toString('base64url');
    for (const bad of [`qt1.${raised}.${mac}`, `${t.slice(0, -2)}xx`, 'qt1.e30.AAAA', 'not-a-ticket']) {
      const r = await poll(a.eventId, bad);
      expect(r.status).toBe(401);
      expect(r.body.error).toMatchObject({ code: 'unauthenticated', details: { field: 'x-queue-ticket' } });
    }
    const missing = await h.req('GET', `/events/${a.eventId}/queue/poll`);
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body.error)).toContain('x-queue-ticket');
    const other = await poll(b.eventId, t);
    expect(other.status).toBe(403);
    expect(other.body.error.details).toEqual({ field: 'x-queue-ticket' });

    // Redis lost the room and it was built anew: the old ticket places nobody, and says so.
    for (const k of allShardKeys(h.services, a.eventId)) await h.services.redis.del(k.meta);
    const now = h.clock.now();
    await configureRoom(h.services, {
      eventId: a.eventId,
      opensAt: now,
      onsaleAt: now,
      cellId: `cell-ticket-${shards}`,
      epoch: 1,
      maxActive: null,
      rate: 1,
      fairnessCommitment: 'c',
    });
    h.clock.advance(INTERVAL);
    expect((await poll(a.eventId, t)).body).toMatchObject({ status: 'waiting', refreshTicket: true });
  });
});
