import { DomainError, tierPriceIssues, tierSeatPrice } from '@onsale/contracts';
import { and, eq, inArray } from 'drizzle-orm';
import type { Services } from '../context';
import { events, onsales, priceTiers } from '../db/schema';
import { withTransaction } from '../db/tx';
import { assertRole, type PromoterActor } from '../lib/actors';
import { conflict, notFound } from '../lib/errors';

export interface TierFees {
  /** Service fee per ticket, minor units. */
  fee: number;
  /** `included`: the buyer pays the tier's price, the fee inside it; `added`: price + fee. */
  fees: 'included' | 'added';
}

/**
 * Sets one price tier's fee before the onsale starts. Once buyers may be priced (the onsale time
 * has passed, or the sale is live) the fees are final: a buyer must pay what the hold showed.
 * An event already loaded into its cell is loaded again, so the cell prices orders with the new fee.
 */
export async function setTierFees({
  ctx,
  actor,
  eventId,
  code,
  input,
}: {
  ctx: Services;
  actor: PromoterActor;
  eventId: string;
  code: string;
  input: TierFees;
}) {
  assertRole(actor, 'manager');
  const t = await withTransaction(ctx, async (tx) => {
    const [row] = await tx
      .select({ status: events.status, onsaleAt: onsales.onsaleAt })
      .from(events)
      .leftJoin(onsales, eq(onsales.eventId, events.id))
      .where(and(eq(events.id, eventId), eq(events.tenantId, actor.tenantId)))
      .for('update', { of: events });
    if (!row) throw notFound('event');
    // The platform's clock (the scheduler's), not the database's: one notion of "the onsale started".
    const started = row.onsaleAt !== null && row.onsaleAt <= ctx.clock.now();
    if (started || (row.status !== 'draft' && row.status !== 'scheduled'))
      throw conflict(
        started
          ? `the onsale started at ${row.onsaleAt?.toISOString()}; fees can no longer change`
          : `event is ${row.status}; fees can no longer change`,
        { status: row.status, onsaleAt: row.onsaleAt?.toISOString() ?? null },
      );
    const [tier] = await tx
      .select({ price: priceTiers.price })
      .from(priceTiers)
      .where(and(eq(priceTiers.eventId, eventId), eq(priceTiers.code, code)))
      .for('update');
    if (!tier) throw new DomainError('not_found', `price tier '${code}' not found`, { code });
    // The body carries only the fee: whatever the rule refuses, the fee is what to change.
    const priced = tierPriceIssues({ price: tier.price, ...input });
    if (priced.length)
      throw new DomainError('validation_failed', `the fee does not fit the tier's price (${tier.price})`, {
        issues: priced.map((i) => ({ path: 'fee', message: i.message })),
      });
    const [updated] = await tx
      .update(priceTiers)
      .set({ fee: input.fee, feesIncluded: input.fees === 'included' })
      .where(and(eq(priceTiers.eventId, eventId), eq(priceTiers.code, code)))
      .returning({
        code: priceTiers.code,
        name: priceTiers.name,
        price: priceTiers.price,
        currency: priceTiers.currency,
        fee: priceTiers.fee,
      });
    await tx
      .update(onsales)
      .set({ loadStatus: 'pending', nextLoadAt: ctx.clock.now(), loadAttempts: 0, loadLeaseUntil: null })
      .where(and(eq(onsales.eventId, eventId), inArray(onsales.loadStatus, ['loaded', 'failed', 'gave_up'])));
    return updated!;
  });
  ctx.log.info('tier fees set', { eventId, tier: code, fee: input.fee, fees: input.fees });
  return { ...t, fees: input.fees, buyerPays: tierSeatPrice({ ...t, fees: input.fees }) };
}
