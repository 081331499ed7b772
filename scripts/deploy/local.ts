import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { CELL_ROLES, CONTROL_PLANE_ROLES, type ProcessRole } from '@onsale/infra/roles';
import { PROCESSES, type ProcessName } from '@onsale/processes';
import { exportJWK, generateKeyPair } from 'jose';
import { freePort } from '../local-platform/launch';
import { lastLines, startProcess } from '../local-platform/process';
import { type Supervised, supervise } from '../local-platform/supervisor';
import type { DeployService, DeploySteps, DeployTask, TaskOutcome } from './plan';

/** Every value this machine's stores and stand-ins give a task, by the variable a process schema names it. */
export type LocalValues = Record<string, string>;

export interface LocalStepsOptions {
  values: LocalValues;
  /** One file per task and service, as the awslogs stream is in ECS. */
  logDir: string;
  report?: (line: string) => void;
  /** Told of each process just before it starts, with the environment it gets (the drill's tests watch the order). */
  starting?: (name: string, kind: 'task' | 'service', env: Record<string, string>) => Promise<void> | void;
  /** How long a service may take to answer its readiness (a loaded two-core machine starts seven at once). */
  readyWithinMs?: number;
}

const ROLES: ProcessRole[] = [...Object.values(CELL_ROLES), ...Object.values(CONTROL_PLANE_ROLES)];

/**
 * The deploy steps on this machine: each task is its process run to its end, each service its process started
 * under the launcher's supervisor (restarted when it exits, as ECS restarts a task). One instance per service: the
 * count is ECS's business, the order is what the drill proves.
 */
export class LocalSteps implements DeploySteps {
  private readonly running = new Map<string, Supervised>();

  constructor(private readonly options: LocalStepsOptions) {}

  async runTask(task: DeployTask): Promise<TaskOutcome> {
    const env = await this.environment(task.process);
    await this.options.starting?.(task.name, 'task', env);
    const logFile = resolve(this.options.logDir, `${task.name}.log`);
    const p = await startProcess(PROCESSES[task.process].entry, env, { name: task.name, capture: true, logFile });
    const exitCode = await p.exited;
    return { exitCode, reason: lastLines(p.output.join(''), 20), logs: logFile };
  }

  async rollService(service: DeployService): Promise<void> {
    await this.running.get(service.name)?.stop();
    this.running.delete(service.name);
    // A standby's services stay at zero until a failover.
    if (service.min === 0) return;
    const env = await this.environment(service.process);
    await this.options.starting?.(service.name, 'service', env);
    const readyUrl = readiness(service.process, env);
    const p = await supervise(PROCESSES[service.process].entry, env, {
      name: service.name,
      logFile: resolve(this.options.logDir, `${service.name}.log`),
      healthUrl: readyUrl,
      report: this.options.report ?? ((line) => console.log(line)),
    });
    this.running.set(service.name, p);
    // As ECS waits for a service to be stable: every task passing its health check, within a deadline.
    if (readyUrl) await becomesReady(service.name, readyUrl, this.options.readyWithinMs ?? 180_000);
  }

  /** Where each running service answers its readiness. */
  readinessUrls(): Record<string, string | undefined> {
    return Object.fromEntries([...this.running].map(([name, p]) => [name, p.status().healthUrl]));
  }

  async stop(): Promise<void> {
    await Promise.all([...this.running.values()].map((p) => p.stop()));
    this.running.clear();
  }

  /** The variables the process reads that this machine has values for; each listener gets a port of its own. */
  private async environment(process: ProcessName): Promise<Record<string, string>> {
    const reads = Object.keys(PROCESSES[process].schema.shape);
    const env: Record<string, string> = {};
    for (const name of reads) {
      const value = this.options.values[name];
      if (value !== undefined) env[name] = value;
    }
    // Every task has a network of its own in ECS; here they share one.
    if (reads.includes('PORT')) env.PORT = String(await freePort());
    if (reads.includes('HEALTH_PORT')) env.HEALTH_PORT = String(await freePort());
    return env;
  }
}

/** What the load balancer (an HTTP role's health path) or the container health check (a worker's) asks. */
function readiness(process: ProcessName, env: Record<string, string>): string | undefined {
  const http = ROLES.find((r) => r.process === process)?.http;
  if (http && env.PORT) return `http://127.0.0.1:${env.PORT}${http.healthPath}`;
  if (env.HEALTH_PORT) return `http://127.0.0.1:${env.HEALTH_PORT}/readyz`;
  return undefined;
}

async function becomesReady(name: string, url: string, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    const res = await fetch(url).catch((err: Error) => err);
    if (!(res instanceof Error) && res.ok) return;
    last = res instanceof Error ? res.message : `${res.status}`;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`service ${name} not ready at ${url} within ${withinMs} ms (last: ${last})`);
}

/**
 * This machine's stand-ins for what a stack's task definitions set: the stores `scripts/services` started (its
 * environment, .data/services.env), the local platform's fixed addresses for the issuer, the control plane and the
 * Stripe emulator (scripts/local-platform/main.ts), and secrets made for this deploy, as an operator fills
 * Secrets Manager. `overrides` wins (a cell's own database, broker and Redis).
 */
export async function localValues(env: NodeJS.ProcessEnv, overrides: LocalValues): Promise<LocalValues> {
  const ticketKey = (await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true })).privateKey;
  const defined = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  return {
    ...defined,
    CELL_EPOCH: '1',
    // One local broker.
    KAFKA_REPLICATION_FACTOR: '1',
    FACT_TOPIC_REPLICATION: '1',
    IDENTITY_JWKS_URL: 'http://127.0.0.1:4100/.well-known/jwks.json',
    IDENTITY_ISSUER: 'onsale:dev-identity',
    IDENTITY_AUDIENCE: 'onsale:platform',
    ADMISSION_JWKS_URL: 'http://127.0.0.1:4000/.well-known/jwks.json',
    CONTROL_PLANE_URL: 'http://127.0.0.1:4000',
    STRIPE_API_BASE: 'http://127.0.0.1:12111',
    STRIPE_SECRET_KEY: `sk_test_${randomBytes(12).toString('hex')}`,
    STRIPE_WEBHOOK_SECRET: `whsec_${randomBytes(24).toString('hex')}`,
    CELL_INTERNAL_TOKEN: randomBytes(24).toString('hex'),
    SIGNING_KEY_KEK: randomBytes(32).toString('base64'),
    TICKET_SIGNING_KEY: JSON.stringify({ ...(await exportJWK(ticketKey)), kid: `deploy-${Date.now()}` }),
    TICKETS_BUCKET: 'onsale-tickets',
    // SES's verified sender in AWS; the notifier's mail goes to the local SMTP server (SMTP_URL in services.env).
    MAIL_FROM: 'Onsale tickets <tickets@onsale.test>',
    ...overrides,
  };
}
