import { eq, sql } from 'drizzle-orm';
import { CompactSign } from 'jose';
import type { Services } from '../context';
import { onsales, type Presale, presaleInvitations, presaleRegistrations } from '../db/schema';
import { dbOf, withTransaction } from '../db/tx';
import { eventForTenant } from '../events/events';
import { assertRole, type PromoterActor } from '../lib/actors';
import { conflict, notFound } from '../lib/errors';
import { commitmentOf, pseudonymOf, shuffleKey } from '../waiting-room/fairness';
import { invitationExpiry, newAccessCode, presaleOf } from './presale';

/**
 * The presale lottery, verifiable as the queue's shuffle is (waiting-room/fairness.ts): the seed is drawn when
 * registration opens and its SHA-256 published at once; each registration's place is HMAC-SHA256(seed, pseudonym)
 * (the queue's own shuffle key and pseudonym, so a buyer has one pseudonym for both), ties broken by pseudonym.
 * After the draw the seed and a signed list of every registration's pseudonym, place and outcome are published:
 * anyone can check the commitment and recompute the order.
 */
export const LOTTERY_SCHEME = 'onsale-presale-lottery/1';
export const LOTTERY_LOG_TYP = 'onsale-lottery-log+json';

export type DrawOutcome = 'invited' | 'waitlisted' | 'not_selected';

/** The outcome the draw gave the place `rank` (1-based): the first `invitations`, then the waitlist, then the rest. */
export const outcomeOfRank = (p: Pick<Presale, 'invitations' | 'waitlistSize'>, rank: number): DrawOutcome =>
  rank <= p.invitations ? 'invited' : rank <= p.invitations + p.waitlistSize ? 'waitlisted' : 'not_selected';

/** The lottery's order of pseudonyms: by shuffle key under the seed, then by pseudonym. */
export function lotteryOrder(seed: string, pseudonyms: string[]): string[] {
  return pseudonyms
    .map((pseudonym) => ({ pseudonym, key: shuffleKey(seed, pseudonym) }))
    .sort((a, b) => a.key - b.key || (a.pseudonym < b.pseudonym ? -1 : a.pseudonym > b.pseudonym ? 1 : 0))
    .map((e) => e.pseudonym);
}

const saltOf = async (ctx: Services, eventId: string) => {
  const [o] = await dbOf(ctx).select({ salt: onsales.fairnessSalt }).from(onsales).where(eq(onsales.eventId, eventId));
  if (!o) throw notFound('onsale');
  return o.salt;
};

/**
 * Draws the lottery once registration has closed: ranks every registration, invites exactly `invitations` of them
 * (fewer only if fewer registered), waitlists the next `waitlistSize`, and gives each invited buyer an access code
 * bound to their account. Once only: a second draw (the worker's and the promoter's button racing) finds it drawn.
 */
export async function drawLottery(ctx: Services, eventId: string): Promise<{ drew: boolean; invited: number }> {
  const now = ctx.clock.now();
  const salt = await saltOf(ctx, eventId);
  return withTransaction(ctx, async (tx) => {
    const p = await presaleOf(ctx, tx, eventId, true);
    if (p.drawnAt) return { drew: false, invited: 0 };
    if (now.getTime() < p.registrationClosesAt.getTime())
      throw conflict('registration is still open; the lottery draws once it closes', {
        reason: 'registration_open',
        registrationClosesAt: p.registrationClosesAt.toISOString(),
      });
    const regs = await tx
      .select({ id: presaleRegistrations.id, buyerSub: presaleRegistrations.buyerSub })
      .from(presaleRegistrations)
      .where(eq(presaleRegistrations.eventId, eventId));
    const byPseudonym = new Map(regs.map((r) => [pseudonymOf(salt, r.buyerSub), r]));
    const ranked = lotteryOrder(p.lotterySeed, [...byPseudonym.keys()]).map((pseudonym, i) => ({
      ...byPseudonym.get(pseudonym)!,
      rank: i + 1,
      outcome: outcomeOfRank(p, i + 1),
    }));
    if (ranked.length) {
      const rows = JSON.stringify(ranked.map((r) => ({ id: r.id, rank: r.rank, outcome: r.outcome })));
      await tx.execute(sql`
        UPDATE presale_registrations r SET draw_rank = v.rank, outcome = v.outcome
          FROM jsonb_to_recordset(${rows}::jsonb) AS v(id uuid, rank int, outcome text)
         WHERE r.id = v.id`);
    }
    const invited = ranked.filter((r) => r.outcome === 'invited');
    if (invited.length)
      await tx.insert(presaleInvitations).values(
        invited.map((r) => ({
          eventId,
          buyerSub: r.buyerSub,
          accessCode: newAccessCode(),
          offeredAt: now,
          expiresAt: invitationExpiry(p, now),
        })),
      );
    await tx.execute(sql`UPDATE presales SET drawn_at = ${now}, updated_at = ${now} WHERE event_id = ${eventId}`);
    ctx.log.info('presale lottery drawn', { eventId, registrations: ranked.length, invited: invited.length });
    return { drew: true, invited: invited.length };
  });
}

export interface LotteryLogEntry {
  pseudonym: string;
  /** 1-based place in the draw. */
  rank: number;
  outcome: DrawOutcome;
}

export interface SignedLotteryLog {
  scheme: typeof LOTTERY_SCHEME;
  eventId: string;
  commitment: string;
  seed: string;
  invitations: number;
  waitlistSize: number;
  drawnAt: string;
  entries: LotteryLogEntry[];
}

/**
 * The lottery's public record: the commitment from the opening of registration; after the draw also the seed and
 * the log (compact JWS, the admission signing key, `typ` LOTTERY_LOG_TYP), every registration in the draw's order.
 */
export async function lotteryRecord(ctx: Services, eventId: string) {
  const p = await presaleOf(ctx, undefined, eventId);
  const base = {
    scheme: LOTTERY_SCHEME,
    eventId,
    commitment: commitmentOf(p.lotterySeed),
    registrationClosesAt: p.registrationClosesAt.toISOString(),
    invitations: p.invitations,
    waitlistSize: p.waitlistSize,
  } as const;
  if (!p.drawnAt) return { ...base, drawn: false, seed: null, log: null };
  const salt = await saltOf(ctx, eventId);
  const regs = await dbOf(ctx)
    .select({ buyerSub: presaleRegistrations.buyerSub, rank: presaleRegistrations.drawRank })
    .from(presaleRegistrations)
    .where(eq(presaleRegistrations.eventId, eventId))
    .orderBy(presaleRegistrations.drawRank);
  const signed: SignedLotteryLog = {
    scheme: LOTTERY_SCHEME,
    eventId,
    commitment: base.commitment,
    seed: p.lotterySeed,
    invitations: p.invitations,
    waitlistSize: p.waitlistSize,
    drawnAt: p.drawnAt.toISOString(),
    entries: regs.map((r) => ({
      pseudonym: pseudonymOf(salt, r.buyerSub),
      rank: r.rank!,
      outcome: outcomeOfRank(p, r.rank!),
    })),
  };
  const { kid, alg, key } = await ctx.keys.signingKey();
  const log = await new CompactSign(new TextEncoder().encode(JSON.stringify(signed)))
    .setProtectedHeader({ alg, kid, typ: LOTTERY_LOG_TYP })
    .sign(key);
  return { ...base, drawn: true, seed: p.lotterySeed, log };
}

/** The promoter's draw button: the same draw the worker makes at the close, for a promoter who will not wait. */
export async function drawPresale({ ctx, actor, eventId }: { ctx: Services; actor: PromoterActor; eventId: string }) {
  assertRole(actor, 'manager');
  await eventForTenant(dbOf(ctx), actor.tenantId, eventId);
  const r = await drawLottery(ctx, eventId);
  if (!r.drew) throw conflict('the lottery has already been drawn', { reason: 'already_drawn' });
  return r;
}
