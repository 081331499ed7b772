import { DomainError, tierSeatPrice } from '@onsale/contracts';
import type { Services } from '../context';
import { assertRole, type PromoterActor } from '../lib/actors';
import { conflict } from '../lib/errors';
import { eventForTenant } from './events';

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
  const ev = await eventForTenant(ctx.db, actor.tenantId, eventId);
  const client = await ctx.pool.connect();
  try {
    await client.query('begin');
    const locked = await client.query<{ status: string; onsale_at: Date | null }>(
      `select e.status, o.onsale_at from events e left join onsales o on o.event_id = e.id
        where e.id = $1 and e.tenant_id = $2 for update of e`,
      [ev.id, actor.tenantId],
    );
    const cur = locked.rows[0] && {
      ...locked.rows[0],
      // The platform's clock (the scheduler's), not the database's: one notion of "the onsale started".
      started: locked.rows[0].onsale_at !== null && locked.rows[0].onsale_at <= ctx.clock.now(),
    };
    if (!cur) throw new DomainError('not_found', 'event not found');
    if (cur.started || (cur.status !== 'draft' && cur.status !== 'scheduled'))
      throw conflict(
        cur.started
          ? `the onsale started at ${cur.onsale_at?.toISOString()}; fees can no longer change`
          : `event is ${cur.status}; fees can no longer change`,
        { status: cur.status, onsaleAt: cur.onsale_at?.toISOString() ?? null },
      );
    const tier = await client.query<{ price: number }>(
      'select price from price_tiers where event_id = $1 and code = $2 for update',
      [ev.id, code],
    );
    if (!tier.rows[0]) throw new DomainError('not_found', `price tier '${code}' not found`, { code });
    if (input.fees === 'included' && input.fee > tier.rows[0].price)
      throw new DomainError('validation_failed', 'a fee included in the price cannot exceed the price', {
        issues: [{ path: 'fee', message: `at most the tier's price (${tier.rows[0].price}) when fees are included` }],
      });
    const updated = await client.query<{ code: string; name: string; price: number; currency: string; fee: number }>(
      `update price_tiers set fee = $3, fees_included = $4 where event_id = $1 and code = $2
       returning code, name, price, currency, fee`,
      [ev.id, code, input.fee, input.fees === 'included'],
    );
    await client.query(
      `update onsales set load_status = 'pending', next_load_at = $2, load_attempts = 0, load_lease_until = null
        where event_id = $1 and load_status in ('loaded', 'failed', 'gave_up')`,
      [ev.id, ctx.clock.now()],
    );
    await client.query('commit');
    ctx.log.info('tier fees set', { eventId: ev.id, tier: code, fee: input.fee, fees: input.fees });
    const t = updated.rows[0]!;
    return { ...t, fees: input.fees, buyerPays: tierSeatPrice({ ...t, fees: input.fees }) };
  } catch (err) {
    await client.query('rollback').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
