import { DomainError } from '@onsale/contracts';
import { and, eq, inArray, ne, sql } from 'drizzle-orm';
import type { CellClient } from '../cells/client';
import type { Db } from '../db/client';
import { type Cell, cells, eventMoves, events, gaAreas, onsales } from '../db/schema';

/**
 * What an evacuation would do, computed without writing anything (`--dry-run`, the operator API's
 * plan): which events leave which cell for which target, and each target's load before and after.
 * Every refusal (404, 409 or 400: a cell's state is a conflict, not this service's outage) carries `details.reason` (unknown_event, unknown_cell, target_down, target_full,
 * target_dedicated, event_not_on_sale, same_cell, ga_not_movable) and, for input, the field it is about.
 */

export interface PlannedMove {
  eventId: string;
  name: string;
  fromCell: string;
  toCell: string;
  /** An open move of this event already goes there: running the plan resumes it. */
  openMoveId: string | null;
}
export interface TargetLoad {
  cellId: string;
  capacity: number;
  eventsBefore: number;
  eventsAfter: number;
}
export interface EvacuationPlan {
  source: string;
  moves: PlannedMove[];
  targets: TargetLoad[];
  /** Events of the cell that stay (not loaded into it, so nothing to move: place them elsewhere instead). */
  notMoved: { eventId: string; status: string; why: string }[];
  drainSeconds: number;
  /** The source is dead (confirmed by the operator): see runbooks/cell-dead-source.md. */
  sourceDead: boolean;
  steps: string[];
}

export const MOVE_STEP_SUMMARY = [
  'fence: directory epoch+1, event moving (new holds 503 event_moving), source freezes sales',
  'drain: in-flight holds and orders finish on the source, up to drain seconds',
  'copy: the target loads the event frozen, seats sold or held on the source blocked',
  'flip: the directory points the event at the target (epoch+1)',
  'resume: the target sells; released buyers re-admitted for it',
  'settle: seats the source frees are unblocked on the target, until the source has nothing open',
];

export const DEAD_SOURCE_STEPS = [
  'fence: directory epoch+1, event moving; the source is marked down (not asked to freeze: it cannot answer)',
  'drain: skipped',
  'copy: the target loads the event frozen, seats the source published as held or sold (reporting) blocked',
  'flip: the directory points the event at the target (epoch+1)',
  'resume: the target sells; released buyers re-admitted for it',
  'settle: waits for the source to answer; then freezes it, lets its webhooks in (draining) and settles as usual',
];

/**
 * The move copies seats (sold, held, free); a general-admission area's count is not copied yet, so
 * moving such an event would let the target sell the area's full capacity again. Refused, never oversold.
 */
const GA_NOT_MOVABLE =
  'the event has general-admission areas, whose sold and held counts do not move between cells yet: it stays';

async function withGaAreas(db: Db, eventIds: string[]): Promise<Set<string>> {
  if (!eventIds.length) return new Set();
  const rows = await db
    .selectDistinct({ eventId: gaAreas.eventId })
    .from(gaAreas)
    .where(inArray(gaAreas.eventId, eventIds));
  return new Set(rows.map((r) => r.eventId));
}

/** Events in these states are selling or about to: they move with the evacuation procedure. */
const MOVABLE = ['on_sale', 'paused', 'sold_out', 'scheduled'] as const;
const OPEN_STEPS = ['planned', 'fencing', 'fenced', 'drained', 'copied', 'flipped', 'resumed'] as const;

export const refuse = (
  code: 'not_found' | 'conflict' | 'validation_failed',
  message: string,
  reason: string,
  field?: string,
) =>
  new DomainError(
    code,
    message,
    code === 'validation_failed'
      ? { reason, issues: [{ path: field ?? '', message }] }
      : { reason, ...(field ? { field } : {}) },
  );

async function cellOrRefuse(db: Db, id: string, field: string): Promise<Cell> {
  const [c] = await db.select().from(cells).where(eq(cells.id, id));
  if (!c) throw refuse('validation_failed', `unknown cell ${id}`, 'unknown_cell', field);
  return c;
}

async function usableTarget(client: Pick<CellClient, 'ready'>, c: Cell): Promise<void> {
  if (c.status !== 'active') throw refuse('conflict', `target cell ${c.id} is ${c.status}`, 'target_down', 'to');
  if (!(await client.ready(c)))
    throw refuse('conflict', `target cell ${c.id} does not answer /readyz`, 'target_down', 'to');
}

async function loadOf(db: Db): Promise<Map<string, number>> {
  const r = await db.execute<{ cell_id: string; n: number }>(
    sql`select cell_id, count(*)::int as n from events where cell_id is not null and status <> 'ended' group by cell_id`,
  );
  return new Map(r.rows.map((x) => [x.cell_id, Number(x.n)]));
}

export async function planEvacuation(
  deps: { db: Db; cells: Pick<CellClient, 'ready'> },
  input: {
    eventId?: string;
    cellId?: string;
    to?: string[];
    drainSeconds: number;
    /** The operator's confirmation that the source is dead: its cell id, typed again. */
    confirmSourceDead?: string;
  },
): Promise<EvacuationPlan> {
  const { db } = deps;
  if (!!input.eventId === !!input.cellId)
    throw refuse('validation_failed', 'name one event or one cell to evacuate', 'event_or_cell', 'eventId');
  if (!Number.isInteger(input.drainSeconds) || input.drainSeconds < 0 || input.drainSeconds > 3600)
    throw refuse('validation_failed', 'drain seconds must be an integer 0..3600', 'drain_seconds', 'drainSeconds');

  // What moves, from where.
  let source: Cell;
  let candidates: { id: string; name: string; status: string; loaded: boolean }[];
  if (input.eventId) {
    const [ev] = await db
      .select({
        id: events.id,
        name: events.name,
        status: events.status,
        cellId: events.cellId,
        load: onsales.loadStatus,
      })
      .from(events)
      .leftJoin(onsales, eq(onsales.eventId, events.id))
      .where(eq(events.id, input.eventId));
    if (!ev) throw refuse('not_found', `unknown event ${input.eventId}`, 'unknown_event', 'eventId');
    if (!ev.cellId) throw refuse('conflict', 'the event has no purchase cell', 'event_not_on_sale', 'eventId');
    source = await cellOrRefuse(db, ev.cellId, 'eventId');
    candidates = [{ id: ev.id, name: ev.name, status: ev.status, loaded: ev.load === 'loaded' }];
    const c = candidates[0]!;
    if (!(MOVABLE as readonly string[]).includes(c.status) || !c.loaded)
      throw refuse(
        'conflict',
        `event ${c.id} is ${c.status}${c.loaded ? '' : ', not loaded into its cell'}: only an on-sale (loaded) event is evacuated`,
        'event_not_on_sale',
        'eventId',
      );
    if ((await withGaAreas(db, [c.id])).has(c.id))
      throw refuse('conflict', GA_NOT_MOVABLE, 'ga_not_movable', 'eventId');
  } else {
    source = await cellOrRefuse(db, input.cellId!, 'cellId');
    const rows = await db
      .select({ id: events.id, name: events.name, status: events.status, load: onsales.loadStatus })
      .from(events)
      .leftJoin(onsales, eq(onsales.eventId, events.id))
      .where(and(eq(events.cellId, source.id), ne(events.status, 'ended')))
      .orderBy(events.createdAt, events.id);
    candidates = rows.map((r) => ({ id: r.id, name: r.name, status: r.status, loaded: r.load === 'loaded' }));
  }
  const sourceDead = input.confirmSourceDead !== undefined;
  if (sourceDead && input.confirmSourceDead !== source.id)
    throw refuse(
      'validation_failed',
      `confirming a dead source means typing its cell id: --confirm-source-dead ${source.id}`,
      'confirmation_required',
      'confirmSourceDead',
    );
  const sourceReady = await deps.cells.ready(source);
  if (sourceDead && sourceReady)
    throw refuse(
      'conflict',
      `source cell ${source.id} answers /readyz: evacuate it without --source-dead, so its orders finish there`,
      'source_alive',
      'confirmSourceDead',
    );
  if (!sourceDead && !sourceReady)
    throw refuse(
      'conflict',
      `source cell ${source.id} does not answer /readyz; if it is dead, follow runbooks/cell-dead-source.md`,
      'source_down',
      input.eventId ? 'eventId' : 'cellId',
    );
  const ga = await withGaAreas(
    db,
    candidates.map((c) => c.id),
  );
  const notMoved = candidates
    .filter((c) => !(MOVABLE as readonly string[]).includes(c.status) || !c.loaded || ga.has(c.id))
    .map((c) => ({
      eventId: c.id,
      status: c.status,
      why: ga.has(c.id) ? GA_NOT_MOVABLE : 'not loaded into the cell: place it on another cell instead',
    }));
  const moving = candidates.filter((c) => !notMoved.some((n) => n.eventId === c.id));

  // Where to: the named targets, or every other active cell.
  let targets: Cell[];
  if (input.to?.length) {
    targets = [];
    for (const id of input.to) targets.push(await cellOrRefuse(db, id, 'to'));
    if (targets.some((t) => t.id === source.id))
      throw refuse('conflict', `the event is already on ${source.id}`, 'same_cell', 'to');
    for (const t of targets) await usableTarget(deps.cells, t);
  } else {
    const all = await db
      .select()
      .from(cells)
      .where(and(eq(cells.status, 'active'), ne(cells.id, source.id)))
      .orderBy(cells.id);
    targets = [];
    for (const t of all) if (await deps.cells.ready(t)) targets.push(t);
    if (!targets.length)
      throw refuse('conflict', `no other active cell answers to take ${source.id}'s events`, 'target_down', 'to');
  }

  // Open moves are resumed where they go; the rest are placed least-loaded first within capacity.
  const open = moving.length
    ? await db
        .select()
        .from(eventMoves)
        .where(
          and(
            inArray(
              eventMoves.eventId,
              moving.map((m) => m.id),
            ),
            inArray(eventMoves.step, [...OPEN_STEPS]),
          ),
        )
    : [];
  const load = await loadOf(db);
  const before = new Map(targets.map((t) => [t.id, load.get(t.id) ?? 0]));
  const after = new Map(before);
  const moves: PlannedMove[] = [];
  for (const ev of moving) {
    const o = open.find((m) => m.eventId === ev.id);
    if (o) {
      moves.push({ eventId: ev.id, name: ev.name, fromCell: o.fromCell, toCell: o.toCell, openMoveId: o.id });
      continue;
    }
    // A headline event that has its own cell keeps one: it goes only to an empty target.
    const needsEmpty = source.dedicatedEventId === ev.id;
    const fits = targets.filter(
      (t) =>
        (!t.dedicatedEventId || t.dedicatedEventId === ev.id) &&
        after.get(t.id)! < t.capacity &&
        (!needsEmpty || after.get(t.id) === 0),
    );
    if (!fits.length) {
      const dedicated = targets.filter((t) => t.dedicatedEventId && t.dedicatedEventId !== ev.id);
      if (dedicated.length === targets.length)
        throw refuse('conflict', `every target is dedicated to another event`, 'target_dedicated', 'to');
      throw refuse(
        'conflict',
        `no target has room for event ${ev.id}${needsEmpty ? ' (dedicated: needs an empty cell)' : ''}: ${targets
          .map((t) => `${t.id} ${after.get(t.id)}/${t.capacity}`)
          .join(', ')}`,
        'target_full',
        'to',
      );
    }
    fits.sort((a, b) => after.get(a.id)! / a.capacity - after.get(b.id)! / b.capacity || a.id.localeCompare(b.id));
    const t = fits[0]!;
    after.set(t.id, after.get(t.id)! + 1);
    moves.push({ eventId: ev.id, name: ev.name, fromCell: source.id, toCell: t.id, openMoveId: null });
  }
  return {
    source: source.id,
    moves,
    targets: targets.map((t) => ({
      cellId: t.id,
      capacity: t.capacity,
      eventsBefore: before.get(t.id)!,
      eventsAfter: after.get(t.id)!,
    })),
    notMoved,
    drainSeconds: input.drainSeconds,
    sourceDead,
    steps: sourceDead ? DEAD_SOURCE_STEPS : MOVE_STEP_SUMMARY,
  };
}
