import type { Services } from '../context';
import { allShardKeys } from './shards';

/** What the room has released up to on one shard. */
export interface ShardMark {
  /** The score of the last buyer the release step took from this shard's queue (released or skipped); null before any. */
  upto: number | null;
  /** How many buyers this shard has released or skipped. */
  passed: number;
  gen: string;
}

/** A room as a process last read it: its flags and each shard's mark. */
export interface RoomMark {
  exists: boolean;
  readAt: number;
  open: boolean;
  releasing: boolean;
  paused: boolean;
  soldOut: boolean;
  closed: boolean;
  rate: number;
  onsaleAt: number | null;
  shards: ShardMark[];
}

const FIELDS = [
  'upto',
  'released',
  'skipped',
  'gen',
  'open',
  'releasing',
  'paused',
  'soldOut',
  'closed',
  'rate',
  'onsaleAt',
];

/**
 * Each API process's copy of the released-up-to marks of the rooms its buyers poll with queue tickets: read from
 * Redis at most once per WAITING_ROOM_MARK_INTERVAL_MS per event (every shard's meta, in one pipelined round trip),
 * however many polls come; the polls of that interval share the read. The same round trip marks the buyers those
 * polls came from as seen (the room skips waiters who stopped polling), so a ticket poll keeps its place as a Redis
 * poll does, up to an interval later.
 *
 * A mark is only ever behind the room, never ahead of it: the release step raises it after it took the buyers. So a
 * stale mark can only tell a buyer "not yet" up to an interval (plus a round trip) after their turn came, which costs
 * them that much of their claim window (ADMISSION_CLAIM_WINDOW_SECONDS); it cannot admit anybody, as the admission
 * is collected from Redis (GET queue/me, whose CLAIM script mints one token per turn).
 */
class RoomMarks {
  private readonly rooms = new Map<
    string,
    { mark?: RoomMark; reading?: Promise<RoomMark>; seen: Map<number, Set<string>>; flush?: NodeJS.Timeout }
  >();
  constructor(private readonly ctx: Services) {}

  private room(eventId: string) {
    let r = this.rooms.get(eventId);
    if (!r) {
      r = { seen: new Map() };
      this.rooms.set(eventId, r);
    }
    return r;
  }

  /** The event's marks, read now only if the copy is older than the interval (or there is none). */
  mark(eventId: string): RoomMark | Promise<RoomMark> {
    const r = this.room(eventId);
    if (r.mark && this.ctx.clock.now().getTime() - r.mark.readAt < this.ctx.config.WAITING_ROOM_MARK_INTERVAL_MS)
      return r.mark;
    r.reading ??= this.read(eventId).finally(() => {
      r.reading = undefined;
    });
    return r.reading;
  }

  /** A buyer polled: marked as seen on their shard with the next read, or within an interval if none comes. */
  seen(eventId: string, shard: number, buyer: string) {
    const r = this.room(eventId);
    let s = r.seen.get(shard);
    if (!s) {
      s = new Set();
      r.seen.set(shard, s);
    }
    s.add(buyer);
    r.flush ??= setTimeout(() => {
      r.flush = undefined;
      if (r.seen.size) void Promise.resolve(this.read(eventId)).catch(() => {});
    }, this.ctx.config.WAITING_ROOM_MARK_INTERVAL_MS).unref();
  }

  private async read(eventId: string): Promise<RoomMark> {
    const r = this.room(eventId);
    const keys = allShardKeys(this.ctx, eventId);
    const now = this.ctx.clock.now().getTime();
    const seen = r.seen;
    r.seen = new Map();
    const [metas] = await Promise.all([
      Promise.all(keys.map((k) => this.ctx.redis.hmget(k.meta, ...FIELDS))),
      Promise.all([...seen].map(([shard, buyers]) => this.ctx.redis.wrSeenBatch(keys[shard]!.state, now, ...buyers))),
    ]);
    const first = metas[0]!;
    const flag = (i: number) => first[i] === '1';
    const mark: RoomMark = {
      exists: metas.every((m) => m[10] != null),
      readAt: now,
      open: flag(4),
      releasing: flag(5),
      paused: flag(6),
      soldOut: flag(7),
      closed: flag(8),
      rate: Number(first[9] ?? 0),
      onsaleAt: first[10] == null ? null : Number(first[10]),
      shards: metas.map((m) => ({
        upto: m[0] == null ? null : Number(m[0]),
        passed: Number(m[1] ?? 0) + Number(m[2] ?? 0),
        gen: m[3] ?? '',
      })),
    };
    r.mark = mark;
    return mark;
  }
}

const perProcess = new WeakMap<Services, RoomMarks>();
export function roomMarks(ctx: Services): RoomMarks {
  let m = perProcess.get(ctx);
  if (!m) {
    m = new RoomMarks(ctx);
    perProcess.set(ctx, m);
  }
  return m;
}
