import { DomainError } from '@onsale/contracts';
import { and, eq, inArray } from 'drizzle-orm';
import type { Services } from '../context';
import { events, onsales } from '../db/schema';
import { releasingSetKey, roomKeys } from './keys';

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

/** Writes (or rewrites, on reschedule) an event's waiting-room settings. It keeps whether the room is open. */
export async function configureRoom(ctx: Services, c: RoomConfig) {
  const k = roomKeys(ctx.prefix, c.eventId);
  await ctx.redis.hset(k.meta, {
    opensAt: c.opensAt.getTime(),
    onsaleAt: c.onsaleAt.getTime(),
    cell: c.cellId,
    epoch: c.epoch,
    maxActive: c.maxActive ?? 0,
    rate: c.rate,
    fcommit: c.fairnessCommitment,
    closed: 0,
  });
}

export async function openRoom(ctx: Services, eventId: string) {
  await ctx.redis.hset(roomKeys(ctx.prefix, eventId).meta, 'open', 1);
}

/** Starts releasing at the event's current R. */
export async function startReleasing(ctx: Services, eventId: string, rate: number) {
  const k = roomKeys(ctx.prefix, eventId);
  await ctx.redis
    .multi()
    .hset(k.meta, { open: 1, releasing: 1, rate, carry: 0, lastAt: ctx.clock.now().getTime() })
    .sadd(releasingSetKey(ctx.prefix), eventId)
    .exec();
}

export async function closeRoom(ctx: Services, eventId: string) {
  const k = roomKeys(ctx.prefix, eventId);
  await ctx.redis.multi().hset(k.meta, { releasing: 0, closed: 1 }).srem(releasingSetKey(ctx.prefix), eventId).exec();
}

/** The controller's output: R, pause, and the sold-out flag from the cell's available seats. */
export async function setRoomControl(
  ctx: Services,
  eventId: string,
  s: { rate: number; paused: boolean; soldOut?: boolean; available?: number | null },
) {
  const k = roomKeys(ctx.prefix, eventId);
  const fields: Record<string, string | number> = { rate: s.rate, paused: s.paused ? 1 : 0 };
  if (s.soldOut !== undefined) fields.soldOut = s.soldOut ? 1 : 0;
  if (s.available !== undefined && s.available !== null) fields.avail = s.available;
  await ctx.redis.hset(k.meta, fields);
}

export async function roomStats(ctx: Services, eventId: string) {
  const k = roomKeys(ctx.prefix, eventId);
  const now = ctx.clock.now().getTime();
  const [meta, waiting, active] = await Promise.all([
    ctx.redis.hgetall(k.meta),
    ctx.redis.zcard(k.queue),
    ctx.redis.zcount(k.admitted, now, '+inf'),
  ]);
  return {
    open: meta.open === '1',
    releasing: meta.releasing === '1',
    paused: meta.paused === '1',
    soldOutForNow: meta.soldOut === '1',
    rate: Number(meta.rate ?? 0),
    waiting,
    activeShoppers: active,
    released: Number(meta.released ?? 0),
    skipped: Number(meta.skipped ?? 0),
    availableSeats: meta.avail === undefined ? null : Number(meta.avail),
  };
}

/** Keeps the room's purchase cell and epoch (carried by admission tokens) in step with the directory. */
export async function setRoomPlacement(ctx: Services, eventId: string, cellId: string, epoch: number) {
  const k = roomKeys(ctx.prefix, eventId);
  if (await ctx.redis.exists(k.meta)) await ctx.redis.hset(k.meta, { cell: cellId, epoch });
}
