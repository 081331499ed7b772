import { createHash } from 'node:crypto';
import { naturalCompare, tierSeatPrice } from '@onsale/contracts';
import { asc, eq, sql } from 'drizzle-orm';
import type { Services } from '../context';
import type { DbOrTx } from '../db/client';
import { type EventStatus, events, gaAreas, onsales, priceTiers, seats } from '../db/schema';
import { withTransaction } from '../db/tx';
import { notFound } from '../lib/errors';
import { layOutSeats, SEAT_LAYOUT } from './layout';

/** The statuses a buyer may see: a draft is the promoter's own, an ended event has nothing left to sell. */
export const PUBLIC_STATUSES = ['scheduled', 'on_sale', 'paused', 'sold_out'] as const satisfies EventStatus[];
type PublicStatus = (typeof PUBLIC_STATUSES)[number];
const isPublic = (s: EventStatus): s is PublicStatus => (PUBLIC_STATUSES as readonly string[]).includes(s);

/** One snapshot per document: the parts of a page or seat map and its tag never come from two uploads. */
const SNAPSHOT = { isolationLevel: 'repeatable read', accessMode: 'read only' } as const;

async function publicEvent(db: DbOrTx, eventId: string) {
  const [ev] = await db
    .select({
      id: events.id,
      name: events.name,
      venue: events.venue,
      timeZone: events.timeZone,
      startsAt: events.startsAt,
      status: events.status,
      seatCount: events.seatCount,
      seatMapVersion: events.seatMapVersion,
      roomOpensAt: onsales.roomOpensAt,
      onsaleAt: onsales.onsaleAt,
    })
    .from(events)
    .leftJoin(onsales, eq(onsales.eventId, events.id))
    .where(eq(events.id, eventId));
  // A draft answers like an id that never existed, so unannounced events cannot be probed.
  if (!ev || !isPublic(ev.status)) throw notFound('event');
  return { ...ev, status: ev.status };
}

const gaAreasOf = (db: DbOrTx, eventId: string) =>
  db
    .select({ id: gaAreas.id, name: gaAreas.name, capacity: gaAreas.capacity, tier: gaAreas.tierCode })
    .from(gaAreas)
    .where(eq(gaAreas.eventId, eventId))
    .orderBy(asc(gaAreas.name));

/** Weak: the validator names what the document says, not its bytes (the edge may compress them). */
const contentTag = (doc: unknown) =>
  `W/"${createHash('sha256').update(JSON.stringify(doc)).digest('base64url').slice(0, 27)}"`;

/**
 * An event's public page: what it is, where and when, what each tier costs the buyer (fees as they pay
 * them), its sections and GA areas, when the room and the sale open and whether it is selling. Nothing
 * about the tenant, the purchase cell or the load. The ETag hashes the content, so any change (a fee, the
 * sale pausing) gives a new one.
 */
export function readCatalogPage({ ctx, eventId }: { ctx: Services; eventId: string }) {
  return withTransaction(ctx, (db) => catalogPage(db, eventId), SNAPSHOT);
}

async function catalogPage(db: DbOrTx, eventId: string) {
  const ev = await publicEvent(db, eventId);
  const tiers = await db.select().from(priceTiers).where(eq(priceTiers.eventId, ev.id));
  const sections = await db.execute<{ section: string; seats: number; tiers: string[] }>(sql`
    select section, count(*)::int as seats, array_agg(distinct tier_code order by tier_code) as tiers
      from seats where event_id = ${ev.id} group by section`);
  const areas = await gaAreasOf(db, ev.id);
  const doc = {
    eventId: ev.id,
    name: ev.name,
    venue: ev.venue,
    timeZone: ev.timeZone,
    startsAt: ev.startsAt.toISOString(),
    saleStatus: ev.status,
    roomOpensAt: ev.roomOpensAt?.toISOString() ?? null,
    onsaleAt: ev.onsaleAt?.toISOString() ?? null,
    seatCount: ev.seatCount,
    seatMapVersion: ev.seatMapVersion,
    tiers: tiers
      .sort((a, b) => naturalCompare(a.code, b.code))
      .map((t) => {
        const fees = t.feesIncluded ? ('included' as const) : ('added' as const);
        return {
          code: t.code,
          name: t.name,
          currency: t.currency,
          price: t.price,
          fee: t.fee,
          fees,
          buyerPays: tierSeatPrice({ price: t.price, fee: t.fee, fees }),
        };
      }),
    sections: sections.rows.sort((a, b) => naturalCompare(a.section, b.section)),
    gaAreas: areas,
  };
  return { doc, etag: contentTag(doc) };
}

/**
 * The seat map only changes on an upload, which bumps the event's seatMapVersion (and a public event's seat
 * map can still be replaced until it is loaded into its cell). So the version names the document: a poll
 * with the current tag is answered from the event row alone, without reading 20,000 seats.
 */
const seatMapTag = (eventId: string, version: number) => `W/"seat-map-${eventId}-${version}"`;

export async function catalogSeatMapTag({ ctx, eventId }: { ctx: Services; eventId: string }) {
  const ev = await publicEvent(ctx.db, eventId);
  return seatMapTag(ev.id, ev.seatMapVersion);
}

/**
 * The drawable seat map: sections as blocks of rows of seats, each seat with its id, label, tier and a
 * position (see ./layout.ts), and the GA areas with capacity and tier. Prices are on the page: a fee change
 * leaves the seat map (and its long cache) alone.
 */
export function readCatalogSeatMap({ ctx, eventId }: { ctx: Services; eventId: string }) {
  return withTransaction(ctx, (db) => catalogSeatMap(db, eventId), SNAPSHOT);
}

async function catalogSeatMap(db: DbOrTx, eventId: string) {
  const ev = await publicEvent(db, eventId);
  const seatRows = await db
    .select({ id: seats.id, label: seats.label, section: seats.section, row: seats.row, tier: seats.tierCode })
    .from(seats)
    .where(eq(seats.eventId, ev.id));
  const areas = await gaAreasOf(db, ev.id);
  const doc = {
    eventId: ev.id,
    seatMapVersion: ev.seatMapVersion,
    layout: SEAT_LAYOUT,
    seatCount: seatRows.length,
    sections: layOutSeats(seatRows).map((block) => ({
      section: block.section,
      x: block.x,
      width: block.width,
      height: block.height,
      rows: block.rows.map((r) => ({
        row: r.row,
        seats: r.seats.map(({ seat, x, y }) => ({ id: seat.id, label: seat.label, tier: seat.tier, x, y })),
      })),
    })),
    gaAreas: areas,
  };
  return { doc, etag: seatMapTag(ev.id, ev.seatMapVersion) };
}
