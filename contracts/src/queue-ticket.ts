import { z } from 'zod';

/**
 * A queue ticket: what a buyer in an event's waiting room carries so that their polls are answered by any API
 * process from what it already has (the ticket and the room's released-up-to marks), with no Redis call and no
 * database. Issued by a join or a poll (GET queue/me) as `ticket`, sent back on GET queue/poll in the
 * `x-queue-ticket` header. Opaque to the buyer: `qt1.<base64url(JSON of the claims)>.<base64url(HMAC-SHA256)>`,
 * the MAC keyed by a key every control-plane process derives from its key-encryption key. It proves the place the
 * room gave the buyer when it was issued, nothing more: the admission itself is still collected from the room.
 */
export const QUEUE_TICKET_PREFIX = 'qt1';

export const QueueTicketClaims = z.object({
  /** The buyer (the identity token's subject at issue). */
  sub: z.string().min(1),
  eventId: z.string().uuid(),
  /** The room's shard that holds the buyer's place (0 unless the room is sharded). */
  shard: z.number().int().nonnegative(),
  /** The buyer's queue score: they are through once their shard's released-up-to mark reaches it. */
  score: z.number().nonnegative(),
  /** Buyers ahead on the buyer's shard at issue; null before the room opens (early arrivals are not yet placed). */
  rank: z.number().int().nonnegative().nullable(),
  /** Buyers the shard had released or skipped at issue: those since then were all ahead of this buyer. */
  passed: z.number().int().nonnegative(),
  /** The room's generation: a room rebuilt after Redis lost it has another, and its old tickets place nobody. */
  gen: z.string(),
  /** Issued at (unix seconds). */
  iat: z.number().int(),
});
export type QueueTicketClaims = z.infer<typeof QueueTicketClaims>;
