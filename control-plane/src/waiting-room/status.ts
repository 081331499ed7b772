import { mintAdmissionToken, newJti } from '../admission/mint';
import { isRevoked } from '../admission/revoke';
import type { Services } from '../context';
import type { BuyerActor } from '../lib/actors';
import { pseudonymOf, roomFairness } from './fairness';
import { charged, type RateCharges, rateLimited } from './rate-limit';
import { missingRoom } from './room';
import { isRateLimited, type RawStatus, statusKeys } from './scripts';
import { buyerRoomKeys, estimatedAhead, shardCount, shardOf } from './shards';
import { issueTicket } from './ticket';

export type QueueState = 'waiting' | 'released' | 'expired' | 'skipped' | 'revoked' | 'not_in_queue';

export interface QueueStatus {
  eventId: string;
  status: QueueState;
  roomOpen: boolean;
  /** 1-based place among waiting buyers; null before the room opens (early arrivals are not yet ordered for them). */
  position: number | null;
  peopleAhead: number | null;
  waiting: number | null;
  releaseRate: number;
  estimatedWaitSeconds: number | null;
  soldOutForNow: boolean;
  paused: boolean;
  onsaleAt: string | null;
  admission: { token: string; jti: string; expiresAt: string; purchaseCell: string; directoryEpoch: number } | null;
  /** The buyer's name in the event's published admission log (GET queue/fairness); null until they join. */
  pseudonym: string | null;
  /** While waiting: the queue ticket (ticket.ts) that GET queue/poll answers from without Redis; null otherwise. */
  ticket: string | null;
  message: string;
}

const parseRel = (rel: string) => {
  const [releasedAt, claimBy, exp, jti] = rel.split('|');
  return { releasedAt: Number(releasedAt), claimBy: Number(claimBy), exp: Number(exp), jti: jti ?? '' };
};

/**
 * A buyer's place: position, people ahead and an estimated wait at the current R; once released,
 * the admission token (minted on the first fetch, the same token on every later fetch until it
 * expires). Polling is also how the room knows the buyer is still there. A waiting buyer's poll is
 * one Redis call, its rate limits (`charges`) included; a released buyer's adds one pipelined read
 * (token and revocations).
 */
export async function queueStatus({
  ctx,
  actor,
  eventId,
  charges,
}: {
  ctx: Services;
  actor: BuyerActor;
  eventId: string;
  charges?: RateCharges;
}): Promise<QueueStatus> {
  const nowMs = ctx.clock.now().getTime();
  const keys = statusKeys(buyerRoomKeys(ctx, eventId, actor.sub));
  const raw = await ctx.redis.wrStatus(...charged(ctx, charges, keys, [actor.sub, nowMs]));
  if (isRateLimited(raw)) throw rateLimited(raw[1]);
  return describeStatus({ ctx, actor, eventId, raw, nowMs });
}

/** Turns what JOIN or STATUS read in Redis into the buyer's answer; collects the admission on the first fetch after release. */
export async function describeStatus({
  ctx,
  actor,
  eventId,
  raw,
  nowMs,
}: {
  ctx: Services;
  actor: BuyerActor;
  eventId: string;
  raw: RawStatus;
  nowMs: number;
}): Promise<QueueStatus> {
  const [st, rank, rel, open, soldOut, rate, releasing, closed, paused, onsaleAt, cell, epoch, score, passed, gen] =
    raw;
  if (!onsaleAt) throw await missingRoom(ctx, eventId);
  const R = Number(rate);
  const roomOpen = open === '1';
  const fairness = st ? await roomFairness(ctx, eventId) : null;
  const base: QueueStatus = {
    eventId,
    status: 'not_in_queue',
    roomOpen,
    position: null,
    peopleAhead: null,
    waiting: null,
    releaseRate: paused === '1' ? 0 : R,
    estimatedWaitSeconds: null,
    soldOutForNow: soldOut === '1',
    paused: paused === '1',
    onsaleAt: new Date(Number(onsaleAt)).toISOString(),
    admission: null,
    pseudonym: fairness ? pseudonymOf(fairness.salt, actor.sub) : null,
    ticket: null,
    message: closed === '1' ? 'the onsale has ended' : 'join the queue to get a place',
  };
  if (st === 'w') {
    base.status = 'waiting';
    base.ticket = issueTicket(ctx, {
      sub: actor.sub,
      eventId,
      shard: shardOf(actor.sub, shardCount(ctx)),
      score: Number(score),
      rank: roomOpen ? rank : null,
      passed: Number(passed),
      gen,
      iat: Math.floor(nowMs / 1000),
    });
    if (!roomOpen) {
      base.message =
        'you are in; places among early arrivals are drawn from a committed seed, published when the room opens';
      return base;
    }
    const ahead = estimatedAhead(rank, shardCount(ctx));
    base.position = ahead + 1;
    base.peopleAhead = ahead;
    const untilOnsale = Math.max(0, (Number(onsaleAt) - nowMs) / 1000);
    if (R > 0 && paused !== '1' && soldOut !== '1') base.estimatedWaitSeconds = Math.ceil(untilOnsale + ahead / R);
    base.message =
      soldOut === '1'
        ? 'sold out for now: every seat is held or sold; if holds expire, releasing resumes'
        : paused === '1'
          ? 'releasing is paused; you keep your place'
          : releasing === '1'
            ? 'keep this page open; you will be let in in queue order'
            : 'the onsale has not started yet; you keep your place';
    return base;
  }
  if (st === 's') {
    base.status = 'skipped';
    base.message = 'your turn came while you were away; join again to get a place at the back';
    return base;
  }
  if (st !== 'r' || !rel) return base;

  const expired = (message: string) => {
    base.status = 'expired';
    base.message = message;
    return base;
  };
  const placement = { purchaseCell: cell, directoryEpoch: Number(epoch) };
  let r = parseRel(rel);
  let token: string | null;
  let revoked: boolean;
  const revocation = () =>
    isRevoked(ctx, r.jti, actor.sub, Math.floor(r.exp / 1000) - ctx.config.ADMISSION_TOKEN_TTL_SECONDS);
  if (r.exp === 0) {
    if (nowMs > r.claimBy) return expired('your turn came but the admission was not collected in time; join again');
    const claimed = await claimAdmission(ctx, actor, eventId, rel, r, placement, nowMs);
    if (!claimed) return expired('your turn came but the admission was not collected in time; join again');
    // Claimed now, or a concurrent fetch claimed first: either way the stored record and its token.
    r = parseRel(claimed.rel);
    token = claimed.token;
    revoked = await revocation();
  } else {
    if (nowMs >= r.exp) return expired('your admission has expired; join again');
    // One pipelined round trip (ioredis auto-pipelining): the token beside the revocation keys.
    [token, revoked] = await Promise.all([
      ctx.redis.get(buyerRoomKeys(ctx, eventId, actor.sub).token(actor.sub)),
      revocation(),
    ]);
  }
  if (revoked) {
    base.status = 'revoked';
    base.message = 'your admission was revoked';
    return base;
  }
  if (!token) return expired('your admission has expired; join again');
  base.status = 'released';
  base.admission = { token, jti: r.jti, expiresAt: new Date(r.exp).toISOString(), ...placement };
  base.message = 'it is your turn: use this admission before it expires';
  return base;
}

/**
 * Mints the admission, bound to the device key the buyer joined with if any, and attaches it to the release record,
 * unless another fetch did first; null when the slot is gone.
 */
async function claimAdmission(
  ctx: Services,
  actor: BuyerActor,
  eventId: string,
  rel: string,
  r: ReturnType<typeof parseRel>,
  placement: { purchaseCell: string; directoryEpoch: number },
  nowMs: number,
): Promise<{ token: string; rel: string } | null> {
  const keys = buyerRoomKeys(ctx, eventId, actor.sub);
  const iat = Math.floor(nowMs / 1000);
  const exp = iat + ctx.config.ADMISSION_TOKEN_TTL_SECONDS;
  const jti = newJti();
  const jkt = (await ctx.redis.get(keys.deviceKey(actor.sub))) ?? undefined;
  const { token } = await mintAdmissionToken(ctx.keys, { sub: actor.sub, eventId, ...placement, iat, exp, jti, jkt });
  const [outcome, stored, storedRel] = await ctx.redis.wrClaim(
    keys.release,
    keys.admitted,
    keys.token(actor.sub),
    actor.sub,
    rel,
    `${r.releasedAt}|${r.claimBy}|${exp * 1000}|${jti}`,
    exp * 1000,
    token,
    exp * 1000 - nowMs,
  );
  return outcome === 'gone' || !storedRel ? null : { token: stored, rel: storedRel };
}
