import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { resolve } from 'node:path';
import { toZonedInput } from '@onsale/control-plane/console/zoned-time';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, repoRoot } from '../../scripts/local-platform/launch';
import { launchChromium } from '../support/browser';
import { seriousAccessibilityViolations } from '../support/page-audit';
import { startTestPlatform, type TestPlatform } from '../support/platform';
import { shopper } from '../support/shopper';

/**
 * The promoter console in a real browser, through the edge router: sign in at the development
 * issuer, create an event, upload a seat map (an error shown by row and field, then a good one),
 * schedule the onsale, watch a buyer's purchase arrive in the live view, and the refusals: another
 * tenant, a viewer, a forged form, a signed-out cookie.
 */
let t: TestPlatform;
let browser: Browser;
let router: string;
let identity: string;
let forgery: Server;
let forgeryUrl: string;
const shots = resolve(repoRoot, '.data/artifacts/console');
const TZ = 'Europe/Paris';
const state: { eventId?: string; orderId?: string } = {};

async function register(username: string, tenantId: string, role: 'owner' | 'manager' | 'viewer') {
  const res = await fetch(`${identity}/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password: `pw-${username}`, sub: `user-${username}`, tenantId, role }),
  });
  expect(res.status).toBe(201);
}

async function signIn(username: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${router}/console`);
  await page.getByTestId('sign-in').click();
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(`pw-${username}`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${router}/console`);
  return { context, page };
}

let alice: { context: BrowserContext; page: Page };

beforeAll(async () => {
  execFileSync('pnpm', ['--filter', '@onsale/control-plane', 'build:console'], { cwd: repoRoot, stdio: 'ignore' });
  mkdirSync(shots, { recursive: true });
  const ports = { router: await freePort(), identity: await freePort() };
  router = `http://127.0.0.1:${ports.router}`;
  identity = `http://127.0.0.1:${ports.identity}`;
  t = await startTestPlatform({
    seatsPerEvent: 20,
    maxReleaseRate: 50,
    // One cell: the console's pages read the control plane; its events sell on one cell.
    cellCount: 1,
    ports,
    env: { CONSOLE_OIDC_ISSUER_URL: identity, CONSOLE_PUBLIC_URL: router, CONSOLE_LIVE_INTERVAL_MS: '500' },
  });
  const otherTenant = await fetch(`${t.platform.urls.controlPlane}/operator/tenants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.demo.operator}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Rival Promotions' }),
  }).then((r) => r.json() as Promise<{ id: string }>);
  await register('alice', t.demo.tenantId, 'owner');
  await register('victor', t.demo.tenantId, 'viewer');
  await register('mallory', otherTenant.id, 'owner');
  browser = await launchChromium();
  // A page on another origin of the same site (another port), as a forged form would come from.
  forgery = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<form id="f" method="post" action="${router}/console/events/${state.eventId}">
      <input name="_csrf" value="forged"><input name="name" value="Hijacked"><input name="venue" value="x">
      <input name="timeZone" value="UTC"><input name="startsAt" value="2099-01-01T20:00"></form>
      <script>document.getElementById('f').submit()</script>`);
  });
  const fp = await freePort();
  await new Promise<void>((r) => forgery.listen(fp, '127.0.0.1', r));
  forgeryUrl = `http://127.0.0.1:${fp}/`;
});

afterAll(async () => {
  await browser?.close();
  forgery?.close();
  await t?.stop();
});

describe('the promoter console in a browser, through the edge router', () => {
  it('signs in through the identity issuer into an HttpOnly, SameSite session and lists the tenant’s events', async () => {
    alice = await signIn('alice');
    const { page, context } = alice;
    await expect(page.getByTestId('who').textContent()).resolves.toContain('user-alice · owner');
    const rows = page.getByTestId('events').locator('tbody tr');
    await expect(rows.count()).resolves.toBe(t.demo.events.length);
    const session = (await context.cookies(`${router}/console`)).find((c) => c.name === 'onsale_console');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/console' });
    await page.screenshot({ path: resolve(shots, 'events.png'), fullPage: true });
  });

  it('creates an event with the venue’s time zone', async () => {
    const { page } = alice;
    await page.getByRole('link', { name: 'Create an event' }).click();
    await page.getByLabel('Name').fill('Console Night');
    await page.getByLabel('Venue', { exact: true }).fill('Paris Arena');
    await page.getByLabel('Venue time zone').fill(TZ);
    await page.getByLabel('Event starts (venue time)').fill(toZonedInput(new Date(Date.now() + 20 * 86_400_000), TZ));
    await page.getByRole('button', { name: 'Create event' }).click();
    await page.waitForURL(/\/console\/events\/[0-9a-f-]{36}$/);
    state.eventId = page.url().split('/').at(-1)!;
    await expect(page.locator('h1').textContent()).resolves.toBe('Console Night');
  });

  it('shows a bad seat map’s problems inline by row and field and keeps nothing; a good one is stored', async () => {
    const { page } = alice;
    const header = 'section,row,seat,tier,price,currency';
    const good = Array.from({ length: 12 }, (_, i) => `A,${Math.floor(i / 6) + 1},${(i % 6) + 1},std,4500,eur`);
    const bad = [...good.slice(0, 2), 'A,1,3,,4500,eur', ...good.slice(3)];
    await page.getByLabel(/Upload a seat map/).setInputFiles({
      name: 'map.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from([header, ...bad].join('\n')),
    });
    await page.getByRole('button', { name: 'Upload seat map' }).click();
    const issues = page.getByTestId('seat-map-issues');
    await expect(issues.locator('tbody tr').first().locator('td').allTextContents()).resolves.toEqual(
      expect.arrayContaining(['3', 'tier']),
    );
    await expect(page.getByText('0 seats in 0 sections').count()).resolves.toBe(1);
    await page.screenshot({ path: resolve(shots, 'seat-map-error.png'), fullPage: true });

    await page.getByLabel(/Upload a seat map/).setInputFiles({
      name: 'map.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from([header, ...good].join('\n')),
    });
    await page.getByRole('button', { name: 'Upload seat map' }).click();
    await page.getByText('Seat map stored.').waitFor();
    await expect(page.getByText('12 seats in 1 section').count()).resolves.toBe(1);
    await expect(page.getByTestId('tiers').textContent()).resolves.toContain('€45.00');
  });

  it("uploads a stadium's seat map from the console through the edge: 20,000 seats, 450 KB of CSV, over the edge's limit for other bodies", async () => {
    const { page } = alice;
    const created = await fetch(`${router}/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.demo.promoter}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'Stadium Night',
        venue: 'Stadium',
        startsAt: new Date(Date.now() + 40 * 86_400_000),
      }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const rows = Array.from(
      { length: 20_000 },
      (_, i) => `S${Math.floor(i / 1000) + 1},R${Math.floor(i / 50) % 20},${(i % 50) + 1},std,6500,eur`,
    );
    const csv = Buffer.from(['section,row,seat,tier,price,currency', ...rows].join('\n'));
    expect(csv.length).toBeGreaterThan(256 * 1024);
    await page.goto(`${router}/console/events/${id}`);
    await page
      .getByLabel(/Upload a seat map/)
      .setInputFiles({ name: 'stadium.csv', mimeType: 'text/csv', buffer: csv });
    await page.getByRole('button', { name: 'Upload seat map' }).click();
    await page.getByText('Seat map stored.').waitFor();
    await expect(page.getByText('20,000 seats in 20 sections').count()).resolves.toBe(1);
    // The story goes on with Console Night's page.
    await page.goto(`${router}/console/events/${state.eventId}`);
  });

  it('schedules the onsale in venue time; the event is loaded into its cell and goes on sale', async () => {
    const { page } = alice;
    await page.getByLabel('Onsale opens').fill(toZonedInput(new Date(Date.now() + 60_000), TZ));
    await page.getByLabel('Seats per buyer').fill('0');
    await page.getByLabel(/Release-rate ceiling/).fill('20');
    await page.getByRole('button', { name: 'Schedule onsale' }).click();
    await expect(page.locator('[data-field="perBuyerLimit"]').textContent()).resolves.toContain('1 to 8');

    await page.getByLabel('Seats per buyer').fill('4');
    // Minutes are what the form takes: the next minute boundary in Paris, at least a few seconds away.
    const at = new Date(Math.ceil((Date.now() + 5_000) / 60_000) * 60_000);
    await page.getByLabel('Onsale opens').fill(toZonedInput(at, TZ));
    await page.getByRole('button', { name: 'Schedule onsale' }).click();
    await page.getByText('Onsale scheduled.').waitFor();
    await expect(page.getByTestId('onsale-summary').textContent()).resolves.toMatch(/Seats per buyer\s*4/);
    await page.screenshot({ path: resolve(shots, 'event.png'), fullPage: true });
    for (const deadline = Date.now() + 90_000; ; ) {
      await page.reload();
      if ((await page.getByTestId('event-status').textContent()) === 'on sale') break;
      if (Date.now() > deadline) throw new Error('the onsale did not start');
      await page.waitForTimeout(1000);
    }
  });

  it('the live view moves without a reload when a buyer purchases through the router', async () => {
    const { page } = alice;
    // The seat map's first read meets a control plane that is not answering: the map is read again, not left blank.
    await page.route(
      `${router}/console/events/${state.eventId}/seats.json`,
      (route) => route.fulfill({ status: 503, contentType: 'application/json', body: '{}' }),
      { times: 1 },
    );
    await page.goto(`${router}/console/events/${state.eventId}/live`);
    const live = page.getByTestId('live');
    const map = live.locator('[data-seatmap]');
    // The map comes from seats.json, the tiles from the stream's first snapshot: wait for both before buying.
    await page.waitForFunction(() => document.querySelector('[data-seatmap]')?.getAttribute('data-available') === '12');
    await page.waitForFunction(() => document.querySelector('[data-stat="paidOrders"]')?.textContent === '0');

    const buyer = await shopper(t.platform, state.eventId!, 'console-fan');
    await buyer.admit();
    const seats = (await (await fetch(`${router}/events/${state.eventId}/availability`)).json()) as {
      availableSeatIds: string[];
    };
    const held = await buyer.hold(seats.availableSeatIds.slice(0, 2), randomUUID());
    expect(held.status).toBe(202);
    const { orderId } = (await held.json()) as { orderId: string };
    state.orderId = orderId;
    await buyer.pay(orderId, 'pm_card_visa');
    await buyer.until(orderId, ['ticketed']);

    await page.waitForFunction(() => document.querySelector('[data-stat="paidOrders"]')?.textContent === '1', null, {
      timeout: 60_000,
    });
    await page.waitForFunction(
      () => document.querySelector('[data-seatmap]')?.getAttribute('data-sold') === '2',
      null,
      {
        timeout: 60_000,
      },
    );
    await expect(map.getAttribute('data-available')).resolves.toBe('10');
    await expect(page.locator('[data-stat="revenue"]').textContent()).resolves.toBe('€90.00');
    await expect(live.getByTestId('sections').textContent()).resolves.toMatch(/A\s*std\s*2\s*0\s*10/);
    await page.screenshot({ path: resolve(shots, 'live.png'), fullPage: true });
  });

  it('finds the paid order by the id its buyer quotes and refunds it with a reason: its tickets void, then it reads refunded', async () => {
    const { context, page } = alice;
    await page.goto(`${router}/console/events/${state.eventId}`);
    await page.getByRole('link', { name: 'Orders and refunds' }).click();
    // The newest payments, where the live view already counted this one; its tickets are issued in the cell before
    // the projection hears of them, so the page may say "paid" until it does.
    const listed = page.getByTestId('orders').locator(`[data-order="${state.orderId}"]`);
    await expect
      .poll(
        async () => {
          const status = await listed.getByTestId('order-status').textContent();
          if (status !== 'tickets issued') await page.reload();
          return status;
        },
        { timeout: 30_000, interval: 500 },
      )
      .toBe('tickets issued');
    await page.getByLabel('Order id').fill(` ${state.orderId!.toUpperCase()} `);
    await page.getByRole('button', { name: 'Find the order' }).click();
    await expect(page.getByTestId('orders').locator('tbody tr').count()).resolves.toBe(1);

    // Without a reason the server refuses, naming the field, and refunds nothing (the browser asks first: required).
    const csrf = await page.locator('meta[name="csrf-token"]').getAttribute('content');
    const bare = await context.request.post(
      `${router}/console/events/${state.eventId}/orders/${state.orderId}/refund`,
      {
        form: { _csrf: csrf!, reason: '  ' },
        maxRedirects: 0,
      },
    );
    expect(bare.status()).toBe(400);
    expect(await bare.text()).toContain('data-field="reason"');
    const db = t.cellDb(t.demo.events[0]!.cellId);
    const voided = () =>
      db.query<{ n: number }>('SELECT count(*)::int AS n FROM tickets WHERE order_id = $1 AND voided_at IS NOT NULL', [
        state.orderId,
      ]);
    await expect(voided()).resolves.toEqual([{ n: 0 }]);

    await page.getByLabel(/Why/).fill('the buyer cannot come');
    await page.screenshot({ path: resolve(shots, 'refund.png'), fullPage: true });
    await page.getByRole('button', { name: 'Refund this order' }).click();
    await page.getByText('Refund requested:').waitFor();
    await expect(page.getByTestId('refund').count()).resolves.toBe(0);
    await expect(voided()).resolves.toEqual([{ n: 2 }]);
    for (const deadline = Date.now() + 60_000; ; ) {
      await page.reload();
      if ((await page.getByTestId('order-status').textContent()) === 'refunded') break;
      if (Date.now() > deadline) throw new Error('the order did not read refunded');
      await page.waitForTimeout(500);
    }
    await expect(page.locator('td.num').allTextContents()).resolves.toEqual(['0', '€90.00', '€90.00']);

    // An id no paid order of the event has finds nothing; one that cannot be an id finds nothing either.
    for (const asked of [randomUUID(), 'not-an-order']) {
      await page.goto(`${router}/console/events/${state.eventId}/orders?order=${asked}`);
      await expect(page.getByTestId('no-orders').textContent()).resolves.toBe(
        'No paid order of this event has that id.',
      );
    }
    await expect(seriousAccessibilityViolations(page)).resolves.toEqual([]);
  });

  it('a promoter of another tenant sees none of it, in the page or on the server', async () => {
    const { context, page } = await signIn('mallory');
    await expect(page.getByText('No events yet.').count()).resolves.toBe(1);
    for (const path of ['', '/live', '/live/stream', '/seats.json', '/settlement.csv', '/orders']) {
      const res = await context.request.get(`${router}/console/events/${state.eventId}${path}`);
      expect(res.status(), path).toBe(404);
    }
    await context.close();
  });

  it('a viewer sees the event and changes nothing: no forms, and the server refuses a change', async () => {
    const { context, page } = await signIn('victor');
    await page.goto(`${router}/console/events/${state.eventId}`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Console Night');
    await expect(page.locator('form[data-testid] button').count()).resolves.toBe(0);
    const csrf = await page.locator('meta[name="csrf-token"]').getAttribute('content');
    const res = await context.request.post(`${router}/console/events/${state.eventId}/onsale/pause`, {
      form: { _csrf: csrf! },
      maxRedirects: 0,
    });
    expect(res.status()).toBe(403);
    // The orders page shows a viewer the payments, not the refunds: no such column, and the server refuses one.
    await page.goto(`${router}/console/events/${state.eventId}/orders`);
    await expect(page.getByTestId('orders').locator('tbody tr').count()).resolves.toBe(1);
    await expect(page.getByRole('columnheader', { name: 'Refund', exact: true }).count()).resolves.toBe(0);
    const refund = await context.request.post(
      `${router}/console/events/${state.eventId}/orders/${state.orderId}/refund`,
      { form: { _csrf: csrf!, reason: 'not mine to give' }, maxRedirects: 0 },
    );
    expect(refund.status()).toBe(403);
    await context.close();
  });

  it('refuses a forged change from another page (no CSRF token) and changes nothing', async () => {
    const { context, page } = alice;
    const forged = await context.newPage();
    const answered = forged.waitForResponse((r) => r.url().endsWith(`/console/events/${state.eventId}`));
    await forged.goto(forgeryUrl);
    expect((await answered).status()).toBe(403);
    await forged.close();
    await page.goto(`${router}/console/events/${state.eventId}`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Console Night');
  });

  it('signs out: the session is gone on the server, not only the cookie', async () => {
    const { context, page } = alice;
    const before = (await context.cookies(`${router}/console`)).find((c) => c.name === 'onsale_console')!;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByTestId('sign-in').waitFor();
    const replay = await fetch(`${router}/console/events/${state.eventId}`, {
      headers: { cookie: `onsale_console=${before.value}` },
      redirect: 'manual',
    });
    expect(replay.status).toBe(303);
    expect(replay.headers.get('location')).toBe('/console');
    await context.close();
  });
});
