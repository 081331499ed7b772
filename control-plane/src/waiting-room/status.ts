import { DomainError } from '@onsale/contracts';
import { mintAdmissionToken, newJti } from '../admission/mint';
import { isRevoked } from '../admission/revoke';
import type { Services } from '../context';
import type { BuyerActor } from '../lib/actors';
import { roomKeys } from './keys';
import { statusKeys } from './scripts';

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
  message: string;
}

const parseRel = (rel: string) => {
  const [releasedAt, claimBy, exp, jti] = rel.split('|');
  return { releasedAt: Number(releasedAt), claimBy: Number(claimBy), exp: Number(exp), jti: jti ?? '' };
};

/**
 * A buyer's place: position, people ahead and an estimated wait at the current R; once released,
 * the admission token (minted on the first fetch, the same token on every later fetch until it
 * expires). Polling is also how the room knows the buyer is still there.
 */
export async function queueStatus({
  ctx,
  actor,
  eventId,
}: {
  ctx: Services;
  actor: BuyerActor;
  eventId: string;
}): Promise<QueueStatus> {
  const k = roomKeys(ctx.prefix, eventId);
  const nowMs = ctx.clock.now().getTime();
  const [st, rank, rel, open, soldOut, rate, releasing, closed, paused, onsaleAt] = await ctx.redis.wrStatus(
    ...statusKeys(k),
    actor.sub,
    nowMs,
  );
  if (!onsaleAt) throw new DomainError('not_found', 'this event has no waiting room (no onsale scheduled)');
  const R = Number(rate);
  const roomOpen = open === '1';
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
    message: closed === '1' ? 'the onsale has ended' : 'join the queue to get a place',
  };
  if (st === 'w') {
    base.status = 'waiting';
    if (!roomOpen) {
      base.message = 'you are in; places among early arrivals are drawn at random when the room opens';
      return base;
    }
    base.position = rank + 1;
    base.peopleAhead = rank;
    const untilOnsale = Math.max(0, (Number(onsaleAt) - nowMs) / 1000);
    if (R > 0 && paused !== '1' && soldOut !== '1') base.estimatedWaitSeconds = Math.ceil(untilOnsale + rank / R);
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

  const r = parseRel(rel);
  if (r.exp === 0) {
    if (nowMs > r.claimBy) {
      base.status = 'expired';
      base.message = 'your turn came but the admission was not collected in time; join again';
      return base;
    }
    const meta = await ctx.redis.hmget(k.meta, 'cell', 'epoch');
    const iat = Math.floor(nowMs / 1000);
    const exp = iat + ctx.config.ADMISSION_TOKEN_TTL_SECONDS;
    const jti = newJti();
    const { token } = await mintAdmissionToken(ctx.keys, {
      sub: actor.sub,
      eventId,
      purchaseCell: meta[0] ?? '',
      directoryEpoch: Number(meta[1] ?? 0),
      iat,
      exp,
      jti,
    });
    const newRel = `${r.releasedAt}|${r.claimBy}|${exp * 1000}|${jti}`;
    const [outcome] = await ctx.redis.wrClaim(
      k.release,
      k.admitted,
      k.token(actor.sub),
      actor.sub,
      rel,
      newRel,
      exp * 1000,
      token,
      exp * 1000 - nowMs,
    );
    if (outcome === 'gone') {
      base.status = 'expired';
      base.message = 'your turn came but the admission was not collected in time; join again';
      return base;
    }
    // Claimed now, or a concurrent fetch claimed first: either way read back the stored record.
    return queueStatus({ ctx, actor, eventId });
  }
  if (nowMs >= r.exp) {
    base.status = 'expired';
    base.message = 'your admission has expired; join again';
    return base;
  }
  if (await isRevoked(ctx, r.jti, actor.sub, Math.floor(r.exp / 1000) - ctx.config.ADMISSION_TOKEN_TTL_SECONDS)) {
    base.status = 'revoked';
    base.message = 'your admission was revoked';
    return base;
  }
  const token = await ctx.redis.get(k.token(actor.sub));
  if (!token) {
    base.status = 'expired';
    base.message = 'your admission has expired; join again';
    return base;
  }
  const meta = await ctx.redis.hmget(k.meta, 'cell', 'epoch');
  base.status = 'released';
  base.admission = {
    token,
    jti: r.jti,
    expiresAt: new Date(r.exp).toISOString(),
    purchaseCell: meta[0] ?? '',
    directoryEpoch: Number(meta[1] ?? 0),
  };
  base.message = 'it is your turn: use this admission before it expires';
  return base;
}
