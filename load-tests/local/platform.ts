import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { seedDemo } from '../../scripts/local-platform/demo';
import { repoRoot, startPlatform } from '../../scripts/local-platform/launch';
import { createTestDatabase, type TestDatabase } from '../../test/support/db';
import { dropCellTopics, uniqueCellId } from '../../test/support/kafka';
import { platformServices } from '../../test/support/services';

/**
 * The platform the load scenarios run against: every process `scripts/platform up` starts, from its
 * bundle, on 127.0.0.1, with one cell (on two cores a second cell's seven processes would only compete
 * with the one under load), fresh databases, its own Redis prefix and reporting prefix, and a demo
 * event with seats for the hot section and the soak. `stop()` ends every process and drops what it made.
 */
export async function startLoadPlatform(
  options: {
    /** The capacity check's onsale (load-tests/capacity/check.ts): more cells, its seats, R and hold TTL. */
    cells?: number;
    seatsPerEvent?: number;
    maxReleaseRate?: number;
    holdTtlSeconds?: number;
    /** Settings over the load defaults (the attack's door and trusted forwarding, load-tests/attack). */
    env?: Record<string, string>;
  } = {},
) {
  const dbs: TestDatabase[] = [];
  const db = async (prefix: string) => {
    const d = await createTestDatabase(prefix);
    dbs.push(d);
    return d;
  };
  const run = `load-${randomUUID().slice(0, 8)}`;
  const cellIds = Array.from({ length: options.cells ?? 1 }, () => uniqueCellId('load'));
  let platform: Awaited<ReturnType<typeof startPlatform>> | undefined;
  const stop = async () => {
    await platform?.stop();
    for (const id of cellIds) await dropCellTopics(id).catch(() => {});
    for (const d of dbs) await d.drop();
  };
  try {
    const controlPlane = await db('load_cp');
    const cellDbs = new Map<string, TestDatabase>();
    for (const id of cellIds) cellDbs.set(id, await db('load_cell'));
    platform = await startPlatform({
      cells: cellIds.map((id) => ({ id, databaseUrl: cellDbs.get(id)!.url })),
      controlPlaneDatabaseUrl: controlPlane.url,
      services: platformServices(),
      reporting: { prefix: `${run}/`, groupPrefix: `reporting-${run}` },
      logDir: resolve(repoRoot, `.data/load/${run}`),
      report: () => {},
      env: {
        LOG_LEVEL: 'warn',
        REDIS_KEY_PREFIX: `${run}:`,
        // Every buyer of a load run comes from 127.0.0.1 and polls faster than a page would.
        RATE_LIMIT_IP_PER_SECOND: '1000000',
        RATE_LIMIT_IP_BURST: '1000000',
        RATE_LIMIT_BUYER_PER_SECOND: '100000',
        RATE_LIMIT_BUYER_BURST: '100000',
        RELEASE_TICK_MS: '100',
        ...options.env,
      },
    });
    const demo = await seedDemo(platform, {
      seatsPerEvent: options.seatsPerEvent ?? 2_000,
      maxReleaseRate: options.maxReleaseRate ?? 2_000,
      holdTtlSeconds: options.holdTtlSeconds,
    });
    return {
      platform,
      demo,
      cellDb: (id: string) => cellDbs.get(id)!,
      logDir: resolve(repoRoot, `.data/load/${run}`),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
export type LoadPlatform = Awaited<ReturnType<typeof startLoadPlatform>>;
