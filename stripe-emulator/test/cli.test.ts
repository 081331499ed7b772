import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { optionsFromEnv } from '../src/config.js';
import { closedPort, eventually, startReceiver } from './support.js';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));

describe('configuration from the environment', () => {
  it('defaults to port 12111 and reads webhook endpoints as JSON', () => {
    expect(optionsFromEnv({}).port).toBe(12111);
    const options = optionsFromEnv({
      STRIPE_EMULATOR_PORT: '4242',
      STRIPE_WEBHOOK_ENDPOINTS: JSON.stringify([{ url: 'http://127.0.0.1:3000/stripe/webhooks', secret: 'whsec_abc' }]),
      STRIPE_EMULATOR_WEBHOOK_RETRY_BASE_MS: '200',
    });
    expect(options).toMatchObject({
      port: 4242,
      webhookEndpoints: [{ url: 'http://127.0.0.1:3000/stripe/webhooks', secret: 'whsec_abc' }],
      webhookRetry: { baseDelayMs: 200 },
    });
  });

  it('names the invalid variables', () => {
    expect(() => optionsFromEnv({ STRIPE_WEBHOOK_ENDPOINTS: '{not json' })).toThrow(/STRIPE_WEBHOOK_ENDPOINTS/);
    expect(() => optionsFromEnv({ STRIPE_EMULATOR_PORT: 'abc' })).toThrow(/STRIPE_EMULATOR_PORT/);
  });
});

describe('CLI (src/main.ts)', () => {
  it('serves on STRIPE_EMULATOR_PORT, delivers to STRIPE_WEBHOOK_ENDPOINTS and exits cleanly on SIGTERM', async () => {
    const port = await closedPort();
    const receiver = await startReceiver();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: packageRoot,
      env: {
        ...process.env,
        STRIPE_EMULATOR_PORT: String(port),
        STRIPE_WEBHOOK_ENDPOINTS: JSON.stringify([{ url: receiver.url, secret: 'whsec_cli' }]),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

    try {
      await eventually(async () => {
        expect((await fetch(`http://127.0.0.1:${port}/__emulator/health`)).status).toBe(200);
      }, 15_000);
      const response = await fetch(`http://127.0.0.1:${port}/v1/payment_intents`, {
        method: 'POST',
        headers: { authorization: 'Bearer sk_test_cli', 'content-type': 'application/x-www-form-urlencoded' },
        body: 'amount=5000&currency=usd&metadata[orderId]=ord_cli',
      });
      expect(response.status).toBe(200);
      const created = (await response.json()) as { client_secret: string };
      await receiver.waitFor(1);
      // Logs name requests and webhook attempts, never secrets or bodies.
      expect(output).toContain('"message":"request"');
      expect(output).not.toContain(created.client_secret);
      expect(output).not.toContain('ord_cli');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(output).toContain('stripe emulator stopping');
  }, 30_000);
});
