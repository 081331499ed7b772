import type pg from 'pg';
import { migrateReporting } from './db/migrate';
import type { Fact } from './facts';
import { decodeFacts } from './parquet';
import type { ObjectStore } from './s3';
import { applyFacts, PROJECTION_TABLES } from './store';

/** Every fact under the prefix, in each source partition's offset order, each once. */
export async function readAllFacts(store: ObjectStore, root: string): Promise<Fact[]> {
  const keys = (await store.list(`${root}facts/`)).filter((k) => k.endsWith('.parquet'));
  const seen = new Set<string>();
  const facts: Fact[] = [];
  for (const key of keys) {
    for (const f of await decodeFacts((await store.get(key))!)) {
      if (seen.has(f.factId)) continue;
      seen.add(f.factId);
      facts.push(f);
    }
  }
  return facts.sort((a, b) =>
    a.source !== b.source
      ? a.source < b.source
        ? -1
        : 1
      : a.partition !== b.partition
        ? a.partition - b.partition
        : a.offset < b.offset
          ? -1
          : a.offset > b.offset
            ? 1
            : 0,
  );
}

/**
 * Recomputes the projections from the S3 facts alone: the tables are emptied and refilled in
 * one transaction, so readers see the old numbers or the new ones, never a half-built mix.
 */
export async function rebuildProjections(pool: pg.Pool, store: ObjectStore, root: string): Promise<number> {
  await migrateReporting(pool);
  const facts = await readAllFacts(store, root);
  await applyFacts(pool, facts, `TRUNCATE ${PROJECTION_TABLES.map((t) => `reporting.${t}`).join(', ')}`);
  return facts.length;
}
