import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultManifest } from '../../infra/cdktf/test/support/manifests';
import {
  type ContainerDefinition,
  containerDefinitions,
  resources,
  type Synthesized,
  synthPlatform,
} from '../../infra/cdktf/test/support/terraform';
import { ensureBundles } from '../../scripts/bundle';
import { freePort } from '../../scripts/local-platform/launch';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { BUYER_ISSUER, startIdentity, type TestIdentity } from '../support/identity';
import { dropCellTopics, uniqueCellId } from '../support/kafka';
import { mailServer } from '../support/mailbox';
import { repoRoot, serviceEnv } from '../support/services';

/** How long a process may take to answer /readyz (or finish, for a deploy step) on a loaded two-core machine. */
const READY_WITHIN_MS = 60_000;

interface Task {
  stack: string;
  family: string;
  container: ContainerDefinition;
}

/** The stacks' own containers, each with its family (`onsale-<cell>-<role>`), in the order a deploy runs them. */
function tasksOf(synth: Synthesized): Task[] {
  return [...synth.stacks.values()].flatMap(({ name, json }) =>
    resources(json, 'aws_ecs_task_definition').flatMap(({ body }) =>
      containerDefinitions(body).map((container) => ({ stack: name, family: String(body.family), container })),
    ),
  );
}

const isDeployStep = (task: Task) =>
  task.container.command.some((part) => /-(migrate|reseal-keys|provision-topics)\.mjs$/.test(part));

/**
 * The runbooks' operator tasks, each run to completion after the deploy steps with what an operator adds to one run
 * (runbooks/replay-dead-letters.md, runbooks/evacuate-an-event.md): a dry replay of the empty DLQ, an evacuation's
 * status for an event that never moved.
 */
const OPERATOR_RUNS: Record<string, { args: string[]; env: Record<string, string> }> = {
  'cell-replay-dead-letters.mjs': { args: [], env: { DRY_RUN: '1' } },
  'control-plane-evacuate-event.mjs': { args: ['status', '--event', randomUUID()], env: {} },
};
const operatorRun = (task: Task) =>
  Object.entries(OPERATOR_RUNS).find(([bundle]) =>
    task.container.command.some((part) => part.endsWith(`/${bundle}`)),
  )?.[1];
const runsToCompletion = (task: Task) => isDeployStep(task) || operatorRun(task) !== undefined;

interface Running {
  task: Task;
  child: ChildProcess;
  output: string[];
  exited: Promise<number | null>;
}

describe('every task definition of a two-cell manifest with DR boots the real process', () => {
  const services = serviceEnv();
  const cellIds: [string, string] = [uniqueCellId('b'), uniqueCellId('b')];
  let synth: Synthesized;
  let identity: TestIdentity;
  const databases = new Map<string, TestDatabase>();
  const running: Running[] = [];
  const secrets: Record<string, string> = {};
  let controlPlaneUrl = '';

  beforeAll(async () => {
    const base = defaultManifest();
    const [first, second] = base.cells;
    if (!first?.dr || !second) throw new Error('the default manifest has two cells, the first with DR');
    synth = synthPlatform({
      ...base,
      cells: [
        { ...first, id: cellIds[0] },
        { ...second, id: cellIds[1] },
      ],
    });
    // Built when stale, as every platform start does: CI has bundled already, and rebuilding them here took this file
    // from 34 s to 98 s in CI (esbuild writing every bundle while two platforms start beside it).
    await ensureBundles(repoRoot);
    identity = await startIdentity();
    databases.set('control-plane', await createTestDatabase('boot_cp'));
    for (const id of cellIds) databases.set(id, await createTestDatabase(`boot_${id}`));
    const ticketKey = (await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true })).privateKey;
    // Values an operator puts into Secrets Manager; the names come from the task definitions.
    Object.assign(secrets, {
      CELL_INTERNAL_TOKEN: randomBytes(24).toString('hex'),
      SIGNING_KEY_KEK: randomBytes(32).toString('base64'),
      // Outside a KEK rotation the secret holds "none" (Secrets Manager cannot hold an empty value).
      SIGNING_KEY_KEK_PREVIOUS: 'none',
      STRIPE_SECRET_KEY: `sk_test_${randomBytes(12).toString('hex')}`,
      STRIPE_WEBHOOK_SECRET: `whsec_${randomBytes(24).toString('hex')}`,
      TICKET_SIGNING_KEY: JSON.stringify({ ...(await exportJWK(ticketKey)), kid: 'boot-1' }),
      DATABASE_PASSWORD: new URL(services.ONSALE_PG_URL ?? '').password,
    });
    controlPlaneUrl = `http://127.0.0.1:${await freePort()}`;
  });

  afterAll(async () => {
    await Promise.all(running.map((r) => stop(r)));
    await identity?.close();
    for (const id of cellIds) await dropCellTopics(id).catch(() => {});
    for (const db of databases.values()) await db.drop().catch(() => {});
  });

  /** The database a stack's tasks reach: the cell's (its DR standby reads the same replicated ledger), or the control plane's. */
  const databaseOf = (stack: string) => {
    const id = cellIds.find((c) => stack === `cell-${c}` || stack === `cell-${c}-dr`) ?? 'control-plane';
    const db = databases.get(id);
    if (!db) throw new Error(`no database for ${stack}`);
    return db.url;
  };

  /**
   * The task's own environment with each AWS endpoint swapped for its local service, and the IAM
   * credential modes for the local password and plaintext ones. Nothing else changes: a variable the
   * table does not know keeps its synthesized value, and one still holding a Terraform reference fails.
   */
  async function localEnvironment(task: Task): Promise<Record<string, string>> {
    const env: Record<string, string> = {};
    const local: Record<string, () => Promise<string> | string> = {
      DATABASE_URL: () => databaseOf(task.stack),
      DATABASE_URL_CONTROL_PLANE: () => databaseOf(task.stack),
      DATABASE_AUTH: () => 'password',
      KAFKA_BROKERS: () => services.KAFKA_BROKERS ?? '',
      KAFKA_AUTH: () => 'plaintext',
      // The local broker has one node.
      KAFKA_REPLICATION_FACTOR: () => '1',
      FACT_TOPIC_REPLICATION: () => '1',
      REDIS_URL: () => services.REDIS_URL ?? '',
      REDIS_AUTH: () => 'password',
      S3_BUCKET: () => services.S3_BUCKET ?? '',
      TICKETS_BUCKET: () => 'onsale-tickets',
      S3_REGION: () => services.S3_REGION ?? '',
      IDENTITY_JWKS_URL: () => identity.buyerJwksUrl,
      IDENTITY_ISSUER: () => BUYER_ISSUER,
      ADMISSION_JWKS_URL: () => `${controlPlaneUrl}/.well-known/jwks.json`,
      CONTROL_PLANE_URL: () => controlPlaneUrl,
      // Every task has a network of its own in ECS; here they share one, so each listens on a free port.
      HOST: () => '127.0.0.1',
      PORT: async () => (task.family === 'onsale-cp-api' ? new URL(controlPlaneUrl).port : String(await freePort())),
      HEALTH_PORT: async () => String(await freePort()),
    };
    for (const { name, value } of task.container.environment) env[name] = local[name] ? await local[name]() : value;
    for (const { name } of task.container.secrets) {
      const value = secrets[name];
      if (value === undefined) throw new Error(`${task.family}: no local value for the secret ${name}`);
      env[name] = value;
    }
    if (task.container.command.some((part) => part.includes('reporting'))) {
      // What the task role is in AWS: the local S3 server's endpoint and keys.
      Object.assign(env, {
        S3_ENDPOINT: services.S3_ENDPOINT,
        S3_ACCESS_KEY_ID: services.S3_ACCESS_KEY_ID,
        S3_SECRET_ACCESS_KEY: services.S3_SECRET_ACCESS_KEY,
      });
    }
    if (env.MAIL_TRANSPORT === 'ses') {
      // What SES is in AWS: the local mail server.
      Object.assign(env, { MAIL_TRANSPORT: 'smtp', SMTP_URL: mailServer().smtpUrl });
    }
    const unresolved = Object.entries(env).filter(([, value]) => value.includes('${'));
    expect(unresolved, `${task.family}: AWS references with no local service`).toEqual([]);
    return env;
  }

  async function start(task: Task): Promise<Running & { env: Record<string, string> }> {
    const operator = operatorRun(task);
    const env = { ...(await localEnvironment(task)), ...operator?.env };
    const [command, ...bundle] = task.container.command;
    const args = [...bundle, ...(operator?.args ?? [])];
    // Exactly the task's command and environment (plus PATH to find node), from the image's working directory.
    const child = spawn(command ?? 'node', args, { cwd: repoRoot, env: { PATH: process.env.PATH, ...env } });
    const output: string[] = [];
    child.stdout?.on('data', (d) => output.push(String(d)));
    child.stderr?.on('data', (d) => output.push(String(d)));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const r = { task, child, output, exited, env };
    running.push(r);
    return r;
  }

  async function stop(r: Running): Promise<void> {
    if (r.child.exitCode !== null || r.child.signalCode !== null) return;
    r.child.kill('SIGTERM');
    const timer = setTimeout(() => r.child.kill('SIGKILL'), 20_000);
    await r.exited;
    clearTimeout(timer);
  }

  /** A deploy step or an operator task exits 0; a service answers /readyz with 200 (its HTTP port, or a worker's HEALTH_PORT). */
  async function becomesReady(r: Running & { env: Record<string, string> }): Promise<void> {
    const where = `${r.task.stack}/${r.task.family}`;
    if (runsToCompletion(r.task)) {
      const code = await Promise.race([
        r.exited,
        new Promise((res) => setTimeout(() => res('timeout'), READY_WITHIN_MS)),
      ]);
      expect(code, `${where} exited:\n${r.output.join('').slice(-2000)}`).toBe(0);
      return;
    }
    const deadline = Date.now() + READY_WITHIN_MS;
    // An HTTP service where its load balancer asks (the router has a HEALTH_PORT too, for its metrics).
    const port = r.env.PORT ?? r.env.HEALTH_PORT;
    expect(port, `${where} has neither HEALTH_PORT nor PORT, so nothing can tell whether it works`).toBeDefined();
    const path = r.task.family === 'onsale-cp-api' ? '/healthz' : '/readyz';
    let last = '';
    while (Date.now() < deadline) {
      if (r.child.exitCode !== null) break;
      const res = await fetch(`http://127.0.0.1:${port}${path}`).catch((err: Error) => ({ status: 0, err }));
      if (res.status === 200) return;
      last = 'err' in res ? res.err.message : `${res.status}`;
      await new Promise((res2) => setTimeout(res2, 500));
    }
    throw new Error(
      `${where} not ready within ${READY_WITHIN_MS} ms (last: ${last}):\n${r.output.join('').slice(-3000)}`,
    );
  }

  /** One stack at a time, deploy steps first, as a deploy applies it, then its operator tasks; stopped before the next (two cores). */
  async function bootStack(stack: string): Promise<string[]> {
    const tasks = tasksOf(synth).filter((t) => t.stack === stack);
    const booted: string[] = [];
    for (const task of [...tasks.filter(isDeployStep), ...tasks.filter((t) => operatorRun(t))]) {
      await becomesReady(await start(task));
      booted.push(task.family);
    }
    const services = await Promise.all(tasks.filter((t) => !runsToCompletion(t)).map((t) => start(t)));
    try {
      for (const r of services) {
        await becomesReady(r);
        booted.push(r.task.family);
      }
    } finally {
      await Promise.all(services.map((r) => stop(r)));
    }
    return booted.sort();
  }

  it('boots the control plane: migrations, key reseal, api, evacuation, waiting room, fact relay, reporting, router', async () => {
    // The cells' API, the router and the waiting room need the control plane's API running.
    const tasks = tasksOf(synth).filter((t) => t.stack === 'control-plane');
    const api = tasks.find((t) => t.family === 'onsale-cp-api');
    const migrate = tasks.find((t) => t.family === 'onsale-cp-migrate');
    const reseal = tasks.find((t) => t.family === 'onsale-cp-reseal-keys');
    if (!api || !migrate || !reseal) throw new Error('the control plane defines its api, migration and reseal tasks');
    // A deploy runs them in this order: the reseal before any process signs (runbooks/rotate-keys.md).
    await becomesReady(await start(migrate));
    await becomesReady(await start(reseal));
    await becomesReady(await start(api));
    const operatorTasks = tasks.filter((t) => operatorRun(t));
    for (const task of operatorTasks) await becomesReady(await start(task));
    const rest = tasks.filter((t) => t !== api && t !== migrate && t !== reseal && !operatorRun(t));
    const started = await Promise.all(rest.map((t) => start(t)));
    try {
      for (const r of started) await becomesReady(r);
    } finally {
      await Promise.all(started.map((r) => stop(r)));
    }
    expect(
      [...rest, ...operatorTasks]
        .map((t) => t.family)
        .concat(api.family, migrate.family, reseal.family)
        .sort(),
    ).toEqual(
      [
        'onsale-cp-api',
        'onsale-cp-evacuate-event',
        'onsale-cp-fact-relay',
        'onsale-cp-migrate',
        'onsale-cp-reporting',
        'onsale-cp-reseal-keys',
        'onsale-cp-router',
        'onsale-cp-waiting-room',
      ].sort(),
    );
  });

  const cellRoles = [
    'api',
    'expiry',
    'migrate',
    'notifier',
    'outbox-relay',
    'payment',
    'provision-topics',
    'reconciler',
    'replay-dead-letters',
    'saga',
    'ticket',
  ];

  it('boots every role of each cell, its deploy steps first', async () => {
    for (const id of cellIds) {
      expect(await bootStack(`cell-${id}`)).toEqual(cellRoles.map((role) => `onsale-${id}-${role}`));
    }
  });

  it("boots every role of the DR standby's task definitions against the replicated ledger", async () => {
    const [id] = cellIds;
    // A standby has no writer: no deploy step and no operator task until it is promoted.
    const standbyRoles = cellRoles.filter(
      (role) => role !== 'migrate' && role !== 'provision-topics' && role !== 'replay-dead-letters',
    );
    expect(await bootStack(`cell-${id}-dr`)).toEqual(standbyRoles.map((role) => `onsale-${id}-dr-${role}`));
  });
});
