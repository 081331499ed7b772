import { count, eq } from 'drizzle-orm';
import type { Services } from '../context';
import { onsales, presales, revocations } from '../db/schema';
import { dbOf } from '../db/tx';
import { eventForTenant } from '../events/events';
import type { PromoterActor } from '../lib/actors';
import { commitmentOf, seedRevealed } from '../waiting-room/fairness';
import { readBotSignals } from './signals';

/**
 * An onsale's bot report: what the door refused and why, from the counters of ./signals.ts, the revocations made
 * for the onsale (revocations.event_id), and where anyone can check the queue's and the lottery's fairness.
 */
export async function botReport({ ctx, actor, eventId }: { ctx: Services; actor: PromoterActor; eventId: string }) {
  const db = dbOf(ctx);
  await eventForTenant(db, actor.tenantId, eventId);
  const [signals, [onsale], [presale], [revoked], revealed] = await Promise.all([
    readBotSignals(ctx, eventId),
    db.select({ seed: onsales.fairnessSeed }).from(onsales).where(eq(onsales.eventId, eventId)),
    db
      .select({ seed: presales.lotterySeed, drawnAt: presales.drawnAt })
      .from(presales)
      .where(eq(presales.eventId, eventId)),
    db.select({ n: count() }).from(revocations).where(eq(revocations.eventId, eventId)),
    seedRevealed(ctx, eventId),
  ]);
  return {
    eventId,
    challenges: {
      issued: signals.challenges_issued,
      solved: signals.challenges_solved,
      note: 'counted by the proof of work at the door when it issues and verifies challenges; zero while it is off',
    },
    joinsRefused: {
      rateLimited: signals.joins_rate_limited,
      withoutPresaleCode: signals.joins_without_presale_code,
    },
    tokensRevoked: revoked?.n ?? 0,
    registrationsRefused: {
      duplicate: signals.registrations_duplicate,
      overIpLimit: signals.registrations_over_ip_limit,
      overDeviceLimit: signals.registrations_over_device_limit,
    },
    fairness: onsale
      ? {
          commitment: commitmentOf(onsale.seed),
          revealed,
          record: `/events/${eventId}/queue/fairness`,
        }
      : null,
    lottery: presale
      ? {
          commitment: commitmentOf(presale.seed),
          drawn: presale.drawnAt !== null,
          record: `/events/${eventId}/presale/lottery`,
        }
      : null,
  };
}
