/**
 * Redis keys of the waiting room. One set of keys per event (hash-tagged by event id, so a
 * cluster keeps one event's queue on one shard); every event has its own queue and its own R.
 * A sharded room (shards.ts) has one such set per shard, tagged by event and shard number.
 */
export function roomKeys(prefix: string, eventId: string, shard?: number) {
  const b = shard === undefined ? `${prefix}wr:{${eventId}}` : `${prefix}wr:{${eventId}:${shard}}`;
  return {
    /**
     * hash: opensAt, onsaleAt, fcommit (the shuffle seed's commitment), open, releasing, paused, closed, soldOut, avail, rate, carry, lastAt, maxActive, released, skipped,
     * upto (the score of the last buyer the release step took from this queue: the released-up-to mark), gen (the room's generation: a rebuilt room has a new one),
     * seqMs and seqN (a sharded room's last arrival: its millisecond and its number within it)
     */
    meta: `${b}:meta`,
    /** zset: waiting buyers by queue score (pre-opening arrivals: their shuffle key < 2^52; later: 2^52 + arrival number) */
    queue: `${b}:q`,
    seq: `${b}:seq`,
    /** hash: buyer → last second seen (waiting) | r (released) | s (skipped for silence) */
    state: `${b}:st`,
    /** zset: released buyer → end of their slot (claim deadline, then token expiry) */
    admitted: `${b}:adm`,
    /** hash: released buyer → releasedAt|claimBy|exp|jti */
    release: `${b}:rel`,
    /** hash: early arrival → shuffle key|r or s|ms, as the release step took them from the queue (the admission log) */
    fairLog: `${b}:flog`,
    token: (buyer: string) => `${b}:tok:${buyer}`,
    /** string: the thumbprint (cnf.jkt) of the device key the buyer joined with (door.ts) */
    deviceKey: (buyer: string) => `${b}:dev:${buyer}`,
  };
}
export type RoomKeys = ReturnType<typeof roomKeys>;

export const releasingSetKey = (prefix: string) => `${prefix}wr:releasing`;
/**
 * A rate-limit bucket. The room's scripts charge it in the same call as the room's keys, which a
 * single-shard Redis (the deployed one: cluster mode off) allows. A sharded room's scripts charge buckets
 * under the shard's hash tag (`tag`), so a Redis Cluster keeps them in the shard's slot: a buyer's bucket is
 * then per event (their shard of it), an IP's per event shard.
 */
export const rateBucketKey = (prefix: string, kind: 'ip' | 'buyer', id: string, tag = '') =>
  `${prefix}rl:${tag}${kind}:${id}`;

/**
 * Scores of post-opening arrivals start here, after every possible pre-opening score (a 52-bit shuffle key:
 * the widest a Redis score, a double, holds exactly, so two early arrivals rarely tie).
 */
export const POST_OPEN_BASE = 2 ** 52;

/**
 * A sharded room's post-opening arrivals get POST_OPEN_BASE + (ms since the room opened) × ARRIVALS_PER_MS + their
 * number within that millisecond on their shard: below 2^53 (exact in a double) for 139 years after opening.
 */
export const ARRIVALS_PER_MS = 1024;
