import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { migrateCell } from '@onsale/cell/db/migrate';
import { CELL_ROLE_NAMES, CELL_ROLES, type CellRoleName } from '@onsale/cell/runtime/roles';
import { bundleCommand, bundleEnv, ensureBundles } from '../bundle';
import { isAlive, repoRoot, startProcess } from './process';
import { prometheusSetup, type ScrapeJob } from './prometheus';
import { loadSecrets, publishedTicketKeys, saveSecrets, signingTicketKey } from './secrets';
import type { PlatformServices } from './services';
import type { PlatformState } from './status';
import { type Supervised, supervise } from './supervisor';
import { startTraceFile } from './trace-file';

/** Every process role a cell runs; each is its own entry point and OS process. */

export interface PlatformOptions {
  /**
   * Cell ids; each gets its own database, topics and processes. A cell's own Redis and broker (the per-cell
   * topology, as in the stacks); without them the cell uses the control plane's (`services`).
   */
  cells: { id: string; databaseUrl: string; redisUrl?: string; kafkaBrokers?: string }[];
  controlPlaneDatabaseUrl: string;
  services: PlatformServices;
  /**
   * Where the reporting consumer writes inside the bucket and the prefix of its consumer groups:
   * platforms sharing one broker and one bucket (the e2e tests) each keep their own.
   */
  reporting?: { prefix: string; groupPrefix: string };
  /** Where each process's output goes, one file per process. */
  logDir: string;
  /** Fixed ports for a person to remember; tests leave them out and get free ones. */
  ports?: { router?: number; controlPlane?: number; identity?: number; stripe?: number; cells?: number[] };
  /** Extra environment for every process (tests shorten ticks and raise rate limits). */
  env?: Record<string, string>;
  /** Where the supervisor's status goes for `scripts/platform status` and `down`. */
  stateFile?: string;
  /**
   * Where the platform's secrets are kept between starts (KEK, ticket keys, webhook secrets, tokens), owner-only;
   * created at the first start. Omitted: new secrets for this start alone (a test's platform, started once).
   */
  secretsFile?: string;
  /** A real Prometheus scraping every process, with these rule files (default: ops/prometheus/alerts.yml). */
  prometheus?: { port?: number; ruleFiles?: string[] };
  /**
   * Every process's spans, every trace kept, as JSON lines in `file` (scripts/local-platform/trace-file.ts): the
   * local stand-in for the collector beside each task.
   */
  traces?: { file: string };
  /** Where the supervisor reports an exit and a restart (default: the console). */
  report?: (line: string) => void;
  /**
   * How the platform's processes run: `bundle` (default) from the esbuild bundles the image ships, and
   * the development-only servers (the Stripe emulator, the identity issuer) from theirs (built first when
   * missing or stale); `tsx` from the TypeScript sources.
   */
  runtime?: 'bundle' | 'tsx';
}

export interface CellHandle {
  id: string;
  url: string;
  databaseUrl: string;
  /** The cell's own brokers (its KAFKA_BROKERS), which its registry entry hands to readers from outside it. */
  kafkaBrokers: string;
  webhookSecret: string;
  running: boolean;
}

/** Ports from here up to the kernel's ephemeral range are handed out; the fixed ones (scripts/services, the drills' own servers) sit below. */
const FIRST_HANDED_OUT_PORT = 20_000;
/** One file per port handed out, holding the pid of the process that handed it out: the machine's record of them. */
const PORT_CLAIMS = resolve(tmpdir(), 'onsale-ports');

/**
 * Claims `port` for this process, machine-wide: false if a live process claimed it. A claim whose process has ended
 * is taken over; what it started was stopped with it, or still holds the port, which the bind below then finds.
 */
function claim(port: number): boolean {
  const file = resolve(PORT_CLAIMS, String(port));
  try {
    writeFileSync(file, String(process.pid), { flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  // Empty: another process has just created it and not yet written its pid.
  const owner = Number(readFileSync(file, 'utf8'));
  if (!(owner > 0) || owner === process.pid || isAlive(owner)) return false;
  rmSync(file, { force: true });
  return claim(port);
}

/**
 * A port for a child process to listen on later. It is picked below the kernel's ephemeral range: a port from
 * `listen(0)` comes from that range, and in the seconds before the child binds it, any outgoing connection (to
 * PostgreSQL, Kafka, Redis) may take it as its local port. Until the child binds it, only the process that picked it
 * knows it is taken, so each pick is claimed machine-wide (PORT_CLAIMS): platforms started side by side, by test files
 * in processes of their own, once handed out one port twice (a worker's health port: it crash-looped on EADDRINUSE).
 * Each test worker used to pick from a slice of its own by VITEST_POOL_ID, but vitest 4 gives two concurrent files of
 * an isolated group the same id.
 */
export async function freePort(): Promise<number> {
  const [ephemeralLow] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  const span = Math.max(1_000, (ephemeralLow ?? 32_768) - FIRST_HANDED_OUT_PORT);
  mkdirSync(PORT_CLAIMS, { recursive: true });
  for (;;) {
    const candidate = FIRST_HANDED_OUT_PORT + Math.floor(Math.random() * span);
    if (!claim(candidate)) continue;
    const bound = await new Promise<boolean>((res) => {
      const srv = createServer();
      srv.once('error', () => res(false));
      srv.listen(candidate, '127.0.0.1', () => srv.close(() => res(true)));
    });
    if (bound) return candidate;
  }
}

/** Where each part's data lives, for `platform status`: the control plane's stores and each cell's own. */
function platformServiceAddresses(o: PlatformOptions): PlatformState['services'] {
  const hostOf = (url: string) => new URL(url).host;
  return [
    {
      owner: 'control plane',
      postgres: hostOf(o.controlPlaneDatabaseUrl),
      redis: hostOf(o.services.redisUrl),
      kafka: o.services.kafkaBrokers,
    },
    ...o.cells.map((c) => ({
      owner: c.id,
      postgres: hostOf(c.databaseUrl),
      redis: hostOf(c.redisUrl ?? o.services.redisUrl),
      kafka: c.kafkaBrokers ?? o.services.kafkaBrokers,
    })),
  ];
}

/**
 * Waits for every step to settle, then throws the first failure: a step still starting when another failed is
 * registered before the caller stops what started (with Promise.all, it would outlive the stop).
 */
async function settleAll(steps: Promise<unknown>[]): Promise<void> {
  const settled = await Promise.allSettled(steps);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * Processes that answer /healthz, /readyz and /metrics on a HEALTH_PORT of their own: the workers (a cell's, the
 * control plane's, the fact relay and the reporting consumer), which have no HTTP port, and the router, whose
 * HTTP port is the public one and serves no metrics.
 */
const OWN_HEALTH_PORT = new Set([
  ...CELL_ROLE_NAMES.map((role) => CELL_ROLES[role].entry),
  'control-plane/src/worker.ts',
  'control-plane/src/outbox/relay-main.ts',
  'reporting/src/main.ts',
  'router/src/main.ts',
]);

/**
 * The whole platform on this machine: the Stripe emulator and a development identity issuer,
 * the control plane (API, worker and fact relay), the cross-cell reporting consumer, every
 * cell's API and workers, and the edge router, each its own process, wired together with
 * the platform's secrets (kept in `secretsFile` from one start to the next). The services (PostgreSQL, Redis, Kafka, S3) must already be up. `stop()` ends everything it started.
 */
export async function startPlatform(options: PlatformOptions) {
  const processes = new Map<string, Supervised>();
  const port = async (fixed?: number) => fixed ?? (await freePort());
  const ports = {
    router: await port(options.ports?.router),
    // Chosen here, not in `run`, because the platform names it (urls.routerMetrics).
    routerHealth: await freePort(),
    controlPlane: await port(options.ports?.controlPlane),
    identity: await port(options.ports?.identity),
    stripe: await port(options.ports?.stripe),
  };
  const url = (p: number) => `http://127.0.0.1:${p}`;
  const secrets = await loadSecrets(
    options.secretsFile,
    options.cells.map((c) => c.id),
  );
  const { internalToken, stripeKey } = secrets;

  const report = options.report ?? ((line: string) => console.log(line));
  const runtime = options.runtime ?? 'bundle';
  if (runtime === 'bundle') await ensureBundles(repoRoot, report);
  // Started last before the processes, so nothing above can fail with the receiver left listening.
  const traces = options.traces ? await startTraceFile(options.traces.file) : null;
  const common = {
    LOG_LEVEL: 'info',
    ...(runtime === 'bundle' && bundleEnv(repoRoot)),
    ...(traces && { OTEL_EXPORTER_OTLP_ENDPOINT: traces.endpoint, OTEL_TRACES_SAMPLER: 'always_on' }),
    ...options.env,
  };
  const command = (entry: string) => (runtime === 'bundle' ? bundleCommand(entry, repoRoot) : undefined);
  const writeState = () => {
    if (!options.stateFile) return;
    const state: PlatformState = {
      launcherPid: process.pid,
      updatedAt: new Date().toISOString(),
      // By name: the parts start together, so the order they registered in changes from one start to the next.
      processes: [...processes.values()].map((p) => p.status()).sort((a, b) => a.name.localeCompare(b.name)),
      services: platformServiceAddresses(options),
    };
    mkdirSync(dirname(options.stateFile), { recursive: true });
    writeFileSync(`${options.stateFile}.tmp`, JSON.stringify(state, null, 2));
    renameSync(`${options.stateFile}.tmp`, options.stateFile);
  };

  /** A one-off step (a migration, topic provisioning): runs to its end, not supervised. */
  const runOnce = async (name: string, entry: string, env: Record<string, string>) => {
    const p = await startProcess(
      entry,
      { ...common, ...env },
      { name, logFile: resolve(options.logDir, `${name}.log`), command: command(entry) },
    );
    const code = await p.exited;
    if (code !== 0) throw new Error(`${name} exited with ${code}: see ${resolve(options.logDir, `${name}.log`)}`);
  };

  const prometheus = options.prometheus
    ? prometheusSetup(resolve(options.logDir, 'prometheus'), {
        port: await port(options.prometheus.port),
        ruleFiles: options.prometheus.ruleFiles,
      })
    : null;

  /**
   * A long-running role, restarted by the supervisor when it exits. Workers and the router serve their health and
   * metrics on a port of their own (OWN_HEALTH_PORT).
   */
  const run = async (
    name: string,
    entry: string,
    env: Record<string, string>,
    readyUrl?: string,
    scrape?: { job: ScrapeJob; labels?: Record<string, string> },
  ) => {
    // A port given in `env` (the router's) is kept; a worker gets a free one.
    const healthPort = OWN_HEALTH_PORT.has(entry) ? (env.HEALTH_PORT ?? String(await freePort())) : undefined;
    const health = healthPort && url(Number(healthPort));
    const p = await supervise(
      entry,
      { ...common, ...env, ...(healthPort && { HEALTH_PORT: healthPort }) },
      {
        name,
        // A process with an HTTP port (the router) is watched there, where it serves; a worker on its health port.
        readyUrl: readyUrl ?? (health && `${health}/healthz`),
        healthUrl: readyUrl ?? (health && `${health}/readyz`),
        logFile: resolve(options.logDir, `${name}.log`),
        command: command(entry),
        report,
        onChange: writeState,
      },
    );
    processes.set(name, p);
    writeState();
    if (scrape) {
      // Its /metrics: on its health port when it has one, else beside the HTTP endpoint it is ready on.
      const served = new URL(health || readyUrl!);
      prometheus?.add(name, scrape.job, served.host, scrape.labels);
    }
    return p;
  };
  const forget = (name: string) => {
    processes.delete(name);
    prometheus?.remove(name);
  };

  const stopAll = async () => {
    await Promise.all([...processes.values()].map((p) => p.stop()));
    processes.clear();
    // After the processes: each flushes its last spans on SIGTERM.
    await traces?.close();
  };

  try {
    const identity = {
      jwks: `${url(ports.identity)}/.well-known/jwks.json`,
      issuer: 'onsale:dev-identity',
      audience: 'onsale:platform',
    };
    const admissionJwks = `${url(ports.controlPlane)}/.well-known/jwks.json`;
    const controlPlaneEnv = {
      PORT: String(ports.controlPlane),
      DATABASE_URL_CONTROL_PLANE: options.controlPlaneDatabaseUrl,
      REDIS_URL: options.services.redisUrl,
      IDENTITY_JWKS_URL: identity.jwks,
      IDENTITY_ISSUER: identity.issuer,
      IDENTITY_AUDIENCE: identity.audience,
      CELL_INTERNAL_TOKEN: internalToken,
      SIGNING_KEY_KEK: secrets.kek.current,
      TRUST_PROXY: 'true',
      // The promoter console signs in through the development issuer and is reached through the router.
      CONSOLE_OIDC_ISSUER_URL: url(ports.identity),
      CONSOLE_PUBLIC_URL: url(ports.router),
      // The buyer's checkout pays from the browser, straight to the emulator, as Stripe.js pays Stripe.
      SHOP_STRIPE_API_URL: url(ports.stripe),
      SHOP_STRIPE_PUBLISHABLE_KEY: 'pk_test_onsale_local',
    };
    const startControlPlane = async () => {
      await runOnce('control-plane-migrate', 'control-plane/src/db/migrate.ts', controlPlaneEnv);
      // A KEK rotated since the last start: its second step, before any process signs (runbooks/rotate-keys.md).
      if (secrets.kek.previous.length) {
        await runOnce('control-plane-reseal-keys', 'control-plane/src/admission/reseal-main.ts', {
          ...controlPlaneEnv,
          SIGNING_KEY_KEK_PREVIOUS: secrets.kek.previous.join(','),
        });
        secrets.kek.previous = [];
        if (options.secretsFile) saveSecrets(options.secretsFile, secrets);
      }
      await run(
        'control-plane-api',
        'control-plane/src/main.ts',
        controlPlaneEnv,
        `${url(ports.controlPlane)}/healthz`,
        {
          job: 'control-plane',
        },
      );
      const { s3 } = options.services;
      await settleAll([
        run('control-plane-worker', 'control-plane/src/worker.ts', controlPlaneEnv, undefined, {
          job: 'control-plane',
        }),
        run('control-plane-fact-relay', 'control-plane/src/outbox/relay-main.ts', {
          ...controlPlaneEnv,
          KAFKA_BROKERS: options.services.kafkaBrokers,
        }),
        run('reporting', 'reporting/src/main.ts', {
          DATABASE_URL_CONTROL_PLANE: options.controlPlaneDatabaseUrl,
          KAFKA_BROKERS: options.services.kafkaBrokers,
          S3_ENDPOINT: s3.endpoint,
          S3_BUCKET: s3.bucket,
          S3_REGION: s3.region,
          S3_ACCESS_KEY_ID: s3.accessKeyId,
          S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
          REPORTING_PREFIX: options.reporting?.prefix ?? '',
          REPORTING_GROUP_PREFIX: options.reporting?.groupPrefix ?? 'reporting',
        }),
      ]);
      // The router reads the directory from the control plane's API.
      await run(
        'router',
        'router/src/main.ts',
        {
          PORT: String(ports.router),
          HEALTH_PORT: String(ports.routerHealth),
          CONTROL_PLANE_URL: url(ports.controlPlane),
          ADMISSION_JWKS_URL: admissionJwks,
          DIRECTORY_POLL_MS: '500',
        },
        `${url(ports.router)}/healthz`,
        { job: 'router' },
      );
    };

    const cells = new Map<
      string,
      CellHandle & { env: Record<string, string>; previousWebhookSecret: string | undefined }
    >();
    // Each cell signs with its own key and publishes every cell's, retired ones included while tickets they
    // signed may still be scanned: a ticket issued in one cell still scans after its event moved to another
    // (evacuation) and the scanner syncs there, and after a ticket key's rotation.
    const keyRing = JSON.stringify(publishedTicketKeys(secrets));
    for (const [i, cell] of options.cells.entries()) {
      const cellPort = await port(options.ports?.cells?.[i]);
      const cellSecrets = secrets.cells[cell.id]!;
      const { webhookSecret } = cellSecrets;
      const env = {
        CELL_ID: cell.id,
        DATABASE_URL: cell.databaseUrl,
        KAFKA_BROKERS: cell.kafkaBrokers ?? options.services.kafkaBrokers,
        REDIS_URL: cell.redisUrl ?? options.services.redisUrl,
        PORT: String(cellPort),
        IDENTITY_JWKS_URL: identity.jwks,
        IDENTITY_ISSUER: identity.issuer,
        IDENTITY_AUDIENCE: identity.audience,
        ADMISSION_JWKS_URL: admissionJwks,
        CELL_INTERNAL_TOKEN: internalToken,
        TICKET_SIGNING_KEY: signingTicketKey(cellSecrets).signing,
        TICKET_PUBLIC_JWKS: keyRing,
        STRIPE_SECRET_KEY: stripeKey,
        STRIPE_API_BASE: url(ports.stripe),
        STRIPE_WEBHOOK_SECRET: webhookSecret,
        // The notifier's mail goes to the local SMTP server; its messages are read at options.services.smtp.mailboxUrl.
        SMTP_URL: options.services.smtp.url,
        MAIL_FROM: `Onsale tickets <tickets@${cell.id}.onsale.test>`,
      };
      cells.set(cell.id, {
        id: cell.id,
        url: url(cellPort),
        databaseUrl: cell.databaseUrl,
        kafkaBrokers: env.KAFKA_BROKERS,
        webhookSecret,
        previousWebhookSecret: cellSecrets.previousWebhookSecret,
        running: false,
        env,
      });
    }

    const startCell = async (id: string) => {
      const cell = cells.get(id);
      if (!cell) throw new Error(`no cell ${id}`);
      await settleAll([
        run(`${id}-api`, 'cell/src/api/main.ts', cell.env, `${cell.url}/readyz`, {
          job: 'cell-api',
          labels: { cell: id },
        }),
        ...CELL_ROLE_NAMES.map((role) =>
          run(`${id}-${role}`, CELL_ROLES[role].entry, cell.env, undefined, {
            job: 'cell-worker',
            labels: { cell: id },
          }),
        ),
      ]);
      cell.running = true;
    };
    /** Stops every process of one cell, as a cell failure would: its database and topics stay. */
    const stopCell = async (id: string) => {
      const mine = [...processes.entries()].filter(([name]) => name.startsWith(`${id}-`));
      await Promise.all(mine.map(([, p]) => p.stop()));
      for (const [name] of mine) forget(name);
      writeState();
      const cell = cells.get(id);
      if (cell) cell.running = false;
    };
    /**
     * A region failover's "start the services with the new epoch" (runbooks/region-failover.md): the cell's
     * processes stop (those of the lost region), then start again on the standby region's database and brokers
     * with CELL_EPOCH `epoch`, their API on a new address (the standby region's load balancer), which the operator
     * then puts in the registry. The epoch must already be raised in that database (the fence): until it is, the
     * API's /readyz refuses and this fails.
     */
    const relocateCell = async (
      id: string,
      to: { databaseUrl: string; kafkaBrokers: string; epoch: number; region: string },
    ) => {
      const cell = cells.get(id);
      if (!cell) throw new Error(`no cell ${id}`);
      await stopCell(id);
      const cellPort = await freePort();
      cell.env = {
        ...cell.env,
        DATABASE_URL: to.databaseUrl,
        KAFKA_BROKERS: to.kafkaBrokers,
        CELL_EPOCH: String(to.epoch),
        CELL_REGION: to.region,
        PORT: String(cellPort),
      };
      Object.assign(cell, { url: url(cellPort), databaseUrl: to.databaseUrl, kafkaBrokers: to.kafkaBrokers });
      // The mirror made the topics it had seen; this makes any it had not (idempotent).
      await runOnce(`${id}-topics-epoch-${to.epoch}`, 'cell/src/messaging/provision-main.ts', cell.env);
      await startCell(id);
      return cell.url;
    };
    /** One more instance of a cell's worker role, as ECS scaling out starts one: its consumer group rebalances. */
    const addWorker = async (id: string, role: CellRoleName, instance: string) => {
      const cell = cells.get(id);
      if (!cell) throw new Error(`no cell ${id}`);
      const name = `${id}-${role}-${instance}`;
      const p = await run(name, CELL_ROLES[role].entry, cell.env, undefined, {
        job: 'cell-worker',
        labels: { cell: id },
      });
      return {
        async stop() {
          await p.stop();
          forget(name);
          writeState();
        },
      };
    };
    // Each part waits only for what it needs: the router for the control plane's API, a cell's processes for its
    // ledger's migrations and its topics. Nothing else orders them, so they start together.
    await settleAll([
      run(
        'stripe-emulator',
        'stripe-emulator/src/main.ts',
        { STRIPE_EMULATOR_PORT: String(ports.stripe) },
        `${url(ports.stripe)}/__emulator/health`,
      ),
      run(
        'dev-identity',
        'control-plane/src/dev-identity/server.ts',
        { DEV_IDENTITY_PORT: String(ports.identity), DEV_IDENTITY_SIGNING_KEY: secrets.identityKey },
        identity.jwks,
      ),
      startControlPlane(),
      ...[...cells.values()].map(async (cell) => {
        await migrateCell(cell.databaseUrl, cell.id, 1);
        await runOnce(`${cell.id}-topics`, 'cell/src/messaging/provision-main.ts', cell.env);
        await startCell(cell.id);
      }),
    ]);
    if (prometheus) {
      const p = await supervise(
        'prometheus',
        {},
        {
          name: 'prometheus',
          command: prometheus.command,
          readyUrl: `${prometheus.url}/-/ready`,
          healthUrl: `${prometheus.url}/-/ready`,
          logFile: resolve(options.logDir, 'prometheus.log'),
          report,
          onChange: writeState,
        },
      );
      processes.set('prometheus', p);
      writeState();
    }
    // Stripe sends every event to every endpoint; each cell's endpoint goes through the router.
    for (const cell of cells.values()) {
      const res = await fetch(`${url(ports.stripe)}/__emulator/webhook-endpoints`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          url: `${url(ports.router)}/cells/${cell.id}/webhooks/stripe`,
          secret: cell.webhookSecret,
          previousSecret: cell.previousWebhookSecret,
        }),
      });
      if (!res.ok) throw new Error(`webhook endpoint for ${cell.id}: ${res.status} ${await res.text()}`);
    }
    // A webhook secret's roll completes with this start (every cell verifies with the new one): the next start
    // registers the new secret alone.
    if (options.secretsFile && Object.values(secrets.cells).some((c) => c.previousWebhookSecret)) {
      for (const c of Object.values(secrets.cells)) delete c.previousWebhookSecret;
      saveSecrets(options.secretsFile, secrets);
    }

    return {
      urls: {
        router: url(ports.router),
        /** The router's Prometheus metrics: on its health port, not on `router`, which buyers reach. */
        routerMetrics: `${url(ports.routerHealth)}/metrics`,
        controlPlane: url(ports.controlPlane),
        identity: url(ports.identity),
        stripe: url(ports.stripe),
        prometheus: prometheus?.url,
        traces: traces?.endpoint,
      },
      stripeKey,
      internalToken,
      cells: [...cells.values()].map(({ env: _env, previousWebhookSecret: _previous, ...c }) => c),
      cellUrl: (id: string) => cells.get(id)!.url,
      startCell,
      stopCell,
      relocateCell,
      addWorker,
      logFile: (name: string) => resolve(options.logDir, `${name}.log`),
      /** Each supervised process: pid, state, restarts, where its health is. */
      status: () => [...processes.values()].map((p) => p.status()),
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
export type Platform = Awaited<ReturnType<typeof startPlatform>>;
export { repoRoot };
