import { randomBytes } from 'node:crypto';
import { DomainError } from '@onsale/contracts';
import { and, eq, inArray } from 'drizzle-orm';
import type { Config } from '../config';
import type { Services } from '../context';
import { events, onsales } from '../db/schema';
import type { Clock } from '../lib/clock';
import { releasingSetKey } from './keys';
import type { RoomRedis } from './scripts';
import { allShardKeys, type ShardScope } from './shards';

/** What writing a room's settings takes: its Redis (with the room's scripts) and where its keys are. */
export type RoomScope = ShardScope & { redis: RoomRedis };

/** The statuses of an event whose waiting room must exist in Redis. */
export const ROOM_LIVE = ['scheduled', 'on_sale', 'paused', 'sold_out'] as const;

/**
 * Why Redis has no room for an event: none was scheduled (404), or Redis lost it (a restart without its data) and
 * the scheduler's next pass rebuilds it from the onsale record (503, retry in a moment). Read only on a miss.
 */
export async function missingRoom(ctx: Services, eventId: string): Promise<DomainError> {
  const [live] = await ctx.db
    .select({ eventId: onsales.eventId })
    .from(onsales)
    .innerJoin(events, eq(events.id, onsales.eventId))
    .where(and(eq(onsales.eventId, eventId), inArray(events.status, [...ROOM_LIVE])));
  return live
    ? new DomainError('waiting_room_unavailable', 'the waiting room is being restored; retry in a moment')
    : new DomainError('not_found', 'this event has no waiting room (no onsale scheduled)');
}

export interface RoomConfig {
  eventId: string;
  opensAt: Date;
  onsaleAt: Date;
  cellId: string;
  epoch: number;
  maxActive: number | null;
  rate: number;
  /** SHA-256 of the onsale's shuffle seed (fairness.ts): a join whose seed is not this one is refused as stale. */
  fairnessCommitment: string;
}

/**
 * Sets fields of a configured room's settings on every shard (one shard unless the room is sharded); a shard that
 * lost the room is left for the scheduler to rebuild whole (restoreLostRooms), not given a partial hash.
 */
async function setOnEveryShard(ctx: RoomScope, eventId: string, fields: Record<string, string | number>) {
  const args = Object.entries(fields).flat();
  await Promise.all(allShardKeys(ctx, eventId).map((k) => ctx.redis.wrUpdate(k.meta, ...args)));
}

/** Whether every shard holds the room's settings (a sharded room counts as lost when any shard lost it). */
export async function roomConfigured(ctx: Services, eventId: string): Promise<boolean> {
  const held = await Promise.all(allShardKeys(ctx, eventId).map((k) => ctx.redis.hexists(k.meta, 'onsaleAt')));
  return held.every(Boolean);
}

/** Writes (or rewrites, on reschedule) an event's waiting-room settings. It keeps whether the room is open. */
export async function configureRoom(ctx: Services, c: RoomConfig) {
  const settings = {
    opensAt: c.opensAt.getTime(),
    onsaleAt: c.onsaleAt.getTime(),
    cell: c.cellId,
    epoch: c.epoch,
    maxActive: c.maxActive ?? 0,
    rate: c.rate,
    fcommit: c.fairnessCommitment,
    closed: 0,
  };
  await Promise.all(allShardKeys(ctx, c.eventId).map((k) => ctx.redis.hset(k.meta, settings)));
  // A room made anew (first scheduled, or rebuilt after Redis lost it) gets a generation its queue tickets carry.
  const gen = randomBytes(6).toString('base64url');
  await Promise.all(allShardKeys(ctx, c.eventId).map((k) => ctx.redis.hsetnx(k.meta, 'gen', gen)));
}

export async function openRoom(ctx: Services, eventId: string) {
  await setOnEveryShard(ctx, eventId, { open: 1 });
}

/**
 * Starts releasing at the event's current R. The settings are written first, then the event joins the set of
 * releasing events, so the set never names a room that is not releasing; two calls, not a transaction, as a
 * sharded room's settings (and on a Redis Cluster any room's) live in other slots than the set.
 */
export async function startReleasing(ctx: Services, eventId: string, rate: number) {
  await setOnEveryShard(ctx, eventId, { open: 1, releasing: 1, rate, carry: 0, lastAt: ctx.clock.now().getTime() });
  await ctx.redis.sadd(releasingSetKey(ctx.prefix), eventId);
}

/** Leaves the set of releasing events first, then closes the room on every shard (the same order's reasoning). */
export async function closeRoom(ctx: Services, eventId: string) {
  await ctx.redis.srem(releasingSetKey(ctx.prefix), eventId);
  await setOnEveryShard(ctx, eventId, { releasing: 0, closed: 1 });
}

/** The controller's output: R, pause, and the sold-out flag from the cell's available seats. */
export async function setRoomControl(
  ctx: Services,
  eventId: string,
  s: { rate: number; paused: boolean; soldOut?: boolean; available?: number | null },
) {
  const fields: Record<string, string | number> = { rate: s.rate, paused: s.paused ? 1 : 0 };
  if (s.soldOut !== undefined) fields.soldOut = s.soldOut ? 1 : 0;
  if (s.available !== undefined && s.available !== null) fields.avail = s.available;
  await setOnEveryShard(ctx, eventId, fields);
}

export async function roomStats(ctx: Services, eventId: string) {
  const now = ctx.clock.now().getTime();
  const perShard = await Promise.all(
    allShardKeys(ctx, eventId).map((k) =>
      Promise.all([ctx.redis.hgetall(k.meta), ctx.redis.zcard(k.queue), ctx.redis.zcount(k.admitted, now, '+inf')]),
    ),
  );
  const meta = perShard[0]![0];
  const sum = (f: (s: (typeof perShard)[number]) => number) => perShard.reduce((a, s) => a + f(s), 0);
  const waiting = sum((s) => s[1]);
  const active = sum((s) => s[2]);
  return {
    open: meta.open === '1',
    releasing: meta.releasing === '1',
    paused: meta.paused === '1',
    soldOutForNow: meta.soldOut === '1',
    rate: Number(meta.rate ?? 0),
    waiting,
    activeShoppers: active,
    released: sum((s) => Number(s[0].released ?? 0)),
    skipped: sum((s) => Number(s[0].skipped ?? 0)),
    availableSeats: meta.avail === undefined ? null : Number(meta.avail),
  };
}

/** Keeps the room's purchase cell and epoch (carried by admission tokens) in step with the directory. */
export async function setRoomPlacement(ctx: RoomScope, eventId: string, cellId: string, epoch: number) {
  await setOnEveryShard(ctx, eventId, { cell: cellId, epoch });
}

/**
 * After an evacuation's flip: the room admits for the event's new cell and epoch, and every buyer it released who
 * collected an admission (naming the old cell) and has not let it expire collects a fresh one for the new cell on
 * their next poll, within a new claim window. Nobody loses their turn and nobody is released twice (the release
 * counters are untouched). On every shard; safe to run again. Returns how many buyers were re-admitted.
 */
export async function moveRoom(
  ctx: RoomScope & { clock: Clock; config: Pick<Config, 'ADMISSION_CLAIM_WINDOW_SECONDS'> },
  eventId: string,
  placement: { cellId: string; epoch: number },
): Promise<number> {
  await setRoomPlacement(ctx, eventId, placement.cellId, placement.epoch);
  const nowMs = ctx.clock.now().getTime();
  const claimWindowMs = ctx.config.ADMISSION_CLAIM_WINDOW_SECONDS * 1000;
  const readmitted = await Promise.all(
    allShardKeys(ctx, eventId).map((k) =>
      ctx.redis.wrReadmit(k.release, k.admitted, nowMs, claimWindowMs, k.token('')),
    ),
  );
  return readmitted.reduce((a, b) => a + b, 0);
}
