import { createPool, type DatabaseAuthConfig } from '@onsale/aws-auth';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import type pg from 'pg';
import * as schema from './schema';

export type Db = NodePgDatabase<typeof schema>;
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
/** A transaction handle or the database itself: helpers accept either so they compose. */
export type DbOrTx = Db | Tx;

export function createDb(
  url: string,
  max = 10,
  auth: DatabaseAuthConfig = { DATABASE_AUTH: 'password' },
): { db: Db; pool: pg.Pool } {
  // Tolerant of the server's loss: found by the control-plane drill, whose API exited and crash-looped meanwhile.
  const pool = createPool(url, auth, { max, application_name: 'control-plane' });
  return { db: drizzle(pool, { schema, casing: 'snake_case' }), pool };
}
