import { and, count, eq, lt, sql } from 'drizzle-orm';
import { countBotSignal } from '../bot-report/signals';
import type { Services } from '../context';
import { onsales, presaleInvitations, presaleRegistrations, presaleSources } from '../db/schema';
import { dbOf, withTransaction } from '../db/tx';
import type { BuyerActor } from '../lib/actors';
import { conflict, notFound } from '../lib/errors';
import { pseudonymOf } from '../waiting-room/fairness';
import { offerFreePlaces, presaleOf } from './presale';

type SourceKind = 'ip' | 'device';

/** A refusal found inside the registration's transaction: thrown to roll it back, answered after. */
class RegistrationRefused extends Error {
  constructor(readonly kind: SourceKind) {
    super(kind);
  }
}

/**
 * Registers a buyer account for a presale: one registration per account (the unique index refuses a second), and at
 * most PRESALE_MAX_ACCOUNTS_PER_IP accounts per client IP and PRESALE_MAX_ACCOUNTS_PER_DEVICE per device, each
 * raised by a conditional UPDATE in the registration's transaction so concurrent registrations cannot pass a limit
 * together. Every refusal is counted for the promoter (the source's `refused`, the bot report's signals).
 */
export async function registerForPresale({
  ctx,
  actor,
  eventId,
  ip,
  deviceId,
}: {
  ctx: Services;
  actor: BuyerActor;
  eventId: string;
  ip: string;
  deviceId: string;
}) {
  const now = ctx.clock.now();
  const p = await presaleOf(ctx, undefined, eventId);
  if (now.getTime() < p.registrationOpensAt.getTime())
    throw conflict('registration for this presale has not opened yet', {
      reason: 'registration_not_open',
      registrationOpensAt: p.registrationOpensAt.toISOString(),
    });
  if (now.getTime() >= p.registrationClosesAt.getTime())
    throw conflict('registration for this presale has closed', {
      reason: 'registration_closed',
      registrationClosesAt: p.registrationClosesAt.toISOString(),
    });
  const limits: Record<SourceKind, number> = {
    ip: ctx.config.PRESALE_MAX_ACCOUNTS_PER_IP,
    device: ctx.config.PRESALE_MAX_ACCOUNTS_PER_DEVICE,
  };
  const sources: [SourceKind, string][] = [
    ['device', deviceId],
    ['ip', ip],
  ];
  try {
    const registered = await withTransaction(ctx, async (tx) => {
      const [row] = await tx
        .insert(presaleRegistrations)
        .values({ eventId, buyerSub: actor.sub, ip, deviceId, registeredAt: now })
        .onConflictDoNothing()
        .returning({ id: presaleRegistrations.id });
      if (!row) return false;
      // Always in the same order (device, then IP), so two registrations never wait on each other's rows.
      for (const [kind, value] of sources) {
        await tx.insert(presaleSources).values({ eventId, kind, value }).onConflictDoNothing();
        const [raised] = await tx
          .update(presaleSources)
          .set({ accounts: sql`${presaleSources.accounts} + 1` })
          .where(
            and(
              eq(presaleSources.eventId, eventId),
              eq(presaleSources.kind, kind),
              eq(presaleSources.value, value),
              lt(presaleSources.accounts, limits[kind]),
            ),
          )
          .returning({ accounts: presaleSources.accounts });
        if (!raised) throw new RegistrationRefused(kind);
      }
      return true;
    });
    if (!registered) {
      await countBotSignal(ctx, eventId, 'registrations_duplicate');
      throw conflict('this account is already registered for the presale', { reason: 'already_registered' });
    }
  } catch (err) {
    if (!(err instanceof RegistrationRefused)) throw err;
    const value = err.kind === 'ip' ? ip : deviceId;
    await dbOf(ctx)
      .insert(presaleSources)
      .values({ eventId, kind: err.kind, value, refused: 1 })
      .onConflictDoUpdate({
        target: [presaleSources.eventId, presaleSources.kind, presaleSources.value],
        set: { refused: sql`${presaleSources.refused} + 1` },
      });
    await countBotSignal(
      ctx,
      eventId,
      err.kind === 'ip' ? 'registrations_over_ip_limit' : 'registrations_over_device_limit',
    );
    throw conflict(
      err.kind === 'ip'
        ? `this network has registered the most accounts allowed (${limits.ip}) for the presale`
        : `this device has registered the most accounts allowed (${limits.device}) for the presale`,
      {
        reason: err.kind === 'ip' ? 'accounts_per_ip_exceeded' : 'accounts_per_device_exceeded',
        limit: limits[err.kind],
      },
    );
  }
  return presaleOutcome({ ctx, actor, eventId });
}

/**
 * What a buyer sees of a presale: its windows, whether they registered, and after the draw their outcome: an
 * invitation with its access code (bound to this account) and window, a place on the waitlist (how many are ahead
 * now), or not selected.
 */
export async function presaleOutcome({ ctx, actor, eventId }: { ctx: Services; actor: BuyerActor; eventId: string }) {
  const db = dbOf(ctx);
  const p = await presaleOf(ctx, undefined, eventId);
  const [[reg], [inv], [o]] = await Promise.all([
    db
      .select()
      .from(presaleRegistrations)
      .where(and(eq(presaleRegistrations.eventId, eventId), eq(presaleRegistrations.buyerSub, actor.sub))),
    db
      .select()
      .from(presaleInvitations)
      .where(and(eq(presaleInvitations.eventId, eventId), eq(presaleInvitations.buyerSub, actor.sub))),
    db.select({ salt: onsales.fairnessSalt }).from(onsales).where(eq(onsales.eventId, eventId)),
  ]);
  let waitlistAhead: number | null = null;
  if (reg?.outcome === 'waitlisted') {
    const [ahead] = await db
      .select({ n: count() })
      .from(presaleRegistrations)
      .where(
        and(
          eq(presaleRegistrations.eventId, eventId),
          eq(presaleRegistrations.outcome, 'waitlisted'),
          lt(presaleRegistrations.drawRank, reg.drawRank!),
        ),
      );
    waitlistAhead = ahead?.n ?? 0;
  }
  return {
    eventId,
    registrationOpensAt: p.registrationOpensAt.toISOString(),
    registrationClosesAt: p.registrationClosesAt.toISOString(),
    presaleStartsAt: p.presaleStartsAt.toISOString(),
    presaleEndsAt: p.presaleEndsAt.toISOString(),
    drawn: p.drawnAt !== null,
    registered: Boolean(reg),
    registeredAt: reg?.registeredAt.toISOString() ?? null,
    /** Your name in the published lottery log. */
    pseudonym: o ? pseudonymOf(o.salt, actor.sub) : null,
    outcome: !reg ? ('not_registered' as const) : reg.outcome === 'pending' ? ('registered' as const) : reg.outcome,
    drawRank: reg?.drawRank ?? null,
    waitlistAhead,
    invitation: inv
      ? {
          accessCode: inv.accessCode,
          status: inv.status,
          validFrom: p.presaleStartsAt.toISOString(),
          expiresAt: inv.expiresAt.toISOString(),
          usedAt: inv.usedAt?.toISOString() ?? null,
        }
      : null,
  };
}

/** A buyer gives up their invitation: its place goes to the next buyer on the waitlist at once. */
export async function declineInvitation({
  ctx,
  actor,
  eventId,
}: {
  ctx: Services;
  actor: BuyerActor;
  eventId: string;
}) {
  const now = ctx.clock.now();
  await withTransaction(ctx, async (tx) => {
    const p = await presaleOf(ctx, tx, eventId, true);
    const [declined] = await tx
      .update(presaleInvitations)
      .set({ status: 'declined', closedAt: now })
      .where(
        and(
          eq(presaleInvitations.eventId, eventId),
          eq(presaleInvitations.buyerSub, actor.sub),
          eq(presaleInvitations.status, 'offered'),
        ),
      )
      .returning({ id: presaleInvitations.id });
    if (!declined) throw notFound('open invitation');
    await offerFreePlaces(tx, p, now);
  });
  return presaleOutcome({ ctx, actor, eventId });
}
