import type { Logger } from '@onsale/contracts';
import { DomainError } from '@onsale/contracts';
import { and, eq, inArray, or, sql } from 'drizzle-orm';
import type { CellClient, CellTarget } from '../cells/client';
import type { Config } from '../config';
import type { Db } from '../db/client';
import { type Cell, cells, type EventMove, eventMoves, events, type MoveStep, onsales } from '../db/schema';
import { bumpDirectoryVersion } from '../db/sql';
import { withTransaction } from '../db/tx';
import type { Clock } from '../lib/clock';
import { conflict, notFound } from '../lib/errors';
import { buildEventLoad } from '../onsale/load';
import { movePrewarm } from '../prewarm/record';
import { moveRoom } from '../waiting-room/room';
import type { RoomRedis } from '../waiting-room/scripts';
import { type EvacuationPlan, refuse } from './plan';

/**
 * Evacuating one on-sale event from its cell (the source) to another (the target), as a row in
 * event_moves whose `step` is the last step finished. Every step is idempotent and starts from
 * what the database and the cells say, so a mover killed anywhere is resumed by running it again.
 *
 *   planned → fencing → fenced   directory epoch+1 and `moving` (router: new holds 503 event_moving);
 *                                the source freezes the event's sales (racing holds commit first or lose)
 *           → drained            in-flight holds and orders finish on the source, up to the drain deadline
 *           → copied             the target loads the event (frozen) and blocks every seat the source sold
 *                                or still holds
 *           → flipped            directory: the event is on the target, epoch+1
 *           → resumed            the target sells; released buyers are re-admitted for it (place kept)
 *           → done               every hold left on the source has ended; its seats that did not sell
 *                                are unblocked on the target, exactly once
 */

export interface MoverDeps {
  db: Db;
  /** With the waiting room's scripts (withRoomScripts): the move re-points the room's placement through them. */
  redis: RoomRedis;
  /** The control plane's Redis key prefix (the waiting room's keys). */
  prefix: string;
  /** The room's shards, and the claim window a re-admitted buyer gets. */
  config: Pick<Config, 'WAITING_ROOM_SHARDS' | 'ADMISSION_CLAIM_WINDOW_SECONDS'>;
  log: Logger;
  clock: Clock;
  cells: CellClient;
  /** How often drain and settle look at the source. */
  pollMs?: number;
  /** Test hook: stop (as if killed) right after this step is recorded. */
  crashAfter?: MoveStep;
  /** Test hook: stop (as if killed) after this step's effects, before it is recorded. */
  crashBefore?: MoveStep;
  onStep?: (move: EventMove) => void;
  /** Long steps (drain, settle) report what they wait for on every poll. */
  onProgress?: (p: MoveProgress) => void;
}

export interface MoveProgress {
  moveId: string;
  eventId: string;
  step: 'draining' | 'settling';
  activeHolds: number;
  openOrders: number;
  /** Seats still blocked on the target for the source (settle only). */
  blocked?: number;
  elapsedMs: number;
  /** The drain's deadline, or the bound of this settle call. */
  limitMs: number;
}

export class MoverCrash extends Error {
  override name = 'MoverCrash';
}

const OPEN_STEPS: MoveStep[] = ['planned', 'fencing', 'fenced', 'drained', 'copied', 'flipped', 'resumed'];
const ABORTABLE: MoveStep[] = ['planned', 'fencing', 'fenced', 'drained', 'copied'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function cellTarget(
  db: Db,
  id: string,
): Promise<CellTarget & { status: string; dedicatedEventId: string | null }> {
  const [c] = await db.select().from(cells).where(eq(cells.id, id));
  if (!c) throw new DomainError('not_found', `unknown cell ${id}`);
  return { id: c.id, baseUrl: c.baseUrl, status: c.status, dedicatedEventId: c.dedicatedEventId };
}

/** Plans a move, or returns the open one for the event when it goes to the same cell. Checked again under the event's lock. */
export async function planMove(
  deps: Pick<MoverDeps, 'db' | 'log'>,
  input: { eventId: string; toCell: string; drainSeconds: number; sourceDead?: boolean },
): Promise<EventMove> {
  return withTransaction(deps, async (tx) => {
    const [ev] = await tx.select().from(events).where(eq(events.id, input.eventId)).for('update');
    if (!ev) throw refuse('not_found', `unknown event ${input.eventId}`, 'unknown_event', 'eventId');
    const [open] = await tx
      .select()
      .from(eventMoves)
      .where(and(eq(eventMoves.eventId, ev.id), inArray(eventMoves.step, OPEN_STEPS)));
    if (open) {
      if (open.toCell !== input.toCell)
        throw conflict(`event is already moving to ${open.toCell}`, {
          reason: 'already_moving',
          moveId: open.id,
          step: open.step,
        });
      return open;
    }
    const [on] = await tx.select().from(onsales).where(eq(onsales.eventId, ev.id));
    if (
      !['on_sale', 'paused', 'sold_out', 'scheduled'].includes(ev.status) ||
      !ev.cellId ||
      on?.loadStatus !== 'loaded'
    )
      throw refuse(
        'conflict',
        `event is ${ev.status}; only an on-sale (loaded) event is evacuated`,
        'event_not_on_sale',
        'eventId',
      );
    if (ev.cellId === input.toCell) throw refuse('conflict', `event is already on ${input.toCell}`, 'same_cell', 'to');
    const [target] = await tx.select().from(cells).where(eq(cells.id, input.toCell));
    if (!target) throw refuse('validation_failed', `unknown cell ${input.toCell}`, 'unknown_cell', 'to');
    if (target.status !== 'active')
      throw refuse('conflict', `target cell ${target.id} is ${target.status}`, 'target_down', 'to');
    if (target.dedicatedEventId && target.dedicatedEventId !== ev.id)
      throw refuse('conflict', `cell ${target.id} is dedicated to another event`, 'target_dedicated', 'to');
    const [row] = await tx
      .insert(eventMoves)
      .values({
        eventId: ev.id,
        fromCell: ev.cellId,
        toCell: input.toCell,
        drainSeconds: input.drainSeconds,
        report: input.sourceDead ? { sourceDead: true } : {},
      })
      .returning();
    deps.log.info('evacuation planned', { moveId: row!.id, eventId: ev.id, from: ev.cellId, to: input.toCell });
    return row!;
  });
}

/** Records the plan's moves (open ones are kept): the rows `runMoves` then carries to done. */
export async function startEvacuation(deps: Pick<MoverDeps, 'db' | 'log'>, plan: EvacuationPlan): Promise<EventMove[]> {
  const moves: EventMove[] = [];
  for (const p of plan.moves)
    moves.push(
      await planMove(deps, {
        eventId: p.eventId,
        toCell: p.toCell,
        drainSeconds: plan.drainSeconds,
        sourceDead: plan.sourceDead,
      }),
    );
  return moves;
}

/**
 * Runs several moves side by side (a whole cell): each event pauses only for its own switch. A move
 * that fails keeps its error in `last_error` and does not stop the others; the first failure is
 * thrown once all have stopped, so `resume` takes them up again.
 */
export async function runMoves(
  deps: MoverDeps,
  moveIds: string[],
  o: { settleWaitMs?: number } = {},
): Promise<EventMove[]> {
  const results = await Promise.allSettled(moveIds.map((id) => runMove(deps, id, o)));
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return results.map((r) => (r as PromiseFulfilledResult<EventMove>).value);
}

async function load(db: Db, moveId: string): Promise<EventMove> {
  const [m] = await db.select().from(eventMoves).where(eq(eventMoves.id, moveId));
  if (!m) throw notFound('move');
  return m;
}

/** Records a finished step if the move is still where this mover left it; zero rows means another mover won. */
async function advance(
  deps: MoverDeps,
  m: EventMove,
  to: MoveStep,
  set: Partial<EventMove> = {},
  report?: Record<string, unknown>,
): Promise<EventMove> {
  crashBefore(deps, to);
  const [row] = await deps.db
    .update(eventMoves)
    .set({
      ...set,
      step: to,
      lastError: null,
      updatedAt: new Date(),
      ...(report ? { report: sql`${eventMoves.report} || ${JSON.stringify(report)}::jsonb` } : {}),
    })
    .where(and(eq(eventMoves.id, m.id), eq(eventMoves.step, m.step)))
    .returning();
  if (!row) return load(deps.db, m.id);
  deps.log.info('evacuation step', { moveId: m.id, eventId: m.eventId, step: to, ...(report ?? {}) });
  deps.onStep?.(row);
  if (deps.crashAfter === to) throw new MoverCrash(`mover stopped after ${to} (test)`);
  return row;
}

/** The sale's state the cells go back to when the freeze lifts: the control plane's record of the event. */
async function saleStatus(db: Db, eventId: string): Promise<'on_sale' | 'paused'> {
  const [ev] = await db.select({ status: events.status }).from(events).where(eq(events.id, eventId));
  return ev?.status === 'paused' ? 'paused' : 'on_sale';
}

/**
 * A move planned with the source confirmed dead (plan.ts): the source is not asked to freeze or
 * drain, its sold and held seats come from the reporting projection of the facts it published, and
 * settling waits for it to come back.
 */
const sourceDead = (m: EventMove) => (m.report as { sourceDead?: boolean }).sourceDead === true;

async function setCellStatus(deps: MoverDeps, cellId: string, from: Cell['status'][], to: Cell['status']) {
  await withTransaction(deps, async (tx) => {
    const r = await tx
      .update(cells)
      .set({ status: to, updatedAt: new Date() })
      .where(and(eq(cells.id, cellId), inArray(cells.status, from)))
      .returning();
    if (r.length) await bumpDirectoryVersion(tx);
  });
}

/** Seats the dead source published as held or sold (HoldCreated … TicketIssued reached reporting), sorted. */
async function publishedOccupied(db: Db, eventId: string, cellId: string): Promise<string[]> {
  const r = await db.execute<{ seat_id: string }>(sql`
    SELECT DISTINCT s->>'seatId' AS seat_id
      FROM reporting.orders o, jsonb_array_elements(o.seats) s
     WHERE o.event_id = ${eventId} AND o.cell_id = ${cellId} AND o.status IN ('held', 'declined', 'paid', 'ticketed')
     ORDER BY 1`);
  return r.rows.map((x) => x.seat_id);
}

function crashBefore(deps: MoverDeps, step: MoveStep) {
  if (deps.crashBefore === step) throw new MoverCrash(`mover stopped before recording ${step} (test)`);
}

/** fence: directory epoch+1 with the event marked moving, then the source freezes the event's sales. */
async function fence(deps: MoverDeps, m: EventMove): Promise<EventMove> {
  if (m.step === 'planned') {
    crashBefore(deps, 'fencing');
    m = await withTransaction(deps, async (tx) => {
      const [ev] = await tx.select().from(events).where(eq(events.id, m.eventId)).for('update');
      if (!ev || ev.cellId !== m.fromCell) throw conflict('the event is no longer on the source cell');
      const epoch = ev.directoryEpoch + 1;
      await tx.update(events).set({ directoryEpoch: epoch, updatedAt: new Date() }).where(eq(events.id, ev.id));
      const [row] = await tx
        .update(eventMoves)
        .set({ step: 'fencing', fenceEpoch: epoch, fencedAt: new Date(), updatedAt: new Date() })
        .where(and(eq(eventMoves.id, m.id), eq(eventMoves.step, 'planned')))
        .returning();
      if (!row) throw conflict('another mover advanced this move');
      await bumpDirectoryVersion(tx);
      return row;
    });
    deps.log.info('evacuation step', { moveId: m.id, eventId: m.eventId, step: 'fencing', epoch: m.fenceEpoch });
    if (deps.crashAfter === 'fencing') throw new MoverCrash('mover stopped after fencing (test)');
  }
  if (sourceDead(m)) {
    // Nothing reaches a dead cell; marking it down keeps the router from trying (Stripe retries its webhooks).
    await setCellStatus(deps, m.fromCell, ['active', 'draining'], 'down');
    return advance(deps, m, 'fenced', {}, { fence: { sourceFrozen: false, sourceMarkedDown: true } });
  }
  await deps.cells.freeze(await cellTarget(deps.db, m.fromCell), m.eventId);
  return advance(deps, m, 'fenced');
}

/** drain: wait for the source's holds and open orders to finish, up to fencedAt + drainSeconds. */
async function drain(deps: MoverDeps, m: EventMove): Promise<EventMove> {
  if (sourceDead(m))
    return advance(deps, m, 'drained', { drainedAt: new Date() }, { drain: { skipped: 'source dead' } });
  const source = await cellTarget(deps.db, m.fromCell);
  const deadline = (m.fencedAt?.getTime() ?? deps.clock.now().getTime()) + m.drainSeconds * 1000;
  const started = m.fencedAt?.getTime() ?? deps.clock.now().getTime();
  let view = await deps.cells.ledger(source, m.eventId);
  while ((view.activeHolds > 0 || view.openOrders > 0) && deps.clock.now().getTime() < deadline) {
    deps.onProgress?.({
      moveId: m.id,
      eventId: m.eventId,
      step: 'draining',
      activeHolds: view.activeHolds,
      openOrders: view.openOrders,
      elapsedMs: deps.clock.now().getTime() - started,
      limitMs: m.drainSeconds * 1000,
    });
    await sleep(deps.pollMs ?? 250);
    view = await deps.cells.ledger(source, m.eventId);
  }
  if (!view.frozen) throw new DomainError('conflict', `source cell ${source.id} does not report the event frozen`);
  return advance(
    deps,
    m,
    'drained',
    { drainedAt: new Date() },
    {
      drain: {
        activeHoldsLeft: view.activeHolds,
        openOrdersLeft: view.openOrders,
        timedOut: view.activeHolds > 0 || view.openOrders > 0,
      },
    },
  );
}

/** copy: the target gets the event, frozen, with every seat the source sold or holds blocked. */
async function copy(deps: MoverDeps, m: EventMove): Promise<EventMove> {
  const source = await cellTarget(deps.db, m.fromCell);
  const target = await cellTarget(deps.db, m.toCell);
  const { body } = await buildEventLoad(deps, m.eventId);
  const loaded = await deps.cells.loadEvent(target, { ...body, directoryEpoch: (m.fenceEpoch ?? 0) + 1 });
  if (loaded.seats !== body.seats.length)
    throw new DomainError('conflict', `target reports ${loaded.seats} seats, sent ${body.seats.length}`);
  await deps.cells.freeze(target, m.eventId);
  const dead = sourceDead(m);
  const view = dead
    ? { occupiedSeatIds: await publishedOccupied(deps.db, m.eventId, m.fromCell), ticketedSeats: null }
    : await deps.cells.ledger(source, m.eventId);
  const CHUNK = 10_000;
  for (let i = 0; i < view.occupiedSeatIds.length; i += CHUNK)
    await deps.cells.block(target, m.eventId, m.fromCell, view.occupiedSeatIds.slice(i, i + CHUNK));
  const blocked = new Set(await deps.cells.blocked(target, m.eventId, m.fromCell));
  const missing = view.occupiedSeatIds.filter((s) => !blocked.has(s));
  if (missing.length) throw new DomainError('conflict', `target did not block ${missing.length} seats`);
  return advance(
    deps,
    m,
    'copied',
    { copiedAt: new Date() },
    {
      copy: {
        seats: body.seats.length,
        blocked: blocked.size,
        ticketedOnSource: view.ticketedSeats,
        ...(dead ? { occupiedFrom: 'reporting' } : {}),
      },
    },
  );
}

/** flip: the directory points the event at the target with a new epoch. */
async function flip(deps: MoverDeps, m: EventMove): Promise<EventMove> {
  crashBefore(deps, 'flipped');
  return withTransaction(deps, async (tx) => {
    const [ev] = await tx.select().from(events).where(eq(events.id, m.eventId)).for('update');
    if (!ev) throw notFound('event');
    if (ev.cellId !== m.fromCell) throw conflict(`the event is on ${ev.cellId}, not the source ${m.fromCell}`);
    const epoch = ev.directoryEpoch + 1;
    await tx
      .update(events)
      .set({ cellId: m.toCell, directoryEpoch: epoch, updatedAt: new Date() })
      .where(eq(events.id, ev.id));
    await tx.update(onsales).set({ loadedCellId: m.toCell, loadedEpoch: epoch }).where(eq(onsales.eventId, ev.id));
    await movePrewarm(tx, ev.id, m.toCell, deps.clock.now());
    const [row] = await tx
      .update(eventMoves)
      .set({ step: 'flipped', flipEpoch: epoch, flippedAt: new Date(), updatedAt: new Date(), lastError: null })
      .where(and(eq(eventMoves.id, m.id), eq(eventMoves.step, 'copied')))
      .returning();
    if (!row) throw conflict('another mover advanced this move');
    await bumpDirectoryVersion(tx);
    deps.log.info('evacuation step', { moveId: m.id, eventId: m.eventId, step: 'flipped', epoch });
    return row;
  }).then((row) => {
    deps.onStep?.(row);
    if (deps.crashAfter === 'flipped') throw new MoverCrash('mover stopped after flipped (test)');
    return row;
  });
}

/** resume: the target sells; the waiting room issues admissions for it to everyone it had released. */
async function resume(deps: MoverDeps, m: EventMove): Promise<EventMove> {
  const target = await cellTarget(deps.db, m.toCell);
  await deps.cells.unfreeze(target, m.eventId, await saleStatus(deps.db, m.eventId));
  const readmitted = await moveRoom(deps, m.eventId, { cellId: m.toCell, epoch: m.flipEpoch ?? 0 });
  return advance(deps, m, 'resumed', { resumedAt: new Date() }, { resume: { readmitted } });
}

/**
 * settle: seats blocked on the target for holds that were still open on the source are released
 * on the target as the source reports them free; done when the source has no hold or order left.
 * `waitMs` bounds one call (resume continues it).
 */
async function settle(deps: MoverDeps, m: EventMove, waitMs: number): Promise<EventMove> {
  const source = await cellTarget(deps.db, m.fromCell);
  const target = await cellTarget(deps.db, m.toCell);
  const started = deps.clock.now().getTime();
  const until = started + waitMs;
  let released = 0;
  if (sourceDead(m)) {
    // The source is back when it answers: freeze it first (it was never frozen), then let the
    // webhooks Stripe kept retrying reach it (draining: no buyers, webhooks yes) and settle as usual.
    while (!(await deps.cells.ready(source))) {
      if (deps.clock.now().getTime() >= until) {
        deps.log.info('evacuation settling: the source is still dead', { moveId: m.id });
        return m;
      }
      await sleep(deps.pollMs ?? 500);
    }
    await deps.cells.freeze(source, m.eventId);
    await setCellStatus(deps, m.fromCell, ['down'], 'draining');
  }
  for (;;) {
    // Read the source first: a seat free there now stays free there (the event is frozen on it).
    const view = await deps.cells.ledger(source, m.eventId);
    const occupied = new Set(view.occupiedSeatIds);
    const free = (await deps.cells.blocked(target, m.eventId, m.fromCell)).filter((s) => !occupied.has(s));
    if (free.length) {
      await deps.cells.unblock(target, m.eventId, m.fromCell, free);
      released += free.length;
    }
    deps.onProgress?.({
      moveId: m.id,
      eventId: m.eventId,
      step: 'settling',
      activeHolds: view.activeHolds,
      openOrders: view.openOrders,
      blocked: occupied.size,
      elapsedMs: deps.clock.now().getTime() - started,
      limitMs: waitMs,
    });
    if (view.activeHolds === 0 && view.openOrders === 0) {
      // What a dead source sold that its published facts had not said: the target may have sold those seats too.
      const doubled = sourceDead(m)
        ? (await deps.cells.ledger(target, m.eventId)).occupiedSeatIds.filter((s) => occupied.has(s))
        : [];
      return advance(
        deps,
        m,
        'done',
        { doneAt: new Date() },
        { settle: { released, soldOnSource: occupied.size, ...(sourceDead(m) ? { soldInBothCells: doubled } : {}) } },
      );
    }
    if (deps.clock.now().getTime() >= until) {
      deps.log.info('evacuation settling', { moveId: m.id, released, activeHolds: view.activeHolds });
      return m;
    }
    await sleep(deps.pollMs ?? 500);
  }
}

/** Runs the move from its recorded step to done (or as far as settleWaitMs allows). Safe to call again. */
export async function runMove(deps: MoverDeps, moveId: string, o: { settleWaitMs?: number } = {}): Promise<EventMove> {
  let m = await load(deps.db, moveId);
  for (;;) {
    try {
      switch (m.step) {
        case 'planned':
        case 'fencing':
          m = await fence(deps, m);
          break;
        case 'fenced':
          m = await drain(deps, m);
          break;
        case 'drained':
          m = await copy(deps, m);
          break;
        case 'copied':
          m = await flip(deps, m);
          break;
        case 'flipped':
          m = await resume(deps, m);
          break;
        case 'resumed': {
          const after = await settle(deps, m, o.settleWaitMs ?? 15 * 60_000);
          if (after.step === 'resumed') return after;
          m = after;
          break;
        }
        case 'done':
        case 'aborted':
          return m;
      }
    } catch (err) {
      if (!(err instanceof MoverCrash)) {
        const message = err instanceof Error ? err.message : String(err);
        await deps.db
          .update(eventMoves)
          .set({ lastError: message.slice(0, 1000), updatedAt: new Date() })
          .where(eq(eventMoves.id, m.id));
        deps.log.warn('evacuation step failed; resume retries it', { moveId: m.id, step: m.step, error: message });
      }
      throw err;
    }
  }
}

/**
 * Abort before the flip: the source sells again as before (unfrozen, a new epoch so the router's
 * copy drops `moving`). The target keeps a frozen, unrouted copy of the event that a later move reloads.
 */
export async function abortMove(deps: MoverDeps, moveId: string): Promise<EventMove> {
  const m = await load(deps.db, moveId);
  if (m.step === 'aborted') return m;
  if (!ABORTABLE.includes(m.step)) throw conflict(`the move is ${m.step}; after the flip it can only go forward`);
  // A dead source was never frozen (and cannot be reached to lift it).
  if (m.step !== 'planned' && !sourceDead(m))
    await deps.cells.unfreeze(await cellTarget(deps.db, m.fromCell), m.eventId, await saleStatus(deps.db, m.eventId));
  return withTransaction(deps, async (tx) => {
    const [row] = await tx
      .update(eventMoves)
      .set({ step: 'aborted', doneAt: new Date(), updatedAt: new Date() })
      .where(and(eq(eventMoves.id, m.id), inArray(eventMoves.step, ABORTABLE)))
      .returning();
    if (!row) throw conflict('the move advanced while aborting; run abort again or resume');
    await tx
      .update(events)
      .set({ directoryEpoch: sql`${events.directoryEpoch} + 1`, updatedAt: new Date() })
      .where(eq(events.id, m.eventId));
    await bumpDirectoryVersion(tx);
    deps.log.info('evacuation aborted', { moveId: m.id, eventId: m.eventId, at: m.step });
    return row;
  });
}

/** Moves of an event, of a cell (as source or target), or one move: for status and resume. */
export async function listMoves(
  db: Db,
  by: { eventId?: string; cellId?: string; moveId?: string },
  o: { openOnly?: boolean } = {},
): Promise<EventMove[]> {
  const where = [
    by.eventId ? eq(eventMoves.eventId, by.eventId) : undefined,
    by.moveId ? eq(eventMoves.id, by.moveId) : undefined,
    by.cellId ? or(eq(eventMoves.fromCell, by.cellId), eq(eventMoves.toCell, by.cellId)) : undefined,
    o.openOnly ? inArray(eventMoves.step, OPEN_STEPS) : undefined,
  ].filter((w) => w !== undefined);
  return db
    .select()
    .from(eventMoves)
    .where(and(...where))
    .orderBy(eventMoves.createdAt);
}
