import { Cluster, type Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCell, createHarness, type Harness, scheduledEvent } from '../../test/support/control-plane';
import { deleteClusterKeys, redisClusterNodes } from '../../test/support/redis-cluster';
import { clusterReady } from '../src/waiting-room/cluster-client';
import { pseudonymOf, roomFairness, shuffleKey } from '../src/waiting-room/fairness';
import { joinQueue } from '../src/waiting-room/join';
import { releaseStep } from '../src/waiting-room/release';
import { moveRoom, openRoom, roomStats, setRoomControl, startReleasing } from '../src/waiting-room/room';
import { shardOf } from '../src/waiting-room/shards';
import { queueStatus } from '../src/waiting-room/status';

/**
 * The waiting room's fairness and exactly-once admission, for a room of one shard on a single Redis and for a room
 * of three shards on a real Redis Cluster of three primaries (scripts/lib/redis-cluster.sh): the same tests, the
 * same answers. The room is driven through its verbs (join, poll, release step), as the API and the worker do.
 */
const CASES = [
  { name: 'one shard on a single Redis', shards: 1, cluster: false },
  { name: 'three shards on a Redis Cluster of three primaries', shards: 3, cluster: true },
] as const;

const buyer = (sub: string) => ({ kind: 'buyer' as const, sub });

describe.each(CASES)('waiting room, $name', ({ shards, cluster }) => {
  let h: Harness;
  let manager: string;
  let clusterRedis: Redis | undefined;

  beforeAll(async () => {
    // On the cluster, the services' Redis is the one the process configuration makes (REDIS_CLUSTER_NODES).
    const nodes = cluster ? redisClusterNodes().map((n) => `${n.host}:${n.port}`) : [];
    h = await createHarness({
      env: {
        WAITING_ROOM_SHARDS: String(shards),
        WAITING_ROOM_ABANDON_SECONDS: '3600',
        ...(cluster ? { REDIS_CLUSTER_NODES: nodes.join(',') } : {}),
      },
    });
    if (cluster) {
      expect(h.services.redis).toBeInstanceOf(Cluster);
      await clusterReady(h.services.redis);
      clusterRedis = h.services.redis;
    }
    manager = (await h.tenant()).manager;
    await addCell(h, `cell-shards-${shards}`);
  }, 60_000);
  afterAll(async () => {
    if (clusterRedis) await deleteClusterKeys(clusterRedis, h.config.REDIS_KEY_PREFIX);
    await h?.close();
  });

  /** A scheduled onsale whose room opens in a minute; released at `rate` buyers per second once started. */
  async function room(rate: number) {
    const { eventId } = await scheduledEvent(h, manager, { opensInMs: 60_000, onsaleInMs: 120_000 });
    const start = async () => {
      h.clock.advance(60_000);
      await openRoom(h.services, eventId);
      await startReleasing(h.services, eventId, rate);
      await setRoomControl(h.services, eventId, { rate, paused: false });
    };
    return { eventId, start };
  }

  /** Release steps one second apart until the queue is empty; each step's buyers, in the order the step gave. */
  async function drain(eventId: string, rate: number) {
    const steps: string[][] = [];
    for (let i = 0; i < 100; i++) {
      h.clock.advance(1000);
      const r = await releaseStep(h.services, eventId);
      if (r.released.length === 0) break;
      expect(r.released.length).toBeLessThanOrEqual(rate);
      steps.push(r.released);
    }
    return steps;
  }

  it('spreads buyers over the shards by their id', () => {
    const counts = Array.from({ length: shards }, () => 0);
    for (let i = 0; i < 3000; i++) counts[shardOf(`spread-${i}`, shards)]!++;
    for (const c of counts) expect(Math.abs(c - 3000 / shards)).toBeLessThan(200);
  });

  it('admits early arrivals in the order of the committed shuffle, then later ones in arrival order, exactly R per step', async () => {
    const rate = 7;
    const { eventId, start } = await room(rate);
    const early = Array.from({ length: 40 }, (_, i) => `early-${i}`);
    for (const b of early) expect((await joinQueue({ ctx: h.services, actor: buyer(b), eventId })).joined).toBe(true);
    await start();
    // Later arrivals a millisecond apart: the sharded room orders arrivals by their millisecond.
    const late = Array.from({ length: 20 }, (_, i) => `late-${i}`);
    for (const b of late) {
      h.clock.advance(1);
      await joinQueue({ ctx: h.services, actor: buyer(b), eventId });
    }
    const f = (await roomFairness(h.services, eventId))!;
    const key = (b: string) => shuffleKey(f.seed, pseudonymOf(f.salt, b));
    const expected = [...[...early].sort((a, b) => key(a) - key(b)), ...late];
    expect(expected.slice(0, 40)).not.toEqual(early); // shuffled (the chance of identity is 1/40!)

    const steps = await drain(eventId, rate);
    // Exactly R per step while the queue lasts, the rest in the last step.
    expect(steps.map((s) => s.length)).toEqual([...Array.from({ length: 8 }, () => 7), 4]);
    expect(steps.flat()).toEqual(expected);
    expect(new Set(steps.flat()).size).toBe(60);
    const stats = await roomStats(h.services, eventId);
    expect(stats).toMatchObject({ waiting: 0, released: 60, skipped: 0 });
  });

  it('release workers stepping at once share R: nobody admitted twice, nobody passed over, the global order kept', async () => {
    const rate = 25;
    const { eventId, start } = await room(rate);
    await start();
    const all = Array.from({ length: 200 }, (_, i) => `race-${String(i).padStart(3, '0')}`);
    for (const b of all) {
      h.clock.advance(1);
      await joinQueue({ ctx: h.services, actor: buyer(b), eventId });
    }
    const released: string[] = [];
    for (let tick = 0; tick < 6; tick++) {
      h.clock.advance(1000);
      const steps = await Promise.all(Array.from({ length: 4 }, () => releaseStep(h.services, eventId)));
      const inTick = steps.flatMap((s) => s.released);
      expect(inTick.length).toBe(rate);
      released.push(...inTick);
    }
    expect(new Set(released).size).toBe(released.length);
    expect([...released].sort()).toEqual(all.slice(0, 6 * rate));
  });

  it('a released buyer collects one admission however many polls race for it; the others still wait', async () => {
    const { eventId, start } = await room(2);
    await start();
    const subs = ['claim-a', 'claim-b', 'claim-c', 'claim-d'];
    for (const b of subs) {
      h.clock.advance(1);
      await joinQueue({ ctx: h.services, actor: buyer(b), eventId });
    }
    h.clock.advance(1000);
    expect((await releaseStep(h.services, eventId)).released).toEqual(['claim-a', 'claim-b']);
    for (const b of ['claim-a', 'claim-b']) {
      const polls = await Promise.all(
        Array.from({ length: 8 }, () => queueStatus({ ctx: h.services, actor: buyer(b), eventId })),
      );
      expect(polls.every((p) => p.status === 'released')).toBe(true);
      expect(new Set(polls.map((p) => p.admission!.jti)).size).toBe(1);
      expect(new Set(polls.map((p) => p.admission!.token)).size).toBe(1);
    }
    for (const b of ['claim-c', 'claim-d']) {
      const s = await queueStatus({ ctx: h.services, actor: buyer(b), eventId });
      expect(s).toMatchObject({ status: 'waiting', admission: null });
    }
  });

  it('the bot report reads the room from its shards: the fairness seed counts as revealed once the room opens', async () => {
    const { eventId, start } = await room(5);
    const revealed = async () => {
      const r = await h.req('GET', `/events/${eventId}/bot-report`, { token: manager });
      expect(r.status).toBe(200);
      return r.body.fairness.revealed;
    };
    expect(await revealed()).toBe(false);
    await start();
    expect(await revealed()).toBe(true);
  });

  it('an evacuation moves every shard: buyers who collected an admission for the old cell collect one for the new cell', async () => {
    const { eventId, start } = await room(20);
    await start();
    const subs = Array.from({ length: 12 }, (_, i) => `moved-${i}`);
    for (const b of subs) {
      h.clock.advance(1);
      await joinQueue({ ctx: h.services, actor: buyer(b), eventId });
    }
    h.clock.advance(1000);
    expect((await releaseStep(h.services, eventId)).released).toEqual(subs);
    const collected = subs.slice(0, 8);
    expect(new Set(collected.map((b) => shardOf(b, shards))).size).toBe(shards);
    const before = new Map<string, { jti: string; purchaseCell: string; directoryEpoch: number }>();
    for (const b of collected) {
      const s = await queueStatus({ ctx: h.services, actor: buyer(b), eventId });
      expect(s.status).toBe('released');
      before.set(b, s.admission!);
    }
    const source = before.get(collected[0]!)!;
    const target = { cellId: `${source.purchaseCell}-target`, epoch: source.directoryEpoch + 1 };

    expect(await moveRoom(h.services, eventId, target)).toBe(collected.length);
    for (const b of subs) {
      const s = await queueStatus({ ctx: h.services, actor: buyer(b), eventId });
      expect(s.status, b).toBe('released');
      expect(s.admission, b).toMatchObject({ purchaseCell: target.cellId, directoryEpoch: target.epoch });
      if (before.has(b)) expect(s.admission!.jti, b).not.toBe(before.get(b)!.jti);
    }
    // Re-admission hands out new admissions for the same turns: nobody counts as released twice.
    expect(await roomStats(h.services, eventId)).toMatchObject({ waiting: 0, released: subs.length });
  });

  it(`answers each waiter's global place from their own shard, ${shards === 1 ? 'exactly' : 'within 4 standard deviations'}`, async () => {
    const { eventId, start } = await room(1);
    await start();
    const n = 600;
    const order = Array.from({ length: n }, (_, i) => `place-${i}`);
    for (const b of order) {
      h.clock.advance(1);
      await joinQueue({ ctx: h.services, actor: buyer(b), eventId });
    }
    let worst = 0;
    for (const [ahead, b] of order.entries()) {
      const s = await queueStatus({ ctx: h.services, actor: buyer(b), eventId });
      const err = Math.abs(s.peopleAhead! - ahead);
      // K × (rank on the buyer's shard) estimates the N ahead with a standard deviation of √(N(K−1)).
      expect(err).toBeLessThanOrEqual(4 * Math.sqrt(ahead * (shards - 1)) + shards);
      expect(s.position).toBe(s.peopleAhead! + 1);
      worst = Math.max(worst, err);
    }
    if (shards === 1) expect(worst).toBe(0);
    else expect(worst).toBeGreaterThan(0); // an estimate, and the bound above is what holds it
  });
});
