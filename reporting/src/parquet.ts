import { parquetReadObjects } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';
import type { Fact, FactKind } from './facts';

/**
 * Facts as Parquet: columnar, typed and compressed, readable by Athena, DuckDB and Spark
 * straight from the partitioned prefix. The writer puts no clock or random value in the file,
 * so the same facts in the same order always encode to the same bytes.
 */
export function encodeFacts(facts: Fact[]): Uint8Array {
  const col = <K extends keyof Fact>(k: K) => facts.map((f) => f[k]);
  const buffer = parquetWriteBuffer({
    createdBy: 'onsale-reporting',
    columnData: [
      { name: 'fact_id', data: col('factId'), type: 'STRING', nullable: false },
      { name: 'source', data: col('source'), type: 'STRING', nullable: false },
      { name: 'partition', data: col('partition'), type: 'INT32', nullable: false },
      { name: 'offset', data: col('offset'), type: 'INT64', nullable: false },
      { name: 'kind', data: col('kind'), type: 'STRING', nullable: false },
      { name: 'tenant_id', data: col('tenantId'), type: 'STRING', nullable: false },
      { name: 'event_id', data: col('eventId'), type: 'STRING', nullable: false },
      { name: 'order_id', data: col('orderId'), type: 'STRING' },
      { name: 'occurred_at', data: col('occurredAt'), type: 'TIMESTAMP', nullable: false },
      { name: 'amount', data: col('amount'), type: 'INT64' },
      { name: 'currency', data: col('currency'), type: 'STRING' },
      { name: 'seats', data: facts.map((f) => (f.seats ? JSON.stringify(f.seats) : null)), type: 'STRING' },
      { name: 'count', data: col('count'), type: 'INT32' },
      { name: 'detail', data: col('detail'), type: 'STRING' },
      // Only in an object with a GA place: objects of facts without one encode to the bytes they had before it.
      ...(facts.some((f) => f.ga)
        ? [{ name: 'ga', data: facts.map((f) => (f.ga ? JSON.stringify(f.ga) : null)), type: 'STRING' as const }]
        : []),
    ],
  });
  return new Uint8Array(buffer);
}

export async function decodeFacts(bytes: Uint8Array): Promise<Fact[]> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const rows = (await parquetReadObjects({ file })) as Record<string, unknown>[];
  return rows.map((r) => ({
    factId: r.fact_id as string,
    source: r.source as string,
    partition: Number(r.partition),
    offset: BigInt(r.offset as bigint),
    kind: r.kind as FactKind,
    tenantId: r.tenant_id as string,
    eventId: r.event_id as string,
    orderId: (r.order_id as string | null) ?? null,
    occurredAt: r.occurred_at instanceof Date ? r.occurred_at : new Date(Number(r.occurred_at)),
    amount: r.amount === null || r.amount === undefined ? null : BigInt(r.amount as bigint),
    currency: (r.currency as string | null) ?? null,
    seats: r.seats ? JSON.parse(r.seats as string) : null,
    count: r.count === null || r.count === undefined ? null : Number(r.count),
    detail: (r.detail as string | null) ?? null,
    ga: r.ga ? JSON.parse(r.ga as string) : null,
  }));
}
