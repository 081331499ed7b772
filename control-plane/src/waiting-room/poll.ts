import { DomainError } from '@onsale/contracts';
import type { Services } from '../context';
import { roomMarks } from './marks';
import { estimatedAhead, shardCount } from './shards';
import { verifyTicket } from './ticket';

export interface TicketPoll {
  eventId: string;
  /** your_turn: collect the admission now with GET queue/me; ended: the onsale is over. */
  status: 'waiting' | 'your_turn' | 'ended';
  roomOpen: boolean;
  position: number | null;
  peopleAhead: number | null;
  releaseRate: number;
  estimatedWaitSeconds: number | null;
  soldOutForNow: boolean;
  paused: boolean;
  /** The ticket cannot place the buyer any more (issued before the room opened, or the room was rebuilt): GET queue/me once for a new one. */
  refreshTicket: boolean;
  /** How old the room's marks this answer came from are (ms): at most WAITING_ROOM_MARK_INTERVAL_MS plus a read. */
  markAgeMs: number;
  message: string;
}

/**
 * A poll answered from what this process holds: the buyer's queue ticket (verified, no token check) and the
 * room's released-up-to marks (marks.ts), with no Redis call and no database of its own. The buyer is through
 * once their shard's mark reaches their score; their place is their rank on their shard at issue less those the
 * shard has passed since (all of whom were ahead of them), as a Redis poll would count it. A stale mark tells a
 * buyer "waiting" late, never "your turn" early, and the admission itself is collected from Redis (GET queue/me).
 */
export async function pollWithTicket({
  ctx,
  eventId,
  ticket,
}: {
  ctx: Services;
  eventId: string;
  ticket: string;
}): Promise<TicketPoll> {
  const t = verifyTicket(ctx, ticket);
  if (!t)
    throw new DomainError('unauthenticated', 'this queue ticket is not valid; GET queue/me gives a new one', {
      field: 'x-queue-ticket',
    });
  if (t.eventId !== eventId)
    throw new DomainError('forbidden', 'this queue ticket is for another event', { field: 'x-queue-ticket' });
  const marks = roomMarks(ctx);
  const m = await marks.mark(eventId);
  if (!m.exists)
    throw new DomainError('waiting_room_unavailable', 'the waiting room is being restored; retry in a moment');
  const now = ctx.clock.now().getTime();
  const answer: TicketPoll = {
    eventId,
    status: 'waiting',
    roomOpen: m.open,
    position: null,
    peopleAhead: null,
    releaseRate: m.paused ? 0 : m.rate,
    estimatedWaitSeconds: null,
    soldOutForNow: m.soldOut,
    paused: m.paused,
    refreshTicket: false,
    markAgeMs: now - m.readAt,
    message: 'keep this page open; you will be let in in queue order',
  };
  if (m.closed) return { ...answer, status: 'ended', message: 'the onsale has ended' };
  const shard = m.shards[t.shard];
  if (!shard || shard.gen !== t.gen)
    return { ...answer, refreshTicket: true, message: 'your place must be looked up again: GET queue/me' };
  marks.seen(eventId, t.shard, t.sub);
  if (shard.upto !== null && t.score <= shard.upto)
    return { ...answer, status: 'your_turn', message: 'it is your turn: collect your admission with GET queue/me now' };
  if (t.rank === null) {
    if (!m.open) return { ...answer, message: 'you are in; places among early arrivals are drawn when the room opens' };
    return { ...answer, refreshTicket: true, message: 'the room has opened: GET queue/me once for your place' };
  }
  const ahead = estimatedAhead(Math.max(0, t.rank - (shard.passed - t.passed)), shardCount(ctx));
  answer.position = ahead + 1;
  answer.peopleAhead = ahead;
  if (m.rate > 0 && !m.paused && !m.soldOut)
    answer.estimatedWaitSeconds = Math.ceil(Math.max(0, ((m.onsaleAt ?? now) - now) / 1000) + ahead / m.rate);
  if (m.soldOut) answer.message = 'sold out for now: every seat is held or sold; if holds expire, releasing resumes';
  else if (m.paused) answer.message = 'releasing is paused; you keep your place';
  else if (!m.releasing) answer.message = 'the onsale has not started yet; you keep your place';
  return answer;
}
