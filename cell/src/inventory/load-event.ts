import { createHash } from 'node:crypto';
import type { EventLoad } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { CellContext } from '../context';
import type { Tx } from '../db/client';
import { withWriteTx } from '../db/tx';
import { DomainError } from '../errors';
import { stripeCapacities } from '../holds/ga-units';

const CHUNK = 5_000;

export interface LoadResult {
  eventId: string;
  seats: number;
  created: boolean;
}

function seatsHash(load: EventLoad): string {
  const seats = [...load.seats]
    .sort((a, b) => (a.id < b.id ? -1 : 1))
    .map((s) => [s.id, s.label, s.section, s.row, s.price, s.currency]);
  // An event without GA areas hashes as before they existed: reloading an older event stays a no-op.
  const areas = [...(load.gaAreas ?? [])]
    .sort((a, b) => (a.id < b.id ? -1 : 1))
    .map((a) => [a.id, a.name, a.capacity, a.tier]);
  const canonical = areas.length ? [seats, areas] : seats;
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

/** Duplicate ids or labels, named by their row in the upload. */
function findDuplicates(load: EventLoad) {
  const issues: { path: string; message: string }[] = [];
  const ids = new Map<string, number>();
  const labels = new Map<string, number>();
  load.seats.forEach((s, row) => {
    const id = ids.get(s.id);
    if (id !== undefined) issues.push({ path: `seats.${row}.id`, message: `duplicate of row ${id}` });
    else ids.set(s.id, row);
    const label = labels.get(s.label);
    if (label !== undefined) issues.push({ path: `seats.${row}.label`, message: `duplicate of row ${label}` });
    else labels.set(s.label, row);
  });
  return issues;
}

/**
 * The tiers must be distinct, and a seat naming a declared tier must carry that tier's price and
 * currency (the tier is what prices it; a disagreement means the control plane sent two truths).
 */
function tierIssues(load: EventLoad) {
  const issues: { path: string; message: string }[] = [];
  const tiers = new Map<string, NonNullable<EventLoad['tiers']>[number]>();
  (load.tiers ?? []).forEach((t, i) => {
    if (tiers.has(t.code)) issues.push({ path: `tiers.${i}.code`, message: `duplicate tier '${t.code}'` });
    else tiers.set(t.code, t);
  });
  load.seats.forEach((s, row) => {
    const t = s.tier === undefined ? undefined : tiers.get(s.tier);
    if (!t) return;
    if (t.price !== s.price || t.currency !== s.currency)
      issues.push({ path: `seats.${row}.price`, message: `differs from tier '${t.code}' (${t.price} ${t.currency})` });
  });
  return issues;
}

/** GA areas: distinct ids and names, each priced by a declared tier. */
function gaIssues(load: EventLoad) {
  const issues: { path: string; message: string }[] = [];
  const tiers = new Set((load.tiers ?? []).map((t) => t.code));
  const ids = new Map<string, number>();
  const names = new Map<string, number>();
  const seatIds = new Set(load.seats.map((s) => s.id));
  (load.gaAreas ?? []).forEach((a, i) => {
    const id = ids.get(a.id);
    if (id !== undefined || seatIds.has(a.id))
      issues.push({ path: `gaAreas.${i}.id`, message: id !== undefined ? `duplicate of area ${id}` : 'is a seat id' });
    else ids.set(a.id, i);
    const name = names.get(a.name);
    if (name !== undefined) issues.push({ path: `gaAreas.${i}.name`, message: `duplicate of area ${name}` });
    else names.set(a.name, i);
    if (!tiers.has(a.tier))
      issues.push({ path: `gaAreas.${i}.tier`, message: `tier '${a.tier}' is not declared in tiers` });
  });
  return issues;
}

/** Each area with its free count spread over stripes (ga-units.ts says why). */
async function storeGaAreas(tx: Tx, load: EventLoad): Promise<void> {
  const areas = load.gaAreas ?? [];
  if (areas.length === 0) return;
  const col = <K extends keyof (typeof areas)[number]>(k: K) => sql.param(areas.map((a) => a[k]));
  await tx.execute(sql`
    INSERT INTO ga_areas (id, event_id, name, capacity, tier)
    SELECT id, ${load.eventId}, name, capacity, tier
      FROM unnest(${col('id')}::uuid[], ${col('name')}::text[], ${col('capacity')}::int[], ${col('tier')}::text[])
           AS t(id, name, capacity, tier)`);
  const stripes = areas.flatMap((a) => stripeCapacities(a.capacity).map((cap, stripe) => ({ id: a.id, stripe, cap })));
  await tx.execute(sql`
    INSERT INTO ga_stripes (area_id, stripe, capacity, remaining)
    SELECT area_id, stripe, cap, cap
      FROM unnest(${sql.param(stripes.map((s) => s.id))}::uuid[], ${sql.param(stripes.map((s) => s.stripe))}::int[],
                  ${sql.param(stripes.map((s) => s.cap))}::int[]) AS t(area_id, stripe, cap)`);
}

type TierRow = { code: string; name: string; price: number; currency: string; fee: number; fees_included: boolean };
const tierKey = (t: TierRow) => JSON.stringify([t.code, t.name, t.price, t.currency.trim(), t.fee, t.fees_included]);

/**
 * Stores the load's tiers. An event loaded before tiers existed gets them now; tiers that differ
 * from the stored ones replace them while no order exists (fees edited before the onsale), and
 * are a conflict once buyers were priced with them.
 */
async function storeTiers(tx: Tx, load: EventLoad): Promise<void> {
  if (!load.tiers?.length) return;
  const wanted: TierRow[] = load.tiers.map((t) => ({
    code: t.code,
    name: t.name,
    price: t.price,
    currency: t.currency,
    fee: t.fee,
    fees_included: t.fees === 'included',
  }));
  const stored = await tx.execute<TierRow>(
    sql`SELECT code, name, price, currency, fee, fees_included FROM price_tiers WHERE event_id = ${load.eventId}`,
  );
  if (stored.rows.length > 0) {
    const same = new Set(stored.rows.map(tierKey));
    if (stored.rows.length === wanted.length && wanted.every((t) => same.has(tierKey(t)))) return;
    // Promoters may change tiers (their fees) until the onsale: fine while no order was priced with them.
    const priced = await tx.execute(sql`SELECT 1 FROM orders WHERE event_id = ${load.eventId} LIMIT 1`);
    if (priced.rows.length > 0)
      throw new DomainError('event_conflict', 'event is already loaded with different price tiers', {
        eventId: load.eventId,
      });
    await tx.execute(sql`DELETE FROM price_tiers WHERE event_id = ${load.eventId}`);
  }
  const col = <K extends keyof TierRow>(k: K) => sql.param(wanted.map((t) => t[k]));
  await tx.execute(sql`
    INSERT INTO price_tiers (event_id, code, name, price, currency, fee, fees_included)
    SELECT ${load.eventId}, code, name, price, currency, fee, fees_included
      FROM unnest(${col('code')}::text[], ${col('name')}::text[], ${col('price')}::int[], ${col('currency')}::text[],
                  ${col('fee')}::int[], ${col('fees_included')}::boolean[]) AS t(code, name, price, currency, fee, fees_included)`);
}

/**
 * Loads an event, its seat map and its general-admission areas into the cell, all or nothing. Loading the same map again
 * is a no-op (the control plane retries); a different map for a loaded event is a conflict,
 * because buyers may already hold its seats.
 */
export async function loadEvent(ctx: CellContext, load: EventLoad): Promise<LoadResult> {
  const issues = findDuplicates(load);
  if (issues.length > 0)
    throw new DomainError('validation_failed', 'seat map has duplicates', { issues: issues.slice(0, 100) });
  const tiers = tierIssues(load);
  if (tiers.length > 0)
    throw new DomainError('validation_failed', 'price tiers and seats disagree', { issues: tiers.slice(0, 100) });
  const ga = gaIssues(load);
  if (ga.length > 0)
    throw new DomainError('validation_failed', 'general-admission areas are invalid', { issues: ga.slice(0, 100) });
  const hash = seatsHash(load);

  return withWriteTx(ctx, async (tx) => {
    const existing = await tx.execute<{ seats_hash: string }>(
      sql`SELECT seats_hash FROM events WHERE id = ${load.eventId} FOR UPDATE`,
    );
    const prior = existing.rows[0];
    if (prior) {
      if (prior.seats_hash !== hash) {
        throw new DomainError('event_conflict', 'event is already loaded with a different seat map', {
          eventId: load.eventId,
        });
      }
      await storeTiers(tx, load);
      await tx.execute(sql`
        UPDATE events SET directory_epoch = greatest(directory_epoch, ${load.directoryEpoch}) WHERE id = ${load.eventId}`);
      return { eventId: load.eventId, seats: load.seats.length, created: false };
    }

    await tx.execute(sql`
      INSERT INTO events (id, tenant_id, name, starts_at, hold_ttl_seconds, max_seats_per_order, directory_epoch, seat_count, seats_hash)
      VALUES (${load.eventId}, ${load.tenantId}, ${load.name}, ${load.startsAt}, ${load.holdTtlSeconds},
              ${load.maxSeatsPerOrder}, ${load.directoryEpoch}, ${load.seats.length}, ${hash})`);
    for (let i = 0; i < load.seats.length; i += CHUNK) {
      const chunk = load.seats.slice(i, i + CHUNK);
      const col = <K extends keyof (typeof chunk)[number]>(k: K) => sql.param(chunk.map((s) => s[k]));
      await tx.execute(sql`
        INSERT INTO seats (id, event_id, label, section, row, price, currency, tier)
        SELECT id, ${load.eventId}, label, section, row, price, currency, tier
          FROM unnest(${col('id')}::uuid[], ${col('label')}::text[], ${col('section')}::text[],
                      ${col('row')}::text[], ${col('price')}::int[], ${col('currency')}::text[],
                      ${sql.param(chunk.map((s) => s.tier ?? null))}::text[])
               AS t(id, label, section, row, price, currency, tier)`);
    }
    await storeTiers(tx, load);
    await storeGaAreas(tx, load);
    return { eventId: load.eventId, seats: load.seats.length, created: true };
  });
}
