import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { type DemoSeed, resumeDemo, seedDemo } from '../../scripts/local-platform/demo';
import { repoRoot, startPlatform } from '../../scripts/local-platform/launch';
import { type CellStores, cellStores, manifestCellIds } from '../../scripts/local-platform/topology';
import { createTestDatabase, type TestDatabase } from './db';
import { dropCellTopics, uniqueCellId } from './kafka';
import { platformServices, serviceEnv } from './services';

type CellServers = Pick<CellStores, 'serverUrl' | 'redisUrl' | 'kafkaBrokers'>;
const allThree = (given?: Partial<CellServers>): given is CellServers =>
  Boolean(given?.serverUrl && given.redisUrl && given.kafkaBrokers);

/**
 * The whole platform as `scripts/platform up` runs it, on fresh databases and cell ids of its
 * own, with the waiting room's ticks shortened and its per-IP limit raised (every test buyer
 * comes from 127.0.0.1).
 */
export async function startTestPlatform(options: {
  seatsPerEvent: number;
  maxReleaseRate: number;
  holdTtlSeconds?: number;
  perBuyerLimit?: number;
  stateFile?: string;
  /** Fixed ports (the console's tests name the issuer and the router in its settings before start). */
  ports?: { router?: number; identity?: number };
  /** More environment for every process. */
  env?: Record<string, string>;
  /** How many cells (two unless a test needs more, as a whole-cell evacuation to two targets does). */
  cellCount?: number;
  /** A real Prometheus scraping every process, with these rule files. */
  prometheus?: { ruleFiles?: string[] };
  /** Every process's spans as JSON lines in this file (scripts/local-platform/trace-file.ts). */
  traces?: { file: string };
  /** Where the platform keeps its secrets between starts (`restart()`), as `platform up` keeps them in .data. */
  secretsFile?: string;
  /**
   * `per-cell`: each cell on its own PostgreSQL server, Redis and Kafka broker (those scripts/services starts for the
   * manifest's cells, so at most as many cells as it has), as `platform up` and the stacks run them. Default
   * `shared`: every cell on the control plane's three, for tests that read a cell's topics or keys through them.
   */
  topology?: 'shared' | 'per-cell';
  /**
   * Per-cell topology: stores of the cell at that index instead of its own in services.env (a drill's, which it kills,
   * freezes or promotes): its PostgreSQL server (a URL without a database), Redis or brokers. A cell past the
   * manifest's must be given all three.
   */
  cellServers?: Record<number, Partial<CellServers>>;
  /**
   * The control plane's PostgreSQL server (a URL without a database), Redis or brokers instead of the shared ones: a
   * drill's own, which it freezes, kills or restarts.
   */
  servers?: { postgresUrl?: string; redisUrl?: string; kafkaBrokers?: string };
}) {
  const dbs: TestDatabase[] = [];
  const db = async (prefix: string, server?: string) => {
    const d = await createTestDatabase(prefix, 'empty', server);
    dbs.push(d);
    return d;
  };
  const controlPlane = await db('e2e_cp', options.servers?.postgresUrl);
  const run = `e2e-${randomUUID().slice(0, 8)}`;
  const cellIds = Array.from({ length: options.cellCount ?? 2 }, (_, i) => uniqueCellId(`e2e${'abcdefgh'[i]}`));
  const env = serviceEnv();
  const shared = platformServices();
  const services = {
    ...shared,
    redisUrl: options.servers?.redisUrl ?? shared.redisUrl,
    kafkaBrokers: options.servers?.kafkaBrokers ?? shared.kafkaBrokers,
  };
  // The per-cell stores are the manifest's cells', in its order: cell i of this platform runs on the i-th's.
  const stores = manifestCellIds();
  const cells: { id: string; databaseUrl: string; db: TestDatabase; redisUrl?: string; kafkaBrokers?: string }[] = [];
  for (const [i, id] of cellIds.entries()) {
    if (options.topology === 'per-cell') {
      const slot = stores[i];
      const given = options.cellServers?.[i];
      let own: CellServers;
      if (slot) own = { ...cellStores(slot, env), ...given };
      else if (allThree(given)) own = given;
      else
        throw new Error(
          `the per-cell topology has ${stores.length} cells' stores (the manifest's); cell ${i} needs its own`,
        );
      const d = await db('e2e_cell', own.serverUrl);
      cells.push({ id, databaseUrl: d.url, db: d, redisUrl: own.redisUrl, kafkaBrokers: own.kafkaBrokers });
    } else {
      const d = await db('e2e_cell');
      cells.push({ id, databaseUrl: d.url, db: d });
    }
  }
  const start = () =>
    startPlatform({
      cells: cells.map(({ id, databaseUrl, redisUrl, kafkaBrokers }) => ({ id, databaseUrl, redisUrl, kafkaBrokers })),
      controlPlaneDatabaseUrl: controlPlane.url,
      services,
      reporting: { prefix: `${run}/`, groupPrefix: `reporting-${run}` },
      logDir: resolve(repoRoot, `.data/e2e/${run}`),
      stateFile: options.stateFile,
      secretsFile: options.secretsFile,
      ports: options.ports,
      prometheus: options.prometheus,
      traces: options.traces,
      env: {
        LOG_LEVEL: 'info',
        REDIS_KEY_PREFIX: `${run}:`,
        RATE_LIMIT_IP_PER_SECOND: '10000',
        RATE_LIMIT_IP_BURST: '10000',
        // Release, scheduler and controller faster than production's 250/1000/5000 ms, so a test's buyers and sale
        // starts do not wait on a tick, but no faster than the tests need: an idle platform's ticks are most of its
        // control plane's CPU and PostgreSQL's. Revocation delivery slower than production's 100 ms: no test that
        // starts a platform revokes a token. Scheduler 200 -> 500 ms, controller 1000 -> 2000 ms and revocation
        // delivery 100 -> 1000 ms took the machine with one idle platform from 0.28-0.31 to 0.25-0.26 busy cores, the
        // services' own 0.07 included (55 s samples, 2026-12-07).
        RELEASE_TICK_MS: '100',
        SCHEDULER_TICK_MS: '500',
        CONTROLLER_TICK_MS: '2000',
        REVOCATION_DELIVERY_TICK_MS: '1000',
        KAFKA_SESSION_TIMEOUT_MS: '6000',
        // A third of the session, as Kafka advises; an idle consumer's fetch waits as long, so a platform idling
        // through a test's outage or sale window asks its broker half as often (0.30 -> 0.27 cores idle).
        KAFKA_HEARTBEAT_INTERVAL_MS: '2000',
        STRIPE_EMULATOR_WEBHOOK_RETRY_BASE_MS: '500',
        STRIPE_EMULATOR_WEBHOOK_RETRY_MAX_ATTEMPTS: '12',
        ...options.env,
      },
    });
  let platform = await start();
  let demo: DemoSeed = await seedDemo(platform, {
    seatsPerEvent: options.seatsPerEvent,
    maxReleaseRate: options.maxReleaseRate,
    holdTtlSeconds: options.holdTtlSeconds,
    perBuyerLimit: options.perBuyerLimit,
  });
  const cellDb = (cellId: string) => cells.find((c) => c.id === cellId)!.db;
  const orderStatus = async (cellId: string, orderId: string) =>
    (await cellDb(cellId).query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [orderId]))[0]?.status;
  return {
    get platform() {
      return platform;
    },
    get demo() {
      return demo;
    },
    /**
     * Stops every process and starts the platform again on the same databases, topics and bucket (and the same
     * secrets, with `secretsFile`), as `platform down` then `platform up` do; the demo is resumed, not seeded.
     */
    async restart() {
      await platform.stop();
      platform = await start();
      const resumed = await resumeDemo(platform, demo);
      if (!resumed) throw new Error('the demo events are gone after a restart');
      demo = resumed;
    },
    /** Where this platform's reporting consumer writes in the bucket. */
    reportingPrefix: `${run}/`,
    /** The prefix of the control plane's Redis keys (its waiting rooms) on its Redis. */
    redisKeyPrefix: `${run}:`,
    cellDb,
    /** A cell's own services in the per-cell topology (its Redis URL and broker list); undefined when shared. */
    cellServices: (cellId: string) => {
      const c = cells.find((x) => x.id === cellId)!;
      return { redisUrl: c.redisUrl, kafkaBrokers: c.kafkaBrokers };
    },
    controlPlaneDb: controlPlane,
    /** Every cell with its ledger, as the audit reads them. */
    cells: () => cells.map(({ id, db }) => ({ id, db })),
    /** The seats the router's availability route offers for an event (wherever it sells now). */
    async seatsOf(eventId: string): Promise<string[]> {
      const res = await fetch(`${platform.urls.router}/events/${eventId}/availability`);
      return ((await res.json()) as { availableSeatIds: string[] }).availableSeatIds;
    },
    /** The control plane's public directory: which cell sells each event, and the cells' states. */
    async directory() {
      const res = await fetch(`${platform.urls.controlPlane}/directory`);
      return (await res.json()) as {
        events: { eventId: string; cellId: string; moving?: boolean }[];
        cells: { id: string; status: string }[];
      };
    },
    orderStatus,
    /** Waits until an order in a cell's ledger reaches one of `want`; fails naming where it stuck. */
    async untilStatus(cellId: string, orderId: string, want: string[], timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      let last: string | undefined;
      while (Date.now() < deadline) {
        last = await orderStatus(cellId, orderId);
        if (last && want.includes(last)) return last;
        await new Promise((r) => setTimeout(r, 300));
      }
      throw new Error(`order ${orderId} on ${cellId} stuck in ${last} (wanted ${want.join('|')})`);
    },
    async stop() {
      await platform.stop();
      for (const c of cells) await dropCellTopics(c.id, (c.kafkaBrokers ?? services.kafkaBrokers).split(','));
      for (const d of dbs) await d.drop();
    },
  };
}
export type TestPlatform = Awaited<ReturnType<typeof startTestPlatform>>;
