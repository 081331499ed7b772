import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cellTopics } from '@onsale/contracts';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaultManifest } from '../../infra/cdktf/test/support/manifests';
import { stack, synthPlatform } from '../../infra/cdktf/test/support/terraform';
import { LocalSteps, localValues } from '../../scripts/deploy/local';
import { type DeployPlan, DeployTaskFailed, deploy, planFromOutputs } from '../../scripts/deploy/plan';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { dropCellTopics, kafkaBrokers, uniqueCellId } from '../support/kafka';
import { repoRoot, serviceEnv } from '../support/services';

/** What the drill saw of the cell's stores at the moment a process was about to start. */
interface Observation {
  name: string;
  kind: 'task' | 'service';
  at: number;
  migrations: number;
  epochRow: boolean;
  topics: string[];
}

const journalEntries = () =>
  (JSON.parse(readFileSync(resolve(repoRoot, 'cell/drizzle/meta/_journal.json'), 'utf8')) as { entries: unknown[] })
    .entries.length;

describe("a cell's deploy on the local platform: the stack's own plan, the deploy command's own order", () => {
  const services = serviceEnv();
  const admin = new Kafka({ clientId: 'deploy-drill', brokers: kafkaBrokers(), logLevel: logLevel.NOTHING }).admin();
  let plan: DeployPlan;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    // The plan Terraform prints as `terraform output -json deploy` for cell c1, its ids still unresolved.
    const synth = synthPlatform(defaultManifest());
    plan = planFromOutputs(stack(synth, 'cell-c1').json.output);
    await admin.connect();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  });
  afterAll(async () => {
    await admin.disconnect();
  });

  /** A cell of its own (database, topics) and the steps that deploy it here, watching each process start. */
  async function drill(databaseUrl: string | ((db: TestDatabase) => string)) {
    const cellId = uniqueCellId('d');
    const db = await createTestDatabase(`deploy_${cellId}`);
    const logDir = mkdtempSync(join(tmpdir(), 'onsale-deploy-'));
    const observations: Observation[] = [];
    const steps = new LocalSteps({
      values: await localValues(
        { ...services },
        {
          CELL_ID: cellId,
          DATABASE_URL: typeof databaseUrl === 'string' ? databaseUrl : databaseUrl(db),
          KAFKA_BROKERS: services.KAFKA_BROKERS ?? '',
          REDIS_URL: services.REDIS_URL ?? '',
          KAFKA_PARTITIONS: '3',
        },
      ),
      logDir,
      report: () => {},
      starting: async (name, kind) => {
        const [migrations, epoch] = await Promise.all([
          db
            .query<{ n: string }>('SELECT count(*) AS n FROM drizzle.__drizzle_migrations')
            .then((rows) => Number(rows[0]?.n))
            .catch(() => 0),
          db.query('SELECT 1 FROM cell_epoch WHERE cell_id = $1', [cellId]).catch(() => []),
        ]);
        const wanted = new Set<string>(Object.values(cellTopics(cellId)));
        const topics = (await admin.listTopics()).filter((t) => wanted.has(t)).sort();
        observations.push({ name, kind, at: Date.now(), migrations, epochRow: epoch.length === 1, topics });
      },
    });
    cleanups.push(async () => {
      await steps.stop();
      await dropCellTopics(cellId);
      await db.drop();
      rmSync(logDir, { recursive: true, force: true });
    });
    return { cellId, db, steps, observations, logDir };
  }

  it('migrates and creates the topics before any service starts; the API turns ready after', async () => {
    const { cellId, db, steps, observations } = await drill((d) => d.url);
    const record = await deploy(plan, steps);

    const tasks = record.filter((r) => r.kind === 'task');
    const rolled = record.filter((r) => r.kind === 'service');
    expect(tasks.map((t) => t.name)).toEqual(['migrate', 'provision-topics']);
    expect(rolled.map((s) => s.name).sort()).toEqual(plan.services.map((s) => s.name).sort());
    const [migrate, topics] = tasks;
    expect(migrate!.finishedAt).toBeLessThanOrEqual(topics!.startedAt);
    const lastTask = Math.max(...tasks.map((t) => t.finishedAt));
    for (const service of rolled) expect(service.startedAt, service.name).toBeGreaterThanOrEqual(lastTask);

    // Nothing was migrated or provisioned before the migration task; everything was before each service.
    const allTopics = Object.values(cellTopics(cellId)).sort();
    expect(observations[0]).toMatchObject({ name: 'migrate', migrations: 0, epochRow: false, topics: [] });
    expect(observations[1]).toMatchObject({ name: 'provision-topics', migrations: journalEntries(), topics: [] });
    const serviceStarts = observations.filter((o) => o.kind === 'service');
    expect(serviceStarts.map((o) => o.name).sort()).toEqual(plan.services.map((s) => s.name).sort());
    for (const o of serviceStarts) {
      expect(o, o.name).toMatchObject({ migrations: journalEntries(), epochRow: true, topics: allTopics });
    }

    const api = steps.readinessUrls().api;
    expect(api).toMatch(/\/readyz$/);
    const res = await fetch(api!);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', cellId });
    expect((await db.query('SELECT epoch FROM cell_epoch WHERE cell_id = $1', [cellId]))[0]).toEqual({ epoch: '1' });
  });

  it('stops at a migration that fails, shows its error, and starts no service', async () => {
    // A database that refuses connections: the migration task exits non-zero.
    const { cellId, steps, observations, logDir } = await drill('postgres://onsale:onsale@127.0.0.1:1/refused');
    const failure = await deploy(plan, steps).catch((err: unknown) => err);

    expect(failure).toBeInstanceOf(DeployTaskFailed);
    const { task, outcome, message } = failure as DeployTaskFailed;
    expect(task).toBe('migrate');
    expect(outcome.exitCode).not.toBe(0);
    expect(message).toMatch(/deploy task migrate failed \(exit code \d+\); no service was changed/);
    expect(message).toMatch(/ECONNREFUSED/);
    expect(message).toContain(join(logDir, 'migrate.log'));

    expect(observations.map((o) => o.name)).toEqual(['migrate']);
    expect(steps.readinessUrls()).toEqual({});
    expect(readdirSync(logDir)).toEqual(['migrate.log']);
    const wanted = new Set<string>(Object.values(cellTopics(cellId)));
    expect((await admin.listTopics()).filter((t) => wanted.has(t))).toEqual([]);
  });
});
