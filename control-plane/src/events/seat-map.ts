import { randomUUID } from 'node:crypto';
import { DomainError, nulIssues } from '@onsale/contracts';
import { eq, sql } from 'drizzle-orm';
import type { PoolClient } from 'pg';
import type { Services } from '../context';
import { priceTiers } from '../db/schema';
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
  const ev = await eventForTenant(ctx.db, actor.tenantId, eventId);
  const known: TierDecl[] = (await ctx.db.select().from(priceTiers).where(eq(priceTiers.eventId, ev.id))).map((t) => ({
    code: t.code,
    name: t.name,
    price: t.price,
    currency: t.currency,
    fee: t.fee,
    fees: t.feesIncluded ? 'included' : 'added',
  }));
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
  const { tiers, seats, gaAreas } = parsed.map;

  const client = await ctx.pool.connect();
  try {
    await client.query('begin');
    const locked = await client.query<{ status: string; seat_map_version: number }>(
      'select status, seat_map_version from events where id = $1 and tenant_id = $2 for update',
      [ev.id, actor.tenantId],
    );
    const cur = locked.rows[0];
    if (!cur) throw new DomainError('not_found', 'event not found');
    if (cur.status !== 'draft' && cur.status !== 'scheduled')
      throw conflict(`event is ${cur.status}; its seat map is final`);
    const loaded = await client.query('select 1 from onsales where event_id = $1 and load_status = $2', [
      ev.id,
      'loaded',
    ]);
    if (loaded.rowCount)
      throw conflict('the seat map is already loaded into the purchase cell; it can no longer change');

    const existing = await client.query<{ id: string; label: string }>(
      'select id, label from seats where event_id = $1',
      [ev.id],
    );
    const idByLabel = new Map(existing.rows.map((r) => [r.label, r.id]));
    const ids = seats.map((s) => idByLabel.get(s.label) ?? randomUUID());
    const labels = seats.map((s) => s.label);
    await client.query('delete from seats where event_id = $1 and not (label = any($2::text[]))', [ev.id, labels]);
    await client.query(
      `insert into seats (id, event_id, label, section, row, tier_code)
       select u.id, $1, u.label, u.section, u.row, u.tier
       from unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[]) as u(id, label, section, row, tier)
       on conflict (event_id, label) do update set section = excluded.section, row = excluded.row, tier_code = excluded.tier_code`,
      [ev.id, ids, labels, seats.map((s) => s.section), seats.map((s) => s.row), seats.map((s) => s.tier)],
    );
    await storeGaAreas(client, ev.id, gaAreas);
    await client.query('delete from price_tiers where event_id = $1', [ev.id]);
    const used = new Set([...seats.map((s) => s.tier), ...gaAreas.map((a) => a.tier)]);
    const keep = tiers.filter((t) => used.has(t.code));
    await client.query(
      `insert into price_tiers (event_id, code, name, price, currency, fee, fees_included)
       select $1, u.code, u.name, u.price, u.currency, u.fee, u.fees_included
         from unnest($2::text[], $3::text[], $4::int[], $5::text[], $6::int[], $7::boolean[])
              as u(code, name, price, currency, fee, fees_included)`,
      [
        ev.id,
        keep.map((t) => t.code),
        keep.map((t) => t.name),
        keep.map((t) => t.price),
        keep.map((t) => t.currency),
        keep.map((t) => t.fee),
        keep.map((t) => t.fees === 'included'),
      ],
    );
    const upd = await client.query<{ seat_map_version: number }>(
      'update events set seat_count = $2, seat_map_version = seat_map_version + 1, updated_at = now() where id = $1 returning seat_map_version',
      [ev.id, seats.length],
    );
    // The scheduler compares with its clock, so the next load is due by that clock.
    await client.query("update onsales set load_status = 'pending', next_load_at = $2 where event_id = $1", [
      ev.id,
      ctx.clock.now(),
    ]);
    await client.query('commit');
    ctx.log.info('seat map stored', { eventId: ev.id, seats: seats.length, tiers: keep.length });
    return {
      eventId: ev.id,
      seats: seats.length,
      tiers: keep,
      gaAreas: await client
        .query<{ id: string; name: string; capacity: number; tier: string }>(
          'select id, name, capacity, tier_code as tier from ga_areas where event_id = $1 order by name',
          [ev.id],
        )
        .then((r) => r.rows),
      seatMapVersion: upd.rows[0]?.seat_map_version ?? 0,
      created: seats.filter((s) => !idByLabel.has(s.label)).length,
    };
  } catch (err) {
    await client.query('rollback').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/** The upload's GA areas replace the event's; an area keeps its id while its name stays (like a seat's label). */
async function storeGaAreas(client: PoolClient, eventId: string, areas: GaAreaDecl[]) {
  const names = areas.map((a) => a.name);
  await client.query('delete from ga_areas where event_id = $1 and not (name = any($2::text[]))', [eventId, names]);
  await client.query(
    `insert into ga_areas (id, event_id, name, capacity, tier_code)
     select gen_random_uuid(), $1, u.name, u.capacity, u.tier from unnest($2::text[], $3::int[], $4::text[]) as u(name, capacity, tier)
     on conflict (event_id, name) do update set capacity = excluded.capacity, tier_code = excluded.tier_code`,
    [eventId, names, areas.map((a) => a.capacity), areas.map((a) => a.tier)],
  );
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
  const ev = await eventForTenant(ctx.db, actor.tenantId, eventId);
  const tiers = await ctx.db.select().from(priceTiers).where(eq(priceTiers.eventId, ev.id));
  const sections = await ctx.db.execute<{ section: string; tier_code: string; n: string }>(
    sql`select section, tier_code, count(*) as n from seats where event_id = ${ev.id} group by section, tier_code order by section, tier_code`,
  );
  const rows = await ctx.db.execute<{ id: string; label: string; section: string; row: string; tier_code: string }>(
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
      await ctx.db.execute<{ id: string; name: string; capacity: number; tier_code: string }>(
        sql`select id, name, capacity, tier_code from ga_areas where event_id = ${ev.id} order by name`,
      )
    ).rows.map((a) => ({ id: a.id, name: a.name, capacity: a.capacity, tier: a.tier_code })),
    sections: sections.rows.map((s) => ({ section: s.section, tier: s.tier_code, seats: Number(s.n) })),
    seats: rows.rows.map((r) => ({ id: r.id, label: r.label, section: r.section, row: r.row, tier: r.tier_code })),
    nextAfter: rows.rows.length === page.limit ? rows.rows[rows.rows.length - 1]?.label : null,
  };
}
