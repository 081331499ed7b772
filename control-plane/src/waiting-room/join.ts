import { DomainError, metrics } from '@onsale/contracts';
import { countBotSignal } from '../bot-report/signals';
import type { Services } from '../context';
import type { Db } from '../db/client';
import type { BuyerActor } from '../lib/actors';
import { appendFacts } from '../outbox/facts';
import { checkPresaleAccess } from '../presale/gate';
import { doorOf, recordDeviceKey, spendProofOfWork } from './door';
import { forgetRoomFairness, pseudonymOf, roomFairness, shuffleKey } from './fairness';
import { charged, type RateCharges, rateLimited } from './rate-limit';
import { missingRoom } from './room';
import { isRateLimited, joinKeys, type RawStatus } from './scripts';
import { arrivalOrder, buyerRoomKeys } from './shards';
import { describeStatus } from './status';

/**
 * Joins an event's waiting room. Idempotent per buyer and event: a refresh or a second device
 * keeps the same place. Before the room opens each arrival's place among the other early arrivals
 * is their shuffle key, a function of the seed the platform committed to and of their pseudonym
 * (fairness.ts: revealed, and checkable by anyone, when the room opens); after it opens, first come,
 * first served. A buyer skipped for silence, or whose admission lapsed, rejoins at the back.
 * One Redis call charges the buyer's rate limits (`charges`), takes the join and reads the buyer's status; before
 * it, the onsale's door may ask for a proof of work and a device key (door.ts). Until the event's presale (if
 * any) ends, only a buyer with a valid access code of their account gets that far.
 */
export async function joinQueue({
  ctx,
  actor,
  eventId,
  charges,
  door: brought = {},
  accessCode,
}: {
  ctx: Services;
  actor: BuyerActor;
  eventId: string;
  charges?: RateCharges;
  /** What the onsale's door may ask for (door.ts): a solved challenge, the buyer's device key. */
  door?: { pow?: { challenge: string; counter: number }; jkt?: string };
  /** The buyer's presale access code (presale/gate.ts), needed only until the event's presale ends. */
  accessCode?: string;
}) {
  const door = await doorOf(ctx, eventId);
  await spendProofOfWork(ctx, actor, eventId, door, brought.pow);
  await recordDeviceKey(ctx, actor, eventId, door, brought.jkt);
  const now = ctx.clock.now().getTime();
  await checkPresaleAccess(ctx, eventId, actor.sub, accessCode, now);
  const keys = joinKeys(buyerRoomKeys(ctx, eventId, actor.sub));
  const order = arrivalOrder(ctx);
  const attempt = async (c: RateCharges | undefined) => {
    // No onsale record: only an open room (which needs no seed) takes the join; JOIN refuses an early one.
    const f = await roomFairness(ctx, eventId);
    const key = f ? shuffleKey(f.seed, pseudonymOf(f.salt, actor.sub)) : 0;
    return ctx.redis.wrJoin(...charged(ctx, c, keys, [actor.sub, now, key, f?.commitment ?? '', order]));
  };
  let answer = await attempt(charges);
  if (answer[0] === 'stale_fairness') {
    // The onsale was scheduled anew since this process read its seed; the refused join charged the limits already.
    forgetRoomFairness(ctx, eventId);
    answer = await attempt(undefined);
  }
  if (isRateLimited(answer)) {
    await countBotSignal(ctx, eventId, 'joins_rate_limited');
    throw rateLimited(answer[1]);
  }
  const [outcome, joined, ...raw] = answer;
  if (outcome === 'no_room' || outcome === 'stale_fairness') throw await missingRoom(ctx, eventId);
  if (outcome === 'closed') throw new DomainError('conflict', 'the onsale for this event has ended');
  // After Redis took the join: a crash between the two loses one funnel count, never a place.
  if (joined === '1') {
    metrics.queueJoins.inc({ event: eventId });
    await joinFacts(ctx.db).add(eventId, new Date(now));
  }
  const status = await describeStatus({ ctx, actor, eventId, raw: raw as RawStatus, nowMs: now });
  return { ...status, joined: joined === '1' };
}

/**
 * Rows per INSERT of a group commit, and INSERTs in flight at once. One INSERT of every waiting join
 * made the joins move in lockstep (Redis, then the database, then the process, each idle in turn):
 * 13.0k and 15.2k joins/s in `pnpm bench:waiting-room`; four of at most 64 each, 21.2k and 21.3k.
 */
const MAX_FACTS_PER_WRITE = 64;
const MAX_WRITES = 4;

/**
 * Group commit of QueueJoined facts: a join answers only once its fact is durable, but the joins
 * of one event-loop turn share an INSERT (one per join is what bounded joins/s).
 */
function createJoinFacts(db: Db) {
  type Pending = { eventId: string; occurredAt: Date; done: (err?: unknown) => void };
  const pending: Pending[] = [];
  let writes = 0;
  let scheduled = false;
  const schedule = () => {
    if (scheduled || writes >= MAX_WRITES || pending.length === 0) return;
    scheduled = true;
    setImmediate(write);
  };
  async function write() {
    scheduled = false;
    const batch = pending.splice(0, MAX_FACTS_PER_WRITE);
    writes++;
    schedule();
    try {
      await appendFacts(
        db,
        'QueueJoined',
        batch.map((f) => ({ eventId: f.eventId, payload: { eventId: f.eventId }, occurredAt: f.occurredAt })),
      );
      for (const f of batch) f.done();
    } catch (err) {
      for (const f of batch) f.done(err);
    } finally {
      writes--;
      schedule();
    }
  }
  return {
    add: (eventId: string, occurredAt: Date) =>
      new Promise<void>((resolve, reject) => {
        pending.push({ eventId, occurredAt, done: (err) => (err === undefined ? resolve() : reject(err)) });
        schedule();
      }),
  };
}

const batchers = new WeakMap<Db, ReturnType<typeof createJoinFacts>>();
const joinFacts = (db: Db) => {
  let b = batchers.get(db);
  if (!b) {
    b = createJoinFacts(db);
    batchers.set(db, b);
  }
  return b;
};
