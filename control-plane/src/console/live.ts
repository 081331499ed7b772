import type { Services } from '../context';
import type { PromoterActor } from '../lib/actors';
import { getOnsale } from '../onsale/status';
import { listDecisions } from '../release-controller/override';
import { getSalesBySection, getSalesSummary, getSeatStates } from '../reporting/sales';

/** What the live view shows at one instant; the page turns successive snapshots into rates and charts. */
export async function liveSnapshot({ ctx, actor, eventId }: { ctx: Services; actor: PromoterActor; eventId: string }) {
  // Sales first: it checks the event belongs to the actor's tenant before anything else is read.
  const summary = await getSalesSummary({ ctx, actor, eventId });
  const [sections, onsale, decisions, seats] = await Promise.all([
    getSalesBySection({ ctx, actor, eventId }),
    getOnsale({ ctx, tenantId: actor.tenantId, eventId }).catch(() => null),
    listDecisions({ ctx, eventId, limit: 10 }),
    getSeatStates({ ctx, actor, eventId }),
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
