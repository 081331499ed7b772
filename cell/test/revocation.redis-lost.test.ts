import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventLoad } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { eventually } from '../../test/support/kafka';
import { eventLoad, loadIntoCell } from '../../test/support/seed';

/**
 * A cell's Redis (where it keeps the revocations the control plane delivers) killed mid-onsale: holds fail closed with
 * 503 and Retry-After, for a revoked token and a valid one alike, so nothing is sold to a revoked token; the
 * revocation endpoint answers 503 so the control plane keeps delivering; when Redis is back (its append-only file,
 * fsynced every second, as the platform runs it) the cell serves again by itself and still refuses the revoked token.
 */

let identity: TestIdentity;
let redis: ThrowawayRedis;
let cell: TestCell;
let event: EventLoad;

beforeAll(async () => {
  identity = await startIdentity();
  redis = await throwawayRedis();
  await redis.start();
  cell = await startTestCell(identity, { cellId: 'cell-redis', env: { REDIS_URL: redis.url } });
  event = await loadIntoCell(cell, eventLoad(10));
});
afterAll(async () => {
  await cell?.close();
  await redis?.remove();
  await identity?.close();
});

const ordersOf = async (userId: string) =>
  (await cell.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE user_id = $1', [userId]))[0]!.n;

async function answerOf(res: Response) {
  const body = (await res.json()) as { error?: { code: string } };
  return { status: res.status, retryAfter: res.headers.get('retry-after'), code: body.error?.code };
}

const revoke = (jti: string) =>
  fetch(`${cell.url}/internal/revocations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${cell.internalToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      jti,
      revokedAt: Math.floor(Date.now() / 1000),
      expiresAt: Math.floor(Date.now() / 1000) + 600,
    }),
  });

describe("a cell's Redis lost", () => {
  it('fails closed with 503 and Retry-After, sells nothing to a revoked token, and recovers by itself', async () => {
    const honest = await admittedBuyer(identity, cell, event.eventId, 'buyer-honest');
    const revoked = await admittedBuyer(identity, cell, event.eventId, 'buyer-revoked');
    const jti = JSON.parse(Buffer.from(revoked.admission.split('.')[1]!, 'base64url').toString()).jti as string;
    expect((await revoke(jti)).status).toBe(200);
    expect((await answerOf(await revoked.hold([event.seats[0]!.id]))).code).toBe('admission_invalid');
    expect((await honest.hold([event.seats[1]!.id])).status).toBe(202);
    // The append-only file is fsynced every second: the revocation is on disk after that.
    await new Promise((r) => setTimeout(r, 1_500));

    redis.kill();
    const unavailable = { status: 503, retryAfter: '5', code: 'cell_unavailable' };
    expect(await answerOf(await revoked.hold([event.seats[2]!.id]))).toEqual(unavailable);
    expect(await answerOf(await honest.hold([event.seats[3]!.id]))).toEqual(unavailable);
    expect(await answerOf(await revoke(randomUUID()))).toEqual(unavailable);
    expect(await ordersOf('buyer-revoked')).toBe(0);
    expect(await ordersOf('buyer-honest')).toBe(1);
    // What does not need Redis goes on: a buyer reads their order.
    const [order] = await cell.db.query<{ id: string }>("SELECT id FROM orders WHERE user_id = 'buyer-honest'");
    expect((await honest.order(order!.id)).status).toBe(200);

    await redis.start();
    // Nothing restarted in the cell: its client reconnects, and holds go through again.
    await eventually(
      async () => (await honest.hold([event.seats[4]!.id], 'after-recovery')).status === 202,
      'the cell to serve holds again once its Redis is back',
      15_000,
      200,
    );
    const again = await answerOf(await revoked.hold([event.seats[5]!.id]));
    expect(again).toMatchObject({ status: 403, code: 'admission_invalid' });
    expect(await ordersOf('buyer-revoked')).toBe(0);
  });
});

interface ThrowawayRedis {
  url: string;
  start(): Promise<void>;
  kill(): void;
  remove(): Promise<void>;
}

/** A redis-server of this test's own, on a free port, persisted as the platform persists a cell's Redis. */
async function throwawayRedis(): Promise<ThrowawayRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'cell-redis-'));
  const port = await freePort();
  let server: ChildProcess | undefined;
  const kill = () => {
    if (server?.pid && server.exitCode === null) process.kill(server.pid, 'SIGKILL');
    server = undefined;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      const args = ['--bind', '127.0.0.1', '--port', String(port), '--dir', dir, '--save', '', '--appendonly', 'yes'];
      server = spawn('redis-server', [...args, '--appendfsync', 'everysec'], { stdio: ['ignore', 'pipe', 'inherit'] });
      const started = server;
      await new Promise<void>((resolve, reject) => {
        started.stdout!.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('Ready to accept connections')) resolve();
        });
        started.once('exit', (code) => reject(new Error(`redis-server exited with ${code}`)));
      });
    },
    kill,
    async remove() {
      kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const address = probe.address();
  await new Promise<void>((r) => probe.close(() => r()));
  return typeof address === 'object' && address ? address.port : 0;
}
