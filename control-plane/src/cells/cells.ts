import { DomainError } from '@onsale/contracts';
import { asc, eq, sql } from 'drizzle-orm';
import type { Services } from '../context';
import type { DbOrTx } from '../db/client';
import { type Cell, cells } from '../db/schema';
import { bumpDirectoryVersion } from '../db/sql';
import { dbOf, withTransaction } from '../db/tx';
import { conflict, notFound } from '../lib/errors';

export interface CellInput {
  id: string;
  baseUrl: string;
  region: string;
  status?: Cell['status'];
  capacity?: number;
  kafkaBrokers?: string;
  kafkaAuth?: Cell['kafkaAuth'];
}

export async function registerCell({ ctx, input }: { ctx: Services; input: CellInput }) {
  return withTransaction(ctx, async (tx) => {
    const [row] = await tx
      .insert(cells)
      .values({
        id: input.id,
        baseUrl: input.baseUrl,
        region: input.region,
        status: input.status ?? 'active',
        capacity: input.capacity ?? 10,
        kafkaBrokers: input.kafkaBrokers,
        kafkaAuth: input.kafkaAuth,
      })
      .onConflictDoNothing()
      .returning();
    if (!row) throw conflict(`cell ${input.id} already exists`);
    // The revocations still in force reach a new cell too: evacuation moves admitted buyers' events onto it.
    await tx.execute(sql`
      INSERT INTO revocation_deliveries (revocation_id, cell_id)
      SELECT id, ${row.id} FROM revocations WHERE expires_at > now()`);
    await bumpDirectoryVersion(tx);
    ctx.log.info('cell registered', { cellId: row.id, region: row.region });
    return row;
  });
}

export async function updateCell({
  ctx,
  cellId,
  input,
}: {
  ctx: Services;
  cellId: string;
  input: Partial<Omit<CellInput, 'id'>>;
}) {
  return withTransaction(ctx, async (tx) => {
    const [row] = await tx
      .update(cells)
      .set({ ...input, updatedAt: new Date() })
      .where(eq(cells.id, cellId))
      .returning();
    if (!row) throw notFound('cell');
    await bumpDirectoryVersion(tx);
    ctx.log.info('cell updated', { cellId, status: row.status });
    return row;
  });
}

/** Cells with their load: events placed on them that are not ended. */
export async function listCells({ ctx }: { ctx: Services }) {
  const r = await dbOf(ctx).execute<{ cell_id: string; n: string }>(
    sql`select cell_id, count(*) as n from events where cell_id is not null and status <> 'ended' group by cell_id`,
  );
  const load = new Map(r.rows.map((x) => [x.cell_id, Number(x.n)]));
  const rows = await dbOf(ctx).select().from(cells).orderBy(asc(cells.id));
  return rows.map((c) => ({ ...c, events: load.get(c.id) ?? 0, load: (load.get(c.id) ?? 0) / c.capacity }));
}

/** The least-loaded active cell (events not ended ÷ capacity) that is not dedicated to another event. */
export async function leastLoadedCell(tx: DbOrTx): Promise<Cell> {
  const r = await tx.execute<{ id: string }>(sql`
    select c.id
    from cells c
    left join events e on e.cell_id = c.id and e.status <> 'ended'
    where c.status = 'active' and c.dedicated_event_id is null
    group by c.id, c.capacity
    order by count(e.id)::float / c.capacity asc, c.id asc
    limit 1`);
  const id = r.rows[0]?.id;
  if (!id) throw new DomainError('cell_unavailable', 'no active cell can take the event');
  const [cell] = await tx.select().from(cells).where(eq(cells.id, id));
  return cell!;
}

export async function getActiveCell(tx: DbOrTx, cellId: string): Promise<Cell> {
  const [cell] = await tx.select().from(cells).where(eq(cells.id, cellId));
  if (!cell)
    throw new DomainError('validation_failed', `unknown cell ${cellId}`, {
      issues: [{ path: 'cellId', message: 'unknown cell' }],
    });
  if (cell.status !== 'active') throw conflict(`cell ${cellId} is ${cell.status}`);
  return cell;
}
