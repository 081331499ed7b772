import type { Services } from '../context';
import type { PromoterActor } from '../lib/actors';
import { getOnsale } from '../onsale/status';
import { listDecisions } from '../release-controller/override';
import { getSalesBySection, getSalesSummary } from '../reporting/sales';

/** What the live view shows at one instant; the page turns successive snapshots into rates and charts. */
export async function liveSnapshot({ ctx, actor, eventId }: { ctx: Services; actor: PromoterActor; eventId: string }) {
  // Sales first: it checks the event belongs to the actor's tenant before anything else is read.
  const summary = await getSalesSummary({ ctx, actor, eventId });
  const [sections, onsale, decisions, seats] = await Promise.all([
    getSalesBySection({ ctx, actor, eventId }),
    getOnsale({ ctx, tenantId: actor.tenantId, eventId }).catch(() => null),
    listDecisions({ ctx, eventId, limit: 10 }),
    seatStates(ctx, actor.tenantId, eventId),
  ]);
  return {
    at: ctx.clock.now().toISOString(),
    room: onsale
      ? {
          waiting: onsale.room.waiting,
          released: onsale.room.released,
          activeShoppers: onsale.room.activeShoppers,
          rate: onsale.room.paused ? 0 : onsale.room.rate,
          paused: onsale.room.paused,
          maxReleaseRate: onsale.maxReleaseRate,
        }
      : null,
    sales: {
      holds: summary.holds,
      paidOrders: summary.paidOrders,
      seatsSold: summary.seatsSold,
      gross: summary.gross,
      refunded: summary.refunded,
      net: summary.net,
      declines: summary.declines,
      expiries: summary.expiries,
      funnel: summary.funnel,
    },
    sections: sections.sections,
    decisions: decisions.map((d) => ({ at: d.at, oldRate: d.oldRate, newRate: d.newRate, reason: d.reason })),
    seats,
  };
}
export type LiveSnapshot = Awaited<ReturnType<typeof liveSnapshot>>;

/**
 * Held and sold seat ids from the reporting projection's orders (a held or declined order still
 * holds its seats until they are released; a paid one has sold them). Everything else is free.
 */
async function seatStates(ctx: Services, tenantId: string, eventId: string) {
  const r = await ctx.pool.query<{ state: 'held' | 'sold'; seat_id: string }>(
    `SELECT CASE WHEN o.status IN ('paid', 'ticketed') THEN 'sold' ELSE 'held' END AS state, s->>'seatId' AS seat_id
       FROM reporting.orders o CROSS JOIN LATERAL jsonb_array_elements(o.seats) s
      WHERE o.tenant_id = $1 AND o.event_id = $2 AND o.status IN ('held', 'declined', 'paid', 'ticketed')`,
    [tenantId, eventId],
  );
  const held: string[] = [];
  const sold: string[] = [];
  for (const row of r.rows) (row.state === 'sold' ? sold : held).push(row.seat_id);
  return { held, sold };
}
