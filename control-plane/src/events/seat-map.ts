import { randomUUID } from 'node:crypto';
import { DomainError, nulIssues } from '@onsale/contracts';
import { and, asc, eq, sql } from 'drizzle-orm';
import type { Services } from '../context';
import { events, gaAreas as gaAreaRows, onsales, priceTiers, seats as seatRows } from '../db/schema';
import { dbOf, type Tx, withTransaction } from '../db/tx';
import { assertRole, type PromoterActor } from '../lib/actors';
import { conflict } from '../lib/errors';
import { eventForTenant } from './events';
import { type GaAreaDecl, parseSeatMapCsv, parseSeatMapJson, type TierDecl } from './seat-map-parse';

export type SeatMapFormat = 'json' | 'csv';

/**
 * Replaces an event's seat map, all or nothing. Seat ids are minted here and kept for labels
 * that already existed, so re-uploading the same map changes no id. Refused once the seat map
 * is loaded into the purchase cell (the cell would refuse different seats anyway).
 */
export async function uploadSeatMap({
  ctx,
  actor,
  eventId,
  input,
}: {
  ctx: Services;
  actor: PromoterActor;
  eventId: string;
  input: { format: SeatMapFormat; body: string };
}) {
  assertRole(actor, 'manager');
  return withTransaction(ctx, async (tx) => {
    const ev = await eventForTenant(tx, actor.tenantId, eventId, { lock: true });
    const known: TierDecl[] = (await tx.select().from(priceTiers).where(eq(priceTiers.eventId, ev.id))).map((t) => ({
      code: t.code,
      name: t.name,
      price: t.price,
      currency: t.currency,
      fee: t.fee,
      fees: t.feesIncluded ? 'included' : 'added',
    }));
    const { tiers, seats, gaAreas: areas } = parseUpload(input, known);
    if (ev.status !== 'draft' && ev.status !== 'scheduled')
      throw conflict(`event is ${ev.status}; its seat map is final`);
    const [loaded] = await tx
      .select({ eventId: onsales.eventId })
      .from(onsales)
      .where(and(eq(onsales.eventId, ev.id), eq(onsales.loadStatus, 'loaded')));
    if (loaded) throw conflict('the seat map is already loaded into the purchase cell; it can no longer change');

    const existing = await tx
      .select({ id: seatRows.id, label: seatRows.label })
      .from(seatRows)
      .where(eq(seatRows.eventId, ev.id));
    const idByLabel = new Map(existing.map((r) => [r.label, r.id]));
    const col = <V>(pick: (s: (typeof seats)[number]) => V) => sql.param(seats.map(pick));
    await tx.execute(
      sql`delete from seats where event_id = ${ev.id} and not (label = any(${col((s) => s.label)}::text[]))`,
    );
    await tx.execute(sql`
      insert into seats (id, event_id, label, section, row, tier_code)
      select u.id, ${ev.id}, u.label, u.section, u.row, u.tier
        from unnest(${col((s) => idByLabel.get(s.label) ?? randomUUID())}::uuid[], ${col((s) => s.label)}::text[],
                    ${col((s) => s.section)}::text[], ${col((s) => s.row)}::text[], ${col((s) => s.tier)}::text[])
             as u(id, label, section, row, tier)
      on conflict (event_id, label) do update
        set section = excluded.section, row = excluded.row, tier_code = excluded.tier_code`);
    await storeGaAreas(tx, ev.id, areas);
    await tx.delete(priceTiers).where(eq(priceTiers.eventId, ev.id));
    const used = new Set([...seats.map((s) => s.tier), ...areas.map((a) => a.tier)]);
    const keep = tiers.filter((t) => used.has(t.code));
    if (keep.length)
      await tx.insert(priceTiers).values(
        keep.map((t) => ({
          eventId: ev.id,
          code: t.code,
          name: t.name,
          price: t.price,
          currency: t.currency,
          fee: t.fee,
          feesIncluded: t.fees === 'included',
        })),
      );
    const [upd] = await tx
      .update(events)
      .set({ seatCount: seats.length, seatMapVersion: sql`${events.seatMapVersion} + 1`, updatedAt: new Date() })
      .where(eq(events.id, ev.id))
      .returning({ seatMapVersion: events.seatMapVersion });
    // The scheduler compares with its clock, so the next load is due by that clock.
    await tx
      .update(onsales)
      .set({ loadStatus: 'pending', nextLoadAt: ctx.clock.now() })
      .where(eq(onsales.eventId, ev.id));
    ctx.log.info('seat map stored', { eventId: ev.id, seats: seats.length, tiers: keep.length });
    return {
      eventId: ev.id,
      seats: seats.length,
      tiers: keep,
      gaAreas: await tx
        .select({ id: gaAreaRows.id, name: gaAreaRows.name, capacity: gaAreaRows.capacity, tier: gaAreaRows.tierCode })
        .from(gaAreaRows)
        .where(eq(gaAreaRows.eventId, ev.id))
        .orderBy(asc(gaAreaRows.name)),
      seatMapVersion: upd?.seatMapVersion ?? 0,
      created: seats.filter((s) => !idByLabel.has(s.label)).length,
    };
  });
}

/** The upload parsed against the event's known tiers; any problem refuses it whole, naming each. */
function parseUpload(input: { format: SeatMapFormat; body: string }, known: TierDecl[]) {
  let parsed: ReturnType<typeof parseSeatMapJson>;
  if (input.format === 'json') {
    let body: unknown;
    try {
      body = JSON.parse(input.body);
    } catch {
      throw new DomainError('bad_request', 'body is not valid JSON');
    }
    parsed = parseSeatMapJson(body, known);
  } else parsed = parseSeatMapCsv(input.body, known);
  // The parser checks shapes and lengths; the platform's input rule (no NUL) applies to what it accepted.
  const nul = parsed.ok ? nulIssues(parsed.map) : [];
  if (nul.length)
    throw new DomainError('validation_failed', 'the seat map has text with NUL characters', { issues: nul });
  if (!parsed.ok) {
    throw new DomainError('validation_failed', `the seat map has ${parsed.total} problem(s); nothing was stored`, {
      issues: parsed.issues,
      total: parsed.total,
    });
  }
  return parsed.map;
}

/** The upload's GA areas replace the event's; an area keeps its id while its name stays (like a seat's label). */
async function storeGaAreas(tx: Tx, eventId: string, areas: GaAreaDecl[]) {
  const col = <V>(pick: (a: GaAreaDecl) => V) => sql.param(areas.map(pick));
  await tx.execute(
    sql`delete from ga_areas where event_id = ${eventId} and not (name = any(${col((a) => a.name)}::text[]))`,
  );
  await tx.execute(sql`
    insert into ga_areas (id, event_id, name, capacity, tier_code)
    select gen_random_uuid(), ${eventId}, u.name, u.capacity, u.tier
      from unnest(${col((a) => a.name)}::text[], ${col((a) => a.capacity)}::int[], ${col((a) => a.tier)}::text[])
           as u(name, capacity, tier)
    on conflict (event_id, name) do update set capacity = excluded.capacity, tier_code = excluded.tier_code`);
}

/** Tiers, per-section counts and a page of seats (ids, labels) ordered by label. */
export async function getSeatMap({
  ctx,
  actor,
  eventId,
  page,
}: {
  ctx: Services;
  actor: PromoterActor;
  eventId: string;
  page: { after?: string; limit: number };
}) {
  const db = dbOf(ctx);
  const ev = await eventForTenant(db, actor.tenantId, eventId);
  const tiers = await db.select().from(priceTiers).where(eq(priceTiers.eventId, ev.id));
  const sections = await db.execute<{ section: string; tier_code: string; n: string }>(
    sql`select section, tier_code, count(*) as n from seats where event_id = ${ev.id} group by section, tier_code order by section, tier_code`,
  );
  const rows = await db.execute<{ id: string; label: string; section: string; row: string; tier_code: string }>(
    sql`select id, label, section, row, tier_code from seats where event_id = ${ev.id} and label > ${page.after ?? ''} order by label limit ${page.limit}`,
  );
  return {
    eventId: ev.id,
    seatCount: ev.seatCount,
    seatMapVersion: ev.seatMapVersion,
    tiers: tiers.map((t) => ({
      code: t.code,
      name: t.name,
      price: t.price,
      currency: t.currency,
      fee: t.fee,
      fees: t.feesIncluded ? ('included' as const) : ('added' as const),
    })),
    gaAreas: (
      await db.execute<{ id: string; name: string; capacity: number; tier_code: string }>(
        sql`select id, name, capacity, tier_code from ga_areas where event_id = ${ev.id} order by name`,
      )
    ).rows.map((a) => ({ id: a.id, name: a.name, capacity: a.capacity, tier: a.tier_code })),
    sections: sections.rows.map((s) => ({ section: s.section, tier: s.tier_code, seats: Number(s.n) })),
    seats: rows.rows.map((r) => ({ id: r.id, label: r.label, section: r.section, row: r.row, tier: r.tier_code })),
    nextAfter: rows.rows.length === page.limit ? rows.rows[rows.rows.length - 1]?.label : null,
  };
}
