import { randomInt } from 'node:crypto';
import { DomainError, metrics } from '@onsale/contracts';
import type { Services } from '../context';
import type { BuyerActor } from '../lib/actors';
import { appendFact } from '../outbox/facts';
import { POST_OPEN_BASE, roomKeys } from './keys';
import { joinKeys } from './scripts';
import { queueStatus } from './status';

/**
 * Joins an event's waiting room. Idempotent per buyer and event: a refresh or a second device
 * keeps the same place. Before the room opens each arrival draws a random key (their place
 * among the other early arrivals, fixed once and revealed when the room opens); after it opens,
 * first come, first served. A buyer skipped for silence, or whose admission lapsed, rejoins at the back.
 */
export async function joinQueue({ ctx, actor, eventId }: { ctx: Services; actor: BuyerActor; eventId: string }) {
  const k = roomKeys(ctx.prefix, eventId);
  const now = ctx.clock.now().getTime();
  const [outcome, joined] = await ctx.redis.wrJoin(...joinKeys(k), actor.sub, now, randomInt(0, POST_OPEN_BASE));
  if (outcome === 'no_room') throw new DomainError('not_found', 'this event has no waiting room (no onsale scheduled)');
  if (outcome === 'closed') throw new DomainError('conflict', 'the onsale for this event has ended');
  // After Redis took the join: a crash between the two loses one funnel count, never a place.
  if (joined === '1') {
    metrics.queueJoins.inc({ event: eventId });
    await appendFact(ctx.db, 'QueueJoined', eventId, { eventId }, new Date(now));
  }
  const status = await queueStatus({ ctx, actor, eventId });
  return { ...status, joined: joined === '1' };
}
