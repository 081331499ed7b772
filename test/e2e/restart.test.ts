import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { checkTicket, loadState, syncScanner } from '@onsale/cell/tickets/scanner';
import type { OrderView } from '@onsale/contracts';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devToken } from '../../scripts/local-platform/demo';
import { repoRoot } from '../../scripts/local-platform/process';
import { rotateSecrets } from '../../scripts/local-platform/rotate';
import { ownServers } from '../support/own-servers';
import { startTestPlatform, type TestPlatform } from '../support/platform';
import { shopper } from '../support/shopper';

/**
 * A restart, as a new user makes one (`platform up`, a purchase, `platform down`, `platform up`), and the
 * same after each rotation runbooks/rotate-keys.md describes and after Redis restarts or loses its data:
 * every time, the order bought first is readable with the buyer's own sign-in, its tickets scan ADMIT at
 * a door that synced afresh, and a new buyer is admitted and buys, through the router. The Redis it restarts is
 * this file's own, so the other files run beside it.
 */
const run = promisify(execFile);
let t: TestPlatform;
let dir: string;
const secretsFile = () => join(dir, 'secrets.json');
let first: { eventId: string; cellId: string; orderId: string; bearer: string; tickets: OrderView['tickets'] };
const servers = ownServers('restart', { redis: 18679 });

/** A buyer through the router: queue, admission, two seats, paid, ticketed. */
async function buyTickets(name: string) {
  const event = t.demo.events[0]!;
  const b = await shopper(t.platform, event.eventId, name);
  await b.admit();
  const seats = (await t.seatsOf(event.eventId)).slice(0, 2);
  const held = await b.hold(seats, randomUUID());
  expect(held.status, await held.clone().text()).toBe(202);
  const { orderId } = (await held.json()) as { orderId: string };
  await b.pay(orderId, 'pm_card_visa');
  const view = await b.until(orderId, ['ticketed', 'failed']);
  expect(view.status).toBe('ticketed');
  expect(view.tickets).toHaveLength(2);
  return { eventId: event.eventId, cellId: event.cellId, orderId, bearer: b.bearer, tickets: view.tickets };
}

/** What must hold after every restart. */
async function everythingKept(label: string) {
  const router = t.platform.urls.router;
  // The first buyer's order, read with the token they signed in with before the restart.
  const res = await fetch(`${router}/events/${first.eventId}/orders/${first.orderId}`, {
    headers: { authorization: `Bearer ${first.bearer}` },
  });
  expect(res.status, `${label}: the first order`).toBe(200);
  const order = (await res.json()) as OrderView;
  expect(order.status).toBe('ticketed');
  expect(order.tickets.map((x) => x.token)).toEqual(first.tickets.map((x) => x.token));

  // A door that syncs now admits the tickets sold before.
  const stateDir = mkdtempSync(join(dir, 'scanner-'));
  await syncScanner({ baseUrl: router, eventId: first.eventId, stateDir });
  const state = await loadState(stateDir);
  for (const ticket of first.tickets)
    expect(await checkTicket(ticket.token, state), `${label}: ticket ${ticket.ticketId}`).toMatchObject({
      admit: true,
    });

  // A new buyer is admitted and buys; their tickets scan too.
  const fresh = await buyTickets(`after-${label}-${randomUUID().slice(0, 6)}`);
  const again = mkdtempSync(join(dir, 'scanner-'));
  await syncScanner({ baseUrl: router, eventId: fresh.eventId, stateDir: again });
  const synced = await loadState(again);
  for (const ticket of fresh.tickets) expect(await checkTicket(ticket.token, synced)).toMatchObject({ admit: true });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'onsale-restart-'));
  await servers.services('start', 'redis');
  t = await startTestPlatform({
    servers: { redisUrl: servers.redisUrl },
    seatsPerEvent: 60,
    maxReleaseRate: 50,
    secretsFile: secretsFile(),
    // An admission key announced 3 s before it signs, so the rotation's test need not wait ten minutes.
    env: { KEY_ANNOUNCE_SECONDS: '3' },
  });
  first = await buyTickets('first-buyer');
}, 300_000);

afterAll(async () => {
  await t?.stop();
  await servers.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 120_000);

describe('a restart loses nothing', () => {
  it('keeps the secrets with the data, readable by their owner only', () => {
    expect(statSync(secretsFile()).mode & 0o777).toBe(0o600);
  });

  it('platform down, platform up: the old order, its tickets at the door, a new buyer, the demo purchase', async () => {
    await t.restart();
    await everythingKept('restart');
    const demo = await run('node', ['--import', 'tsx', 'scripts/local-platform/demo-purchase.ts'], {
      cwd: repoRoot,
      env: {
        ...process.env,
        ROUTER_URL: t.platform.urls.router,
        CONTROL_PLANE_URL: t.platform.urls.controlPlane,
        IDENTITY_URL: t.platform.urls.identity,
        STRIPE_URL: t.platform.urls.stripe,
        EVENT_ID: t.demo.events[1]!.eventId,
      },
      timeout: 120_000,
    });
    expect(demo.stdout).toMatch(/ticketed/);
  });

  for (const rotation of ['kek', 'ticket-key', 'webhook-secret'] as const) {
    it(`after a ${rotation} rotation`, async () => {
      await t.platform.stop();
      const done = await rotateSecrets(secretsFile(), rotation, {
        cellId: first.cellId,
        controlPlaneDatabaseUrl: t.controlPlaneDb.url,
      });
      expect(done).not.toBe('');
      await t.restart();
      await everythingKept(rotation);
    });
  }

  it('after an admission signing key rotation', async () => {
    const operator = await devToken(t.platform.urls.identity, { kind: 'operator', sub: 'rotating-operator' });
    const rotated = await fetch(`${t.platform.urls.controlPlane}/operator/signing-keys/rotate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operator}` },
    });
    expect(rotated.status).toBe(201);
    const { kid, activatesAt } = (await rotated.json()) as { kid: string; activatesAt: string };
    await new Promise((r) => setTimeout(r, Math.max(0, new Date(activatesAt).getTime() - Date.now()) + 500));
    await t.restart();
    await everythingKept('admission-key');
    const jwks = (await (await fetch(`${t.platform.urls.controlPlane}/.well-known/jwks.json`)).json()) as {
      keys: { kid: string }[];
    };
    expect(jwks.keys.map((k) => k.kid)).toContain(kid);
  });

  it('after Redis restarts (its append-only file keeps the rooms) and after it loses them (rebuilt from the record)', async () => {
    // It reconnects by itself across the restart; its connection errors meanwhile are expected.
    const client = new Redis(servers.redisUrl!).on('error', () => {});
    const rooms = async () => (await client.keys(`${t.redisKeyPrefix}wr:*:meta`)).sort();
    const before = await rooms();
    expect(before).toHaveLength(t.demo.events.length);
    await servers.services('restart', 'redis');
    expect(await rooms()).toEqual(before);
    await everythingKept('redis-restart');

    // Lost: every key of this platform's control plane gone, as after a failover to an empty replica.
    const keys = await client.keys(`${t.redisKeyPrefix}*`);
    expect(keys.length).toBeGreaterThan(0);
    await client.del(...keys);
    await client.quit();
    await everythingKept('redis-lost');
  });
});
