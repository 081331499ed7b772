import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config';

const env = {
  DATABASE_URL_CONTROL_PLANE: 'postgres://cp@127.0.0.1:1/cp',
  REDIS_URL: 'redis://127.0.0.1:1',
  IDENTITY_JWKS_URL: 'http://127.0.0.1:1/jwks.json',
  IDENTITY_ISSUER: 'http://127.0.0.1:1',
  IDENTITY_AUDIENCE: 'onsale',
  CELL_INTERNAL_TOKEN: 'test-cell-internal-token-0123456789',
  SIGNING_KEY_KEK: randomBytes(32).toString('base64'),
};

describe("the console's settings in the control plane's process schema", () => {
  it('are parsed with the rest of the configuration, with their defaults', () => {
    const config = loadConfig({
      ...env,
      CONSOLE_PUBLIC_URL: 'https://tickets.example',
      CONSOLE_LIVE_INTERVAL_MS: '750',
    });
    expect(config).toMatchObject({
      CONSOLE_PUBLIC_URL: 'https://tickets.example',
      CONSOLE_LIVE_INTERVAL_MS: 750,
      CONSOLE_OIDC_CLIENT_ID: 'onsale-console',
      CONSOLE_SESSION_TTL_SECONDS: 8 * 3600,
    });
  });

  it('refuses a bad console variable by name', () => {
    expect(() => loadConfig({ ...env, CONSOLE_LIVE_INTERVAL_MS: '50' })).toThrow(/CONSOLE_LIVE_INTERVAL_MS/);
    expect(() => loadConfig({ ...env, CONSOLE_PUBLIC_URL: 'tickets.example' })).toThrow(/CONSOLE_PUBLIC_URL/);
  });

  it('stops the API process at start, naming the variable, before it connects to anything', async () => {
    const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
    const run = promisify(execFile)(process.execPath, ['--import', 'tsx', main], {
      env: { PATH: process.env.PATH, ...env, CONSOLE_OIDC_ISSUER_URL: 'not a url' },
      timeout: 60_000,
    });
    const failed = await run.then(
      () => null,
      (err: { code?: number; stderr?: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(JSON.parse(failed?.stderr?.trim().split('\n').at(-1) ?? '{}')).toMatchObject({
      msg: 'fatal: cannot start',
      role: 'control-plane-api',
      reason: expect.stringContaining('CONSOLE_OIDC_ISSUER_URL'),
    });
  }, 60_000);
});
