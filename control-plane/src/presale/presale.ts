import { randomBytes } from 'node:crypto';
import { DomainError } from '@onsale/contracts';
import { and, asc, count, desc, eq, inArray, sql } from 'drizzle-orm';
import { readBotSignals } from '../bot-report/signals';
import type { Services } from '../context';
import {
  events,
  onsales,
  type Presale,
  presaleInvitations,
  presaleRegistrations,
  presaleSources,
  presales,
} from '../db/schema';
import { dbOf, type Tx, withTransaction } from '../db/tx';
import { eventForTenant, startOrderIssues } from '../events/events';
import { assertRole, type PromoterActor } from '../lib/actors';
import { conflict, notFound } from '../lib/errors';
import { commitmentOf } from '../waiting-room/fairness';

export interface OpenPresaleInput {
  registrationOpensAt: Date;
  registrationClosesAt: Date;
  presaleStartsAt: Date;
  presaleEndsAt: Date;
  /** Buyers the lottery invites. */
  invitations: number;
  /** Buyers the lottery ranks after the invited ones, offered the places of invitations that lapse (0: none). */
  waitlistSize?: number;
  /** How long an invitation stays open from the presale's start (or from its offer, if later). Default 1 h. */
  invitationTtlSeconds?: number;
}

/** An access code: 20 characters of Crockford base32 (100 bits), grouped for reading aloud. */
export function newAccessCode(): string {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  const bytes = randomBytes(20);
  let out = '';
  for (let i = 0; i < 20; i++) out += alphabet[bytes[i]! % 32];
  return `${out.slice(0, 5)}-${out.slice(5, 10)}-${out.slice(10, 15)}-${out.slice(15)}`;
}

/** An invitation offered at `offeredAt` is open for the TTL from the presale's start (or the offer, if later). */
export function invitationExpiry(p: Presale, offeredAt: Date): Date {
  const from = Math.max(offeredAt.getTime(), p.presaleStartsAt.getTime());
  return new Date(Math.min(from + p.invitationTtlSeconds * 1000, p.presaleEndsAt.getTime()));
}

export const presaleView = (p: Presale) => ({
  eventId: p.eventId,
  registrationOpensAt: p.registrationOpensAt.toISOString(),
  registrationClosesAt: p.registrationClosesAt.toISOString(),
  presaleStartsAt: p.presaleStartsAt.toISOString(),
  presaleEndsAt: p.presaleEndsAt.toISOString(),
  invitations: p.invitations,
  waitlistSize: p.waitlistSize,
  invitationTtlSeconds: p.invitationTtlSeconds,
  lotteryCommitment: commitmentOf(p.lotterySeed),
  drawnAt: p.drawnAt?.toISOString() ?? null,
});

/**
 * Opens (or, until registration closes, changes) an onsale's presale. The lottery's seed is drawn once, at the first
 * opening, and its SHA-256 is published from then on (lottery.ts): a change keeps it, so nobody, the promoter
 * included, can pick the seed after seeing who registered.
 */
export async function openPresale({
  ctx,
  actor,
  eventId,
  input,
}: {
  ctx: Services;
  actor: PromoterActor;
  eventId: string;
  input: OpenPresaleInput;
}) {
  assertRole(actor, 'manager');
  const issues: { path: string; message: string }[] = [];
  const t = (d: Date) => d.getTime();
  if (t(input.registrationOpensAt) >= t(input.registrationClosesAt))
    issues.push({ path: 'registrationClosesAt', message: 'registration must close after it opens' });
  if (t(input.registrationClosesAt) > t(input.presaleStartsAt))
    issues.push({ path: 'presaleStartsAt', message: 'the presale starts at or after registration closes' });
  if (t(input.presaleStartsAt) >= t(input.presaleEndsAt))
    issues.push({ path: 'presaleEndsAt', message: 'the presale must end after it starts' });
  const now = ctx.clock.now();
  return withTransaction(ctx, async (tx) => {
    const ev = await eventForTenant(tx, actor.tenantId, eventId, { lock: true });
    const [onsale] = await tx.select().from(onsales).where(eq(onsales.eventId, ev.id));
    if (!onsale || ev.status !== 'scheduled')
      throw conflict('schedule the onsale first: a presale runs through its waiting room', {
        reason: 'onsale_not_scheduled',
      });
    if (t(input.presaleEndsAt) <= t(onsale.onsaleAt))
      issues.push({ path: 'presaleEndsAt', message: 'the presale must still run once the onsale has started' });
    issues.push(...startOrderIssues({ startsAt: ev.startsAt, presaleEndsAt: input.presaleEndsAt }, 'presaleEndsAt'));
    if (issues.length) throw new DomainError('validation_failed', 'the presale is not valid', { issues });
    const [prev] = await tx.select().from(presales).where(eq(presales.eventId, ev.id)).for('update');
    if (prev?.drawnAt) throw conflict('the lottery has been drawn; the presale can no longer change');
    if (prev && t(prev.registrationClosesAt) <= t(now)) throw conflict('registration has closed');
    const values = {
      registrationOpensAt: input.registrationOpensAt,
      registrationClosesAt: input.registrationClosesAt,
      presaleStartsAt: input.presaleStartsAt,
      presaleEndsAt: input.presaleEndsAt,
      invitations: input.invitations,
      waitlistSize: input.waitlistSize ?? 0,
      invitationTtlSeconds: input.invitationTtlSeconds ?? 3600,
      updatedAt: now,
    };
    const [row] = await tx
      .insert(presales)
      .values({
        eventId: ev.id,
        tenantId: actor.tenantId,
        ...values,
        lotterySeed: randomBytes(32).toString('hex'),
        openedBy: `${actor.kind}:${actor.sub}`,
      })
      .onConflictDoUpdate({ target: presales.eventId, set: values })
      .returning();
    ctx.log.info('presale opened', { eventId: ev.id, invitations: values.invitations, waitlist: values.waitlistSize });
    return presaleView(row!);
  });
}

/** What presaleOf throws for an event that exists but has no presale: a page shows "none yet" rather than an error. */
export const isNoPresale = (err: unknown) =>
  err instanceof DomainError && (err.details as { reason?: string } | undefined)?.reason === 'no_presale';

export async function presaleOf(ctx: Services, tx: Tx | undefined, eventId: string, lock = false): Promise<Presale> {
  const q = (tx ?? dbOf(ctx)).select().from(presales).where(eq(presales.eventId, eventId));
  const [p] = lock ? await q.for('update') : await q;
  if (p) return p;
  // An event without a presale is in a state that refuses the request (409); only an unknown event is a 404.
  const [ev] = await (tx ?? dbOf(ctx)).select({ id: events.id }).from(events).where(eq(events.id, eventId));
  if (!ev) throw notFound('event');
  throw conflict('this event has no presale', { reason: 'no_presale' });
}

const REGISTRATIONS_SHOWN = 200;

/**
 * The promoter's view of a presale: its settings, counts, the accounts registered per IP and device (the
 * registrations list shows each one's beside it), the invitations and their conversion (used: the buyer joined the
 * waiting room with the code).
 */
export async function getPresale({ ctx, actor, eventId }: { ctx: Services; actor: PromoterActor; eventId: string }) {
  const db = dbOf(ctx);
  await eventForTenant(db, actor.tenantId, eventId);
  const p = await presaleOf(ctx, undefined, eventId);
  const [outcomes, statuses, sources, regs, invitations, signals] = await Promise.all([
    db
      .select({ outcome: presaleRegistrations.outcome, n: count() })
      .from(presaleRegistrations)
      .where(eq(presaleRegistrations.eventId, eventId))
      .groupBy(presaleRegistrations.outcome),
    db
      .select({ status: presaleInvitations.status, n: count() })
      .from(presaleInvitations)
      .where(eq(presaleInvitations.eventId, eventId))
      .groupBy(presaleInvitations.status),
    db
      .select({
        kind: presaleSources.kind,
        value: presaleSources.value,
        accounts: presaleSources.accounts,
        refused: presaleSources.refused,
      })
      .from(presaleSources)
      .where(eq(presaleSources.eventId, eventId))
      .orderBy(desc(presaleSources.accounts), desc(presaleSources.refused), asc(presaleSources.value))
      .limit(50),
    db.execute<{
      buyer_sub: string;
      ip: string;
      device_id: string;
      registered_at: Date;
      draw_rank: number | null;
      outcome: string;
      ip_accounts: number;
      device_accounts: number;
    }>(sql`
      SELECT r.buyer_sub, r.ip, r.device_id, r.registered_at, r.draw_rank, r.outcome,
             coalesce(si.accounts, 0) AS ip_accounts, coalesce(sd.accounts, 0) AS device_accounts
        FROM presale_registrations r
        LEFT JOIN presale_sources si ON si.event_id = r.event_id AND si.kind = 'ip' AND si.value = r.ip
        LEFT JOIN presale_sources sd ON sd.event_id = r.event_id AND sd.kind = 'device' AND sd.value = r.device_id
       WHERE r.event_id = ${eventId}
       ORDER BY r.draw_rank NULLS LAST, r.registered_at
       LIMIT ${REGISTRATIONS_SHOWN}`),
    db
      .select()
      .from(presaleInvitations)
      .where(eq(presaleInvitations.eventId, eventId))
      .orderBy(asc(presaleInvitations.offeredAt), asc(presaleInvitations.buyerSub))
      .limit(REGISTRATIONS_SHOWN),
    readBotSignals(ctx, eventId),
  ]);
  const byOutcome = Object.fromEntries(outcomes.map((o) => [o.outcome, o.n]));
  const byStatus = Object.fromEntries(statuses.map((s) => [s.status, s.n]));
  const offered = statuses.reduce((a, s) => a + s.n, 0);
  return {
    ...presaleView(p),
    limits: {
      accountsPerIp: ctx.config.PRESALE_MAX_ACCOUNTS_PER_IP,
      accountsPerDevice: ctx.config.PRESALE_MAX_ACCOUNTS_PER_DEVICE,
    },
    counts: {
      registrations: outcomes.reduce((a, o) => a + o.n, 0),
      invited: byOutcome.invited ?? 0,
      waitlisted: byOutcome.waitlisted ?? 0,
      notSelected: byOutcome.not_selected ?? 0,
      refusedDuplicate: signals.registrations_duplicate,
      refusedOverIpLimit: signals.registrations_over_ip_limit,
      refusedOverDeviceLimit: signals.registrations_over_device_limit,
    },
    conversion: {
      offered,
      open: byStatus.offered ?? 0,
      used: byStatus.used ?? 0,
      declined: byStatus.declined ?? 0,
      lapsed: byStatus.lapsed ?? 0,
      /** Used over offered (0 before any offer). */
      rate: offered ? (byStatus.used ?? 0) / offered : 0,
    },
    sources,
    registrations: regs.rows.map((r) => ({
      buyer: r.buyer_sub,
      ip: r.ip,
      deviceId: r.device_id,
      registeredAt: new Date(r.registered_at).toISOString(),
      drawRank: r.draw_rank,
      outcome: r.outcome,
      accountsFromIp: Number(r.ip_accounts),
      accountsFromDevice: Number(r.device_accounts),
    })),
    invitations: invitations.map((i) => ({
      buyer: i.buyerSub,
      status: i.status,
      fromWaitlistRank: i.fromWaitlistRank,
      offeredAt: i.offeredAt.toISOString(),
      expiresAt: i.expiresAt.toISOString(),
      usedAt: i.usedAt?.toISOString() ?? null,
    })),
  };
}

/**
 * Offers the places no open or used invitation holds to the next buyers of the waitlist, in the draw's order, while
 * the presale runs. The caller holds the presale's row lock, so two offers never count the same free place.
 */
export async function offerFreePlaces(tx: Tx, p: Presale, now: Date): Promise<number> {
  if (!p.drawnAt || now.getTime() >= p.presaleEndsAt.getTime()) return 0;
  const [held] = await tx
    .select({ n: count() })
    .from(presaleInvitations)
    .where(and(eq(presaleInvitations.eventId, p.eventId), inArray(presaleInvitations.status, ['offered', 'used'])));
  const free = p.invitations - (held?.n ?? 0);
  if (free <= 0) return 0;
  const next = await tx
    .select({
      id: presaleRegistrations.id,
      buyerSub: presaleRegistrations.buyerSub,
      rank: presaleRegistrations.drawRank,
    })
    .from(presaleRegistrations)
    .where(and(eq(presaleRegistrations.eventId, p.eventId), eq(presaleRegistrations.outcome, 'waitlisted')))
    .orderBy(asc(presaleRegistrations.drawRank))
    .limit(free);
  if (!next.length) return 0;
  await tx
    .update(presaleRegistrations)
    .set({ outcome: 'invited' })
    .where(
      inArray(
        presaleRegistrations.id,
        next.map((n) => n.id),
      ),
    );
  await tx.insert(presaleInvitations).values(
    next.map((n) => ({
      eventId: p.eventId,
      buyerSub: n.buyerSub,
      accessCode: newAccessCode(),
      fromWaitlistRank: n.rank,
      offeredAt: now,
      expiresAt: invitationExpiry(p, now),
    })),
  );
  return next.length;
}
