import { sql } from 'drizzle-orm';
import type { DbOrTx } from './client';

/** Bumps the directory feed version inside the caller's transaction; returns the new version. */
export async function bumpDirectoryVersion(tx: DbOrTx): Promise<number> {
  const r = await tx.execute<{ version: string }>(sql`
    insert into directory_meta (id, version, updated_at) values (1, 1, now())
    on conflict (id) do update set version = directory_meta.version + 1, updated_at = now()
    returning version`);
  return Number(r.rows[0]?.version ?? 0);
}

export async function directoryVersion(tx: DbOrTx): Promise<number> {
  const r = await tx.execute<{ version: string }>(sql`select version from directory_meta where id = 1`);
  return Number(r.rows[0]?.version ?? 0);
}
