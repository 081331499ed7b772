import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/local-platform/launch';
import { type RunningProcess, startProcess } from '../../scripts/local-platform/process';
import { createTestDatabase, type TestDatabase } from '../../test/support/db';
import { kafkaBrokers } from '../../test/support/kafka';
import { serviceEnv } from '../../test/support/services';
import { CONTROL_PLANE_ROLES } from '../src/runtime/roles';

/**
 * Each long-running control-plane process, started from its entry as the stacks start it: configuration parsed
 * once, its process name on its logs and metrics, its health where it has one, and SIGTERM draining it to exit 0.
 */
let db: TestDatabase;
let env: Record<string, string>;
const running: RunningProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase('cp_start', 'control-plane');
  const redis = new URL(serviceEnv().REDIS_URL!);
  redis.pathname = `/${1 + Math.floor(Math.random() * 15)}`;
  env = {
    LOG_LEVEL: 'info',
    DATABASE_URL_CONTROL_PLANE: db.url,
    REDIS_URL: redis.toString(),
    REDIS_KEY_PREFIX: `cps:${randomBytes(4).toString('hex')}:`,
    // Never fetched: no request here carries a buyer's or promoter's token.
    IDENTITY_JWKS_URL: 'http://127.0.0.1:9/.well-known/jwks.json',
    IDENTITY_ISSUER: 'onsale:test',
    IDENTITY_AUDIENCE: 'onsale:platform',
    CELL_INTERNAL_TOKEN: 'test-cell-internal-token-0123456789',
    SIGNING_KEY_KEK: randomBytes(32).toString('base64'),
    KAFKA_BROKERS: kafkaBrokers().join(','),
  };
});

afterAll(async () => {
  for (const p of running) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  await db?.drop();
});

async function start(entry: string, extra: Record<string, string>, readyUrl?: string) {
  const p = await startProcess(entry, { ...env, ...extra }, { capture: true, readyUrl, timeoutMs: 45_000 });
  running.push(p);
  return p;
}

/** The process's JSON log lines (a tsx warning or a stack trace on stderr is not one). */
const logLines = (p: RunningProcess) =>
  p.output
    .join('')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function until(what: string, check: () => boolean, withinMs = 45_000) {
  const deadline = Date.now() + withinMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stopsCleanly(p: RunningProcess) {
  p.child.kill('SIGTERM');
  expect(await p.exited).toBe(0);
  expect(logLines(p).map((l) => l.msg)).toContain('shutting down');
}

describe('the control plane processes start through one runtime', () => {
  it('the worker: ready on its health port once every loop runs, its metrics and logs named after it, SIGTERM exits 0', async () => {
    const port = await freePort();
    const worker = await start(
      CONTROL_PLANE_ROLES.worker.entry,
      { HEALTH_PORT: String(port) },
      `http://127.0.0.1:${port}/readyz`,
    );
    const ready = (await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as { parts: object };
    expect(Object.keys(ready.parts).sort()).toEqual(
      ['start', 'scheduler', 'releaser', 'controller', 'key-rotation', 'revocation-delivery', 'presale'].sort(),
    );
    expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toMatch(
      /^nodejs_eventloop_lag_seconds\{role="control-plane-worker",cell="control-plane"\}/m,
    );
    const signingKey = logLines(worker).find((l) => l.msg === 'admission signing key usable');
    expect(signingKey).toMatchObject({ service: 'control-plane', role: 'control-plane-worker' });
    await stopsCleanly(worker);
  });

  it('the API: /healthz on its own port, the signing key reported at start, SIGTERM exits 0', async () => {
    const port = await freePort();
    const api = await start(CONTROL_PLANE_ROLES.api.entry, { PORT: String(port) }, `http://127.0.0.1:${port}/healthz`);
    const lines = logLines(api);
    expect(lines.find((l) => l.msg === 'admission signing key usable')).toMatchObject({
      role: 'control-plane-api',
    });
    expect(lines.find((l) => l.msg === 'control-plane API listening')).toMatchObject({ port });
    await stopsCleanly(api);
  });

  it('the fact relay: its topic and producer up, then its first line; SIGTERM exits 0', async () => {
    const relay = await start(CONTROL_PLANE_ROLES.factRelay.entry, {});
    await until('the fact relay to start', () => logLines(relay).some((l) => l.msg === 'fact relay started'));
    expect(logLines(relay).find((l) => l.msg === 'fact relay started')).toMatchObject({
      role: 'control-plane-fact-relay',
    });
    await stopsCleanly(relay);
  });

  it('a bad variable stops a process before it starts, naming the variable and the process', async () => {
    const worker = await start(CONTROL_PLANE_ROLES.worker.entry, { SIGNING_KEY_KEK: '' });
    expect(await worker.exited).toBe(1);
    const fatal = logLines(worker).find((l) => l.msg === 'fatal: cannot start');
    expect(fatal).toMatchObject({ role: 'control-plane-worker' });
    expect(String(fatal?.reason)).toMatch(/SIGNING_KEY_KEK/);
  });
});
