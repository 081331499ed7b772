import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { buildCellApi } from '@onsale/cell/api/server';
import { CellApiConfig } from '@onsale/cell/config';
import { migrateCell } from '@onsale/cell/db/migrate';
import { createTestDatabase, type TestDatabase } from './db';
import { BUYER_AUDIENCE, BUYER_ISSUER, type TestIdentity } from './identity';
import { serviceEnv } from './services';

export interface TestCell {
  cellId: string;
  url: string;
  db: TestDatabase;
  internalToken: string;
  api: ReturnType<typeof buildCellApi>;
  close(): Promise<void>;
}

/** A real cell API on its own migrated database, served over HTTP on a free port. */
export async function startTestCell(
  identity: TestIdentity,
  opts: { cellId?: string; env?: Record<string, string> } = {},
): Promise<TestCell> {
  const cellId = opts.cellId ?? 'cell-t';
  const db = await createTestDatabase('cell_test', 'cell');
  await migrateCell(db.url, cellId, 1);
  const internalToken = randomBytes(16).toString('hex');
  const env = serviceEnv();
  const config = CellApiConfig.parse({
    CELL_ID: cellId,
    DATABASE_URL: db.url,
    DB_POOL_SIZE: '30',
    PORT: '0',
    IDENTITY_JWKS_URL: identity.buyerJwksUrl,
    IDENTITY_ISSUER: BUYER_ISSUER,
    IDENTITY_AUDIENCE: BUYER_AUDIENCE,
    ADMISSION_JWKS_URL: identity.admissionJwksUrl,
    CELL_INTERNAL_TOKEN: internalToken,
    REDIS_URL: env.REDIS_URL,
    KAFKA_BROKERS: env.KAFKA_BROKERS,
    LOG_LEVEL: 'warn',
    AVAILABILITY_CACHE_MS: '0',
    // This cell shares its event loop and heap with the test file (and, in a non-isolated worker, with the files before
    // it): a garbage collection there is not a Redis outage. The platforms' cells keep the default.
    REDIS_COMMAND_TIMEOUT_MS: '2000',
    ...opts.env,
  });
  const api = buildCellApi(config);
  await api.connect();
  const server = serve({ fetch: api.app.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => server.once('listening', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    cellId,
    url,
    db,
    // The caller's CELL_INTERNAL_TOKEN, when it gives one (a control plane that calls this cell).
    internalToken: config.CELL_INTERNAL_TOKEN,
    api,
    async close() {
      await new Promise<void>((r) => server.close(() => r()));
      await api.close();
      await db.drop();
    },
  };
}
