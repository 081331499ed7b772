import { createServer } from 'node:http';
import { keepAliveBehindLoadBalancer, LOAD_BALANCER_IDLE_SECONDS } from '@onsale/contracts/runtime/load-balancer';
import { environmentProblems, PROCESS_NAMES, type ProcessName, processCommand } from '@onsale/processes';
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultManifest } from './support/manifests';
import {
  type Block,
  type ContainerDefinition,
  containerDefinitions,
  resources,
  type Synthesized,
  stack,
  synthPlatform,
} from './support/terraform';

describe('task definitions and the processes they run', () => {
  let synth: Synthesized;
  let containers: { where: string; container: ContainerDefinition }[];
  beforeAll(() => {
    synth = synthPlatform(defaultManifest());
    containers = [...synth.stacks.values()].flatMap(({ name, json }) =>
      resources(json, 'aws_ecs_task_definition').flatMap(({ name: task, body }: { name: string; body: Block }) =>
        containerDefinitions(body).map((container) => ({
          where: `${name}/${task}`,
          container,
        })),
      ),
    );
  });

  it("gives every container a process's command, and exactly the variables that process's schema reads", () => {
    const run = new Set<ProcessName>();
    for (const { where, container } of containers) {
      const process = PROCESS_NAMES.find((p) => processCommand(p).join(' ') === container.command.join(' '));
      expect(process, `${where}: ${container.command.join(' ')}`).toBeDefined();
      if (!process) continue;
      run.add(process);
      const variables = [...container.environment, ...container.secrets].map((v) => v.name);
      expect(environmentProblems(process, variables), where).toEqual([]);
    }
    // Every process the application has is run by some task, deploy steps included.
    expect([...run].sort()).toEqual([...PROCESS_NAMES].sort());
  });

  it('names a variable a process does not read, and a required one a task misses', () => {
    expect(environmentProblems('cell-payments', ['STRIPE_API_KEY'])).toEqual(
      expect.arrayContaining([
        'STRIPE_API_KEY is set but cell-payments does not read it',
        'STRIPE_SECRET_KEY is required by cell-payments but not set',
      ]),
    );
  });

  it('fails synthesis when a task definition and its process disagree', async () => {
    const { CELL_ROLES } = await import('../src/roles');
    const saga = CELL_ROLES.saga as { secrets: readonly string[] };
    const original = saga.secrets;
    Object.assign(saga, { secrets: ['STRIPE_API_KEY'] });
    try {
      expect(() => synthPlatform(defaultManifest())).toThrow(/STRIPE_API_KEY is set but cell-saga does not read it/);
    } finally {
      Object.assign(saga, { secrets: original });
    }
  });

  it("configures the console through the API's own schema: its public URL is the edge's", () => {
    const api = containers.filter(
      ({ container }) => container.command.join(' ') === processCommand('control-plane-api').join(' '),
    );
    expect(api.length).toBeGreaterThan(0);
    for (const { where, container } of api)
      expect(container.environment, where).toContainEqual({
        name: 'CONSOLE_PUBLIC_URL',
        value: 'https://tickets.onsale.example',
      });
    // Every console setting is one the API reads, so a stack may set any of them.
    expect(
      environmentProblems('control-plane-api', [
        ...api[0]!.container.environment.map((v) => v.name),
        ...api[0]!.container.secrets.map((v) => v.name),
        'CONSOLE_OIDC_ISSUER_URL',
        'CONSOLE_OIDC_CLIENT_ID',
        'CONSOLE_OIDC_CLIENT_SECRET',
        'CONSOLE_SESSION_TTL_SECONDS',
        'CONSOLE_LIVE_INTERVAL_MS',
      ]),
    ).toEqual([]);
  });

  it('gives the cell tasks the epoch, and the API the /readyz health check', () => {
    // Topic provisioning and the dead-letter replay only talk to the broker: they write no ledger, so have no epoch.
    const brokerOnly = /provision-topics|replay-dead-letters/;
    const cell = containers.filter(
      ({ where, container }) => where.startsWith('cell-c1/') && !brokerOnly.test(container.command.join(' ')),
    );
    for (const { where, container } of cell) {
      expect(container.environment, where).toContainEqual({ name: 'CELL_EPOCH', value: '1' });
    }
    const [group] = resources(stack(synth, 'cell-c1').json, 'aws_lb_target_group');
    expect(group?.body.health_check).toMatchObject({ path: '/readyz' });
  });

  it('has every load balancer close idle connections before the services behind it would', () => {
    const keptMs = keepAliveBehindLoadBalancer(createServer()).keepAliveTimeout;
    const balancers = [...synth.stacks.values()].flatMap(({ name, json }) =>
      resources(json, 'aws_lb').map(({ body }) => ({ where: `${name}/${String(body.name)}`, idle: body.idle_timeout })),
    );
    expect(balancers.length).toBeGreaterThan(0);
    for (const { where, idle } of balancers) {
      expect(idle, where).toBe(LOAD_BALANCER_IDLE_SECONDS);
      expect(Number(idle) * 1000, where).toBeLessThan(keptMs);
    }
  });
});
