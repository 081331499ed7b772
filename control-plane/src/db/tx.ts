import type { PgTransactionConfig } from 'drizzle-orm/pg-core';
import type { Db, DbOrTx, Tx } from './client';

export type { Tx };

/**
 * An open transaction that verbs called inside it join, and what waits for its commit: the effects
 * outside PostgreSQL (the waiting room's Redis keys) that must not happen if it rolls back.
 */
export interface OpenTransaction {
  tx: Tx;
  afterCommit: (() => Promise<unknown>)[];
}

/** What a verb reaches PostgreSQL with: the database, and the caller's transaction when it has one. */
export interface DbScope {
  db: Db;
  transaction?: OpenTransaction;
}

type Joined<S> = S & { transaction: OpenTransaction };

/**
 * Every write of the control plane runs here. Inside a caller's transaction (`scope.transaction`)
 * the work joins it, so two verbs commit or roll back together; otherwise it gets its own, with
 * `config` (an isolation level, read only). `inner` is the scope bound to the transaction, for the
 * verbs the work calls; effects pushed on `inner.transaction.afterCommit` run once the outermost
 * transaction commits, in order, and never after a rollback.
 */
export async function withTransaction<S extends DbScope, T>(
  scope: S,
  work: (tx: Tx, inner: Joined<S>) => Promise<T>,
  config?: PgTransactionConfig,
): Promise<T> {
  if (scope.transaction) return work(scope.transaction.tx, scope as Joined<S>);
  const afterCommit: OpenTransaction['afterCommit'] = [];
  const result = await scope.db.transaction((tx) => work(tx, { ...scope, transaction: { tx, afterCommit } }), config);
  for (const effect of afterCommit) await effect();
  return result;
}

/** Where a read goes: the caller's transaction (it sees the writes made so far), else the database. */
export function dbOf(scope: DbScope): DbOrTx {
  return scope.transaction?.tx ?? scope.db;
}
