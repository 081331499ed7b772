import { sql } from 'drizzle-orm';
import type { Services } from '../context';
import { presaleInvitations, presales } from '../db/schema';
import { withTransaction } from '../db/tx';
import { drawLottery } from './lottery';
import { offerFreePlaces, presaleOf } from './presale';

/**
 * The worker's presale step (every PRESALE_TICK_MS): draws the presales whose registration has closed, lapses the
 * invitations whose window passed unused, and offers their places to the waitlist, one transaction per presale.
 * The join's check does not wait for it: it refuses an expired code by its own expiry (gate.ts).
 */
export async function presaleTick(ctx: Services) {
  const now = ctx.clock.now();
  const summary = { drawn: 0, lapsed: 0, offered: 0 };
  const due = await ctx.db
    .select({ eventId: presales.eventId })
    .from(presales)
    .where(sql`${presales.drawnAt} IS NULL AND ${presales.registrationClosesAt} <= ${now}`)
    .limit(20);
  for (const { eventId } of due) if ((await drawLottery(ctx, eventId)).drew) summary.drawn++;

  const lapsing = await ctx.db
    .selectDistinct({ eventId: presaleInvitations.eventId })
    .from(presaleInvitations)
    .where(sql`${presaleInvitations.status} = 'offered' AND ${presaleInvitations.expiresAt} <= ${now}`)
    .limit(20);
  for (const { eventId } of lapsing) {
    await withTransaction(ctx, async (tx) => {
      const p = await presaleOf(ctx, tx, eventId, true);
      const lapsed = await tx
        .update(presaleInvitations)
        .set({ status: 'lapsed', closedAt: now })
        .where(
          sql`${presaleInvitations.eventId} = ${eventId} AND ${presaleInvitations.status} = 'offered' AND ${presaleInvitations.expiresAt} <= ${now}`,
        )
        .returning({ id: presaleInvitations.id });
      summary.lapsed += lapsed.length;
      summary.offered += await offerFreePlaces(tx, p, now);
    });
  }
  if (summary.drawn || summary.lapsed || summary.offered) ctx.log.info('presale step', summary);
  return summary;
}
