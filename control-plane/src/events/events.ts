import { DomainError, type FieldIssue, requestHash } from '@onsale/contracts';
import { and, desc, eq, sql } from 'drizzle-orm';
import { getActiveCell, leastLoadedCell } from '../cells/cells';
import type { Services } from '../context';
import type { DbOrTx } from '../db/client';
import { type EventRow, events, onsales, presales, tenants } from '../db/schema';
import { bumpDirectoryVersion } from '../db/sql';
import { dbOf, withTransaction } from '../db/tx';
import { assertRole, type PromoterActor } from '../lib/actors';
import { conflict, notFound } from '../lib/errors';
import { setRoomPlacement } from '../waiting-room/room';

/** Every promoter read and write goes through this: another tenant's event does not exist (404). */
export async function eventForTenant(
  tx: DbOrTx,
  tenantId: string,
  eventId: string,
  opts: { lock?: boolean } = {},
): Promise<EventRow> {
  const q = tx
    .select()
    .from(events)
    .where(and(eq(events.id, eventId), eq(events.tenantId, tenantId)));
  const [row] = opts.lock ? await q.for('update') : await q;
  if (!row) throw notFound('event');
  return row;
}

export interface CreateEventInput {
  name: string;
  venue: string;
  /** IANA time zone of the venue (default UTC). */
  timeZone?: string;
  startsAt: Date;
  /** Pin to a cell (e.g. a dedicated cell for a headline onsale); otherwise least-loaded placement. */
  cellId?: string;
  /** The caller's Idempotency-Key: the same key again answers the event it created, whatever became of the answer. */
  idempotencyKey?: string;
}

/** What a creation asked for, to tell a retry from another request reusing its key. */
const creationHash = (input: CreateEventInput) =>
  requestHash([input.name, input.venue, input.timeZone ?? null, input.startsAt.toISOString(), input.cellId ?? null]);

/** A time zone the runtime knows (IANA names such as Europe/Paris); anything else is refused by field. */
function assertTimeZone(timeZone: string | undefined) {
  if (timeZone === undefined) return;
  try {
    new Intl.DateTimeFormat('en', { timeZone });
  } catch {
    throw new DomainError('validation_failed', 'timeZone is not a known time zone', {
      issues: [{ path: 'timeZone', message: 'must be an IANA time zone such as Europe/Paris' }],
    });
  }
}

/**
 * The one rule for an event's start, on create and on update: in the future. It also keeps every
 * stored start within years that PostgreSQL and JavaScript both read back as written (a year
 * below 100 would come back as 19xx, or not at all).
 */
function assertFutureStart(ctx: Services, startsAt: Date) {
  if (startsAt.getTime() <= ctx.clock.now().getTime()) {
    throw new DomainError('validation_failed', 'startsAt must be in the future', {
      issues: [{ path: 'startsAt', message: 'must be in the future' }],
    });
  }
}

/** The dates that must come before the event's start, each named by the field that sets it. */
const BEFORE_START = {
  onsaleAt: { rule: 'the onsale must start before the event', when: 'the onsale starts' },
  presaleEndsAt: { rule: 'the presale must end before the event starts', when: 'the presale ends' },
} as const;
type BeforeStart = keyof typeof BEFORE_START;

/**
 * The one rule between an event's start and the dates that must precede it (its onsale's start, its presale's end;
 * the presale's and the waiting room's other dates come before these), whichever verb changes one of them: the issue
 * names the field the caller changed.
 */
export function startOrderIssues(
  dates: { startsAt: Date } & Partial<Record<BeforeStart, Date | null>>,
  changed: 'startsAt' | BeforeStart,
): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const field of Object.keys(BEFORE_START) as BeforeStart[]) {
    const at = dates[field];
    if (!at || at.getTime() < dates.startsAt.getTime()) continue;
    if (changed === field) issues.push({ path: field, message: BEFORE_START[field].rule });
    else if (changed === 'startsAt')
      issues.push({ path: 'startsAt', message: `must be after ${BEFORE_START[field].when} (${at.toISOString()})` });
  }
  return issues;
}

export async function createEvent({
  ctx,
  actor,
  input,
}: {
  ctx: Services;
  actor: PromoterActor;
  input: CreateEventInput;
}) {
  assertRole(actor, 'manager');
  assertFutureStart(ctx, input.startsAt);
  assertTimeZone(input.timeZone);
  return withTransaction(ctx, async (tx) => {
    const [tenant] = await tx.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, actor.tenantId));
    if (!tenant) throw new DomainError('forbidden', 'unknown tenant');
    // A new event goes to the least-loaded active cell unless pinned; with no active cell it is
    // created unplaced and placed when its onsale is scheduled.
    let cellId: string | null = null;
    if (input.cellId) cellId = (await getActiveCell(tx, input.cellId)).id;
    else
      cellId = await leastLoadedCell(tx).then(
        (c) => c.id,
        (e) => (e instanceof DomainError ? null : Promise.reject(e)),
      );
    const hash = input.idempotencyKey ? creationHash(input) : null;
    const [row] = await tx
      .insert(events)
      .values({
        tenantId: actor.tenantId,
        name: input.name,
        venue: input.venue,
        ...(input.timeZone ? { timeZone: input.timeZone } : {}),
        startsAt: input.startsAt,
        cellId,
        cellPinned: Boolean(input.cellId),
        directoryEpoch: cellId ? 1 : 0,
        creationKey: input.idempotencyKey ?? null,
        creationHash: hash,
      })
      // A second request with the key waits here for the first one's commit, then finds its event.
      .onConflictDoNothing({ target: [events.tenantId, events.creationKey] })
      .returning();
    if (!row) return replayedCreation(tx, actor.tenantId, input.idempotencyKey!, hash!);
    if (cellId) await bumpDirectoryVersion(tx);
    ctx.log.info('event created', { eventId: row.id, tenantId: actor.tenantId, cellId });
    return row;
  });
}

/** The event an earlier request with this key created; the key reused for another request is refused. */
async function replayedCreation(tx: DbOrTx, tenantId: string, key: string, hash: string): Promise<EventRow> {
  const [earlier] = await tx
    .select()
    .from(events)
    .where(and(eq(events.tenantId, tenantId), eq(events.creationKey, key)));
  if (earlier!.creationHash !== hash)
    throw new DomainError('idempotency_key_reused', 'this Idempotency-Key was used for another event', {
      header: 'Idempotency-Key',
      eventId: earlier!.id,
    });
  return earlier!;
}

/**
 * A page of the tenant's events, newest first. `after` is the last event of the page before (its `nextAfter`): the
 * page goes on from where that event sorts, so an event created meanwhile neither repeats a row nor hides one.
 */
export async function listEvents({
  ctx,
  actor,
  page,
}: {
  ctx: Services;
  actor: PromoterActor;
  page: { after?: string; limit: number };
}): Promise<{ events: EventRow[]; nextAfter: string | null }> {
  const db = dbOf(ctx);
  if (page.after) {
    const [from] = await db
      .select({ id: events.id })
      .from(events)
      .where(and(eq(events.tenantId, actor.tenantId), eq(events.id, page.after)));
    if (!from)
      throw new DomainError('validation_failed', 'after: not an event of this tenant', {
        issues: [{ path: 'after', message: 'not an event of this tenant' }],
      });
  }
  const rows = await db
    .select()
    .from(events)
    .where(
      and(
        eq(events.tenantId, actor.tenantId),
        page.after
          ? sql`(${events.createdAt}, ${events.id}) < (SELECT created_at, id FROM events WHERE id = ${page.after})`
          : undefined,
      ),
    )
    .orderBy(desc(events.createdAt), desc(events.id))
    .limit(page.limit + 1);
  const shown = rows.slice(0, page.limit);
  return { events: shown, nextAfter: rows.length > page.limit ? shown.at(-1)!.id : null };
}

export async function getEvent({ ctx, actor, eventId }: { ctx: Services; actor: PromoterActor; eventId: string }) {
  return eventForTenant(dbOf(ctx), actor.tenantId, eventId);
}

export interface UpdateEventInput {
  name?: string;
  venue?: string;
  timeZone?: string;
  startsAt?: Date;
}

export async function updateEvent({
  ctx,
  actor,
  eventId,
  input,
}: {
  ctx: Services;
  actor: PromoterActor;
  eventId: string;
  input: UpdateEventInput;
}) {
  assertRole(actor, 'manager');
  if (input.startsAt) assertFutureStart(ctx, input.startsAt);
  assertTimeZone(input.timeZone);
  return withTransaction(ctx, async (tx) => {
    const ev = await eventForTenant(tx, actor.tenantId, eventId, { lock: true });
    if (ev.status !== 'draft' && ev.status !== 'scheduled')
      throw conflict(`event is ${ev.status}; it can no longer be edited`);
    if (input.startsAt) {
      const [presale] = await tx
        .select({ presaleEndsAt: presales.presaleEndsAt })
        .from(presales)
        .where(eq(presales.eventId, ev.id));
      const issues = startOrderIssues(
        { startsAt: input.startsAt, onsaleAt: ev.onsaleAt, presaleEndsAt: presale?.presaleEndsAt },
        'startsAt',
      );
      if (issues.length) throw new DomainError('validation_failed', 'the event is not valid', { issues });
    }
    const [row] = await tx
      .update(events)
      .set({ ...input, updatedAt: new Date() })
      .where(eq(events.id, ev.id))
      .returning();
    // The cell's copy carries name and start time: load again.
    await tx
      .update(onsales)
      .set({ loadStatus: 'pending', nextLoadAt: ctx.clock.now() })
      .where(eq(onsales.eventId, ev.id));
    return row!;
  });
}

/**
 * Pins an event to a cell (promoter or operator). Allowed until the onsale starts; a change of cell
 * increases the directory epoch and makes the scheduler load the event into the new cell. Moving a
 * live onsale is the evacuation procedure, not this.
 */
export async function placeEvent({
  ctx,
  eventId,
  tenantId,
  input,
}: {
  ctx: Services;
  eventId: string;
  tenantId?: string;
  input: { cellId: string; dedicated?: boolean };
}) {
  return withTransaction(ctx, async (tx, inner) => {
    const ev = tenantId
      ? await eventForTenant(tx, tenantId, eventId, { lock: true })
      : (await tx.select().from(events).where(eq(events.id, eventId)).for('update'))[0];
    if (!ev) throw notFound('event');
    if (ev.status !== 'draft' && ev.status !== 'scheduled')
      throw conflict(`event is ${ev.status}; moving it needs the evacuation procedure`);
    const cell = await getActiveCell(tx, input.cellId);
    if (cell.dedicatedEventId && cell.dedicatedEventId !== ev.id)
      throw conflict(`cell ${cell.id} is dedicated to another event`);
    if (input.dedicated) {
      await tx.execute(
        sql`update cells set dedicated_event_id = null where dedicated_event_id = ${ev.id} and id <> ${cell.id}`,
      );
      await tx.execute(sql`update cells set dedicated_event_id = ${ev.id}, updated_at = now() where id = ${cell.id}`);
    }
    const changed = ev.cellId !== cell.id;
    const [row] = await tx
      .update(events)
      .set({
        cellId: cell.id,
        cellPinned: true,
        directoryEpoch: changed ? ev.directoryEpoch + 1 : ev.directoryEpoch,
        updatedAt: new Date(),
      })
      .where(eq(events.id, ev.id))
      .returning();
    if (changed) {
      await tx
        .update(onsales)
        .set({ loadStatus: 'pending', nextLoadAt: ctx.clock.now() })
        .where(eq(onsales.eventId, ev.id));
    }
    if (changed || input.dedicated) await bumpDirectoryVersion(tx);
    ctx.log.info('event placed', {
      eventId: ev.id,
      cellId: cell.id,
      epoch: row?.directoryEpoch,
      dedicated: Boolean(input.dedicated),
    });
    inner.transaction.afterCommit.push(() => setRoomPlacement(ctx, ev.id, cell.id, row!.directoryEpoch));
    return row!;
  });
}
