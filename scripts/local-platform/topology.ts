import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { repoRoot } from './process';

/**
 * The platform's topology, described once: the cells are those of the manifest the stacks are synthesized from
 * (infra/cdktf/cells.json, or ONSALE_MANIFEST), in its order. scripts/services gives each its own PostgreSQL server,
 * Redis and Kafka broker and names them in services.env under the cell's suffix; `platform up` runs one cell per
 * manifest cell, with its id, on those stores; the end-to-end platform puts its cells on them in the same order.
 */
export const manifestPath = () => process.env.ONSALE_MANIFEST ?? resolve(repoRoot, 'infra/cdktf/cells.json');

export function manifestCellIds(path = manifestPath()): string[] {
  // Only the ids are read here; the stacks' parser (infra/cdktf/src/manifest.ts) checks the rest when they synthesize.
  const { cells } = JSON.parse(readFileSync(path, 'utf8')) as { cells?: { id?: unknown }[] };
  const ids = (cells ?? []).map((c) => c.id);
  if (!ids.length || !ids.every((id): id is string => typeof id === 'string' && id !== ''))
    throw new Error(`${path}: cells must list at least one cell, each with an id`);
  return ids;
}

/** A cell's own stores, as scripts/services names them in services.env (c1: DATABASE_URL_CELL_C1, ...). */
export interface CellStores {
  /** The server, without a database: the end-to-end platform creates a database of its own on it. */
  serverUrl: string;
  databaseUrl: string;
  redisUrl: string;
  kafkaBrokers: string;
}

export function cellStores(cellId: string, env: Record<string, string | undefined> = process.env): CellStores {
  const suffix = `CELL_${cellId.toUpperCase().replaceAll('-', '_')}`;
  const need = (name: string) => {
    const value = env[`${name}_${suffix}`];
    if (!value)
      throw new Error(
        `${name}_${suffix} is not set: scripts/services up starts cell ${cellId}'s stores and names them`,
      );
    return value;
  };
  return {
    serverUrl: need('ONSALE_PG_URL'),
    databaseUrl: need('DATABASE_URL'),
    redisUrl: need('REDIS_URL'),
    kafkaBrokers: need('KAFKA_BROKERS'),
  };
}
