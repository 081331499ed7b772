import { randomBytes } from 'node:crypto';
import { migrateCell } from '@onsale/cell/db/migrate';
import type { EventLoad } from '@onsale/contracts';
import { type RunningProcess, startProcess } from '../../scripts/local-platform/process';
import { startBundled } from './bundled';
import { createTestDatabase, type TestDatabase } from './db';
import { BUYER_AUDIENCE, BUYER_ISSUER, type TestIdentity } from './identity';
import { serviceEnv } from './services';

/**
 * A cell API as its own OS process (what the benchmarks measure), on a migrated database:
 * a fresh one unless `database` is given. It runs from the bundle the image ships (built first
 * when stale) unless `runtime` is `tsx`, which the benchmarks offer to measure the difference.
 */
export async function startCellApiProcess(
  identity: TestIdentity,
  opts: {
    cellId: string;
    port: number;
    poolSize: number;
    database?: TestDatabase;
    runtime?: 'bundle' | 'tsx';
    /** As startProcess's: told of the API's process before it is ready. */
    spawned?: (p: RunningProcess) => void;
  },
) {
  const env = serviceEnv();
  const db = opts.database ?? (await createTestDatabase(`bench_${opts.cellId.replace(/-/g, '_')}`, 'cell'));
  await migrateCell(db.url, opts.cellId, 1);
  const internalToken = randomBytes(16).toString('hex');
  const url = `http://127.0.0.1:${opts.port}`;
  const start = (opts.runtime ?? 'bundle') === 'bundle' ? startBundled : startProcess;
  const api = await start(
    'cell/src/api/main.ts',
    {
      CELL_ID: opts.cellId,
      DATABASE_URL: db.url,
      DB_POOL_SIZE: String(opts.poolSize),
      PORT: String(opts.port),
      IDENTITY_JWKS_URL: identity.buyerJwksUrl,
      IDENTITY_ISSUER: BUYER_ISSUER,
      IDENTITY_AUDIENCE: BUYER_AUDIENCE,
      ADMISSION_JWKS_URL: identity.admissionJwksUrl,
      CELL_INTERNAL_TOKEN: internalToken,
      REDIS_URL: env.REDIS_URL!,
      KAFKA_BROKERS: env.KAFKA_BROKERS!,
      LOG_LEVEL: 'warn',
    },
    { readyUrl: `${url}/readyz`, spawned: opts.spawned },
  );
  return {
    url,
    db,
    api,
    async loadEvent(load: EventLoad) {
      const res = await fetch(`${url}/internal/events/${load.eventId}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${internalToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(load),
      });
      if (!res.ok) throw new Error(`load failed: ${res.status} ${await res.text()}`);
      return load;
    },
  };
}
