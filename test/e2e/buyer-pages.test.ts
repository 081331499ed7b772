import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { percentile } from '../../load-tests/lib/stats';
import { demoSeatMap } from '../../scripts/local-platform/demo';
import { repoRoot } from '../../scripts/local-platform/launch';
import { launchChromium } from '../support/browser';
import { positiveIntegerFromEnv } from '../support/env';
import { mailbox } from '../support/mailbox';
import { type FirstLoad, measureFirstLoad, seriousAccessibilityViolations } from '../support/page-audit';
import { startTestPlatform, type TestPlatform } from '../support/platform';

/**
 * The buyer's pages in a real browser, through the edge router: the event page, sign-in at the identity provider,
 * the waiting room (a refresh and a network blip keep the place), admission, two adjacent seats picked on the map,
 * a second buyer racing for one of them and told plainly, payment from the browser to Stripe (the emulator) with
 * the publishable key and client secret, the tickets, and the order under "my orders". Every page is audited with
 * axe-core, and each page's first load is measured (written to .data/artifacts/buyer/first-load.md; once in the suite,
 * the median of three in `pnpm bench:buyer-pages`).
 */
let t: TestPlatform;
let browser: Browser;
let router: string;
let eventId: string;
let onsale: { roomOpensAt: string; onsaleAt: string; perBuyerLimit: number; maxReleaseRate: number };
const shots = resolve(repoRoot, '.data/artifacts/buyer');
const buyers: Record<'ann' | 'ben', { context: BrowserContext; page: Page }> = {} as never;
const state: { orderId?: string; benOrderId?: string; position?: string } = {};

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${t.platform.urls.controlPlane}${path}`, {
    method,
    headers: { authorization: `Bearer ${t.demo.promoter}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<Record<string, unknown>>;
}

/** Each run's buyers have addresses of their own, so the mail server's earlier messages never count. */
const run = Date.now().toString(36);
const emailOf = (name: string) => `${name}.${run}@buyers.example`;

async function registerBuyer(name: string) {
  const res = await fetch(`${t.platform.urls.identity}/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: name, password: `pw-${name}`, sub: `buyer-${name}`, email: emailOf(name) }),
  });
  expect(res.status).toBe(201);
}

/** No serious or critical finding; the message names each one, so a failure says what to fix. */
async function expectAccessible(page: Page) {
  const found = await seriousAccessibilityViolations(page);
  expect(found, JSON.stringify(found, null, 2)).toEqual([]);
}

const seat = (page: Page, label: string) => page.locator(`[data-testid="seat-map"] [data-label="${label}"]`);
const queueState = (page: Page) => page.evaluate(() => document.body.dataset.queue ?? '');

beforeAll(async () => {
  execFileSync('pnpm', ['--filter', '@onsale/control-plane', 'build:shop'], { cwd: repoRoot, stdio: 'ignore' });
  mkdirSync(shots, { recursive: true });
  t = await startTestPlatform({ seatsPerEvent: 20, maxReleaseRate: 50 });
  router = t.platform.urls.router;
  // An event of its own whose room opens now and whose sale starts later, so buyers wait in the room first.
  const created = await call('POST', '/events', {
    name: 'Shop Night',
    venue: 'Lyon Hall',
    startsAt: new Date(Date.now() + 20 * 86_400_000).toISOString(),
    cellId: t.demo.events[0]!.cellId,
  });
  eventId = created.id as string;
  await call('PUT', `/events/${eventId}/seat-map`, demoSeatMap(20));
  // A fee added on top for the floor: the buyer sees it, and pays it.
  await call('PUT', `/events/${eventId}/tiers/floor/fees`, { fee: 450, fees: 'added' });
  // The sale is brought forward once both buyers wait in the room ('both buyers are let through ...').
  onsale = {
    roomOpensAt: new Date(Date.now() + 1_000).toISOString(),
    onsaleAt: new Date(Date.now() + 30 * 60_000).toISOString(),
    perBuyerLimit: 4,
    maxReleaseRate: 50,
  };
  await call('PUT', `/events/${eventId}/onsale`, onsale);
  await registerBuyer('ann');
  await registerBuyer('ben');
  browser = await launchChromium();
  for (const name of ['ann', 'ben'] as const) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    buyers[name] = { context, page: await context.newPage() };
  }
});

afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

describe("the buyer's pages in a browser, through the edge router", () => {
  it('the event page shows the venue, the date and each tier with its fee, and passes the audit', async () => {
    const { page } = buyers.ann;
    await page.goto(`${router}/shop/events/${eventId}`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Shop Night');
    await expect(page.getByTestId('sale-status').textContent()).resolves.toBe('Not on sale yet');
    const tiers = await page.getByTestId('tiers').locator('tbody tr').allTextContents();
    expect(tiers.map((row) => row.replace(/\s+/g, ' ').trim())).toEqual([
      'Floor €95.00 + €4.50 €99.50',
      'Stand €55.00 €0.00 included €55.00',
    ]);
    await expectAccessible(page);
    await page.screenshot({ path: resolve(shots, 'event.png'), fullPage: true });
  });

  it('joining signs the buyer in at the identity provider and shows the place and an estimate', async () => {
    for (const name of ['ann', 'ben'] as const) {
      const { page } = buyers[name];
      await page.goto(`${router}/shop/events/${eventId}`);
      await page.getByTestId('join').click();
      await page.getByLabel('Username').fill(name);
      await page.getByLabel('Password').fill(`pw-${name}`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${router}/shop/events/${eventId}/queue`);
      await page.waitForFunction(() => document.body.dataset.queue === 'waiting');
      await expect(page.getByTestId('who').textContent()).resolves.toBe(`Signed in as buyer-${name}`);
    }
    const { page } = buyers.ann;
    state.position = (await page.getByTestId('position').textContent()) ?? '';
    await expect(page.getByTestId('choose-seats').isVisible()).resolves.toBe(false);
    expect(state.position).toMatch(/^\d+$/);
    await expect(page.getByTestId('queue-state').textContent()).resolves.toMatch(/in the queue|not open yet/);
    await expect(page.getByTestId('estimate').textContent()).resolves.not.toBe('…');
    await expectAccessible(page);
    await page.screenshot({ path: resolve(shots, 'queue.png'), fullPage: true });
  });

  it('a refresh keeps the place in the waiting room', async () => {
    const { page } = buyers.ann;
    await page.reload();
    await page.waitForFunction(() => document.body.dataset.interactive === 'true');
    expect(await queueState(page), 'the sale started before the refresh was tested').toBe('waiting');
    await expect(page.getByTestId('position').textContent()).resolves.toBe(state.position);
  });

  it('a network blip or a gateway timeout is shown, and the place is still there when the answers return', async () => {
    const { page, context } = buyers.ann;
    await context.setOffline(true);
    await page.getByText('Connection lost. Your place is kept; reconnecting…').waitFor({ timeout: 15_000 });
    await context.setOffline(false);
    await page.waitForFunction(() => !document.querySelector('[data-testid="queue-problem"]')?.textContent, null, {
      timeout: 20_000,
    });
    await expect(page.getByTestId('position').textContent()).resolves.toBe(state.position);
    // Nor is the router giving up on a control plane that stalled (504) a refusal: the page asks again.
    await page.route(
      `${router}/events/${eventId}/queue/me`,
      (route) =>
        route.fulfill({
          status: 504,
          contentType: 'application/json',
          body: JSON.stringify({ error: { code: 'upstream_timeout', message: 'no answer within 5000 ms' } }),
        }),
      { times: 2 },
    );
    await page.getByText('The waiting room is busy. Your place is kept; retrying…').waitFor({ timeout: 15_000 });
    await page.waitForFunction(() => !document.querySelector('[data-testid="queue-problem"]')?.textContent, null, {
      timeout: 20_000,
    });
    await expect(queueState(page)).resolves.not.toBe('refused');
  });

  it('both buyers are let through when the sale starts', async () => {
    // The promoter starts the sale now, as a reschedule may until it starts; the room stays the one they wait in.
    await call('PUT', `/events/${eventId}/onsale`, { ...onsale, onsaleAt: new Date().toISOString() });
    for (const name of ['ann', 'ben'] as const) {
      const { page } = buyers[name];
      await page.waitForFunction(() => document.body.dataset.queue === 'through', null, { timeout: 90_000 });
      await expect(page.getByTestId('queue-state').textContent()).resolves.toContain("You're through");
      await page.getByTestId('choose-seats').click();
      await page.waitForURL(`${router}/shop/events/${eventId}/seats`);
      await page.waitForFunction(() => document.body.dataset.interactive === 'true');
    }
  });

  it('picks two adjacent seats on the map; the racing buyer loses one of them and sees why, on a fresh map', async () => {
    const ann = buyers.ann.page;
    const ben = buyers.ben.page;
    await expect(ann.getByTestId('seat-map').getAttribute('data-free')).resolves.toBe('20');
    await seat(ann, 'S1-R1-3').click();
    await seat(ann, 'S1-R1-4').click();
    await expect(seat(ann, 'S1-R1-4').getAttribute('aria-checked')).resolves.toBe('true');
    await expect(ann.getByTestId('selection').locator('li').count()).resolves.toBe(2);
    await expect(ann.getByTestId('total').textContent()).resolves.toBe('€199.00');
    await expectAccessible(ann);
    await ann.screenshot({ path: resolve(shots, 'seats.png'), fullPage: true });

    await seat(ben, 'S1-R1-4').click();
    await seat(ben, 'S1-R1-5').click();
    await ann.getByTestId('hold').click();
    await ann.waitForURL(new RegExp(`/shop/events/${eventId}/orders/[0-9a-f-]{36}$`));
    state.orderId = ann.url().split('/').at(-1)!;

    await ben.getByTestId('hold').click();
    await ben.waitForFunction(() => document.body.dataset.lost === 'true');
    await expect(ben.getByTestId('seat-problem').textContent()).resolves.toContain(
      'Sorry, another buyer just took section S1, row R1, seat S1-R1-4',
    );
    await expect(seat(ben, 'S1-R1-4').getAttribute('aria-disabled')).resolves.toBe('true');
    await expect(seat(ben, 'S1-R1-3').getAttribute('aria-disabled')).resolves.toBe('true');
    await expect(seat(ben, 'S1-R1-5').getAttribute('aria-checked')).resolves.toBe('true');
    await expect(ben.getByTestId('selection').locator('li').count()).resolves.toBe(1);
    await expectAccessible(ben);
    await ben.screenshot({ path: resolve(shots, 'seat-lost.png'), fullPage: true });
  });

  it('a hold whose answer was lost is asked again with the same key: the buyer lands on the one order it placed', async () => {
    const ben = buyers.ben.page;
    const keys: string[] = [];
    const holds = (r: Request) => r.method() === 'POST' && r.url().endsWith(`/events/${eventId}/holds`);
    ben.on('request', (r) => holds(r) && keys.push(r.headers()['idempotency-key'] ?? ''));
    // The hold is placed, then its answer lost: as when the router gave up on a cell whose database stalled and
    // committed the hold once it answered again.
    await ben.route(
      `${router}/events/${eventId}/holds`,
      async (route) => {
        expect((await route.fetch()).status()).toBe(202);
        await route.fulfill({
          status: 504,
          contentType: 'application/json',
          body: JSON.stringify({ error: { code: 'upstream_timeout', message: 'no answer within 5000 ms' } }),
        });
      },
      { times: 1 },
    );
    await ben.getByTestId('hold').click();
    await ben.waitForURL(new RegExp(`/shop/events/${eventId}/orders/[0-9a-f-]{36}$`));
    state.benOrderId = ben.url().split('/').at(-1)!;
    expect(keys).toHaveLength(2);
    expect(new Set(keys).size).toBe(1);
    const orders = await t
      .cellDb(t.demo.events[0]!.cellId)
      .query<{ id: string }>('SELECT id FROM orders WHERE event_id = $1 AND user_id = $2', [eventId, 'buyer-ben']);
    expect(orders.map((o) => o.id)).toEqual([state.benOrderId]);
  });

  it('pays from the browser with the publishable key and the client secret, then shows the tickets', async () => {
    const { page } = buyers.ann;
    await page.getByTestId('checkout').waitFor({ state: 'visible', timeout: 30_000 });
    await expect(page.getByTestId('pay').textContent()).resolves.toBe('Pay €199.00');
    // The buyer sees when the hold lapses, in the browser's own time zone.
    const [hold] = await t
      .cellDb(t.demo.events[0]!.cellId)
      .query<{ expires_at: Date }>('SELECT expires_at FROM holds WHERE order_id = $1', [state.orderId]);
    const until = await page.evaluate(
      (iso) => new Date(iso).toLocaleTimeString('en-GB', { timeStyle: 'short' }),
      hold!.expires_at.toISOString(),
    );
    await expect(page.getByTestId('order-state').textContent()).resolves.toBe(
      `Your seats are held until ${until}. Pay to confirm them.`,
    );
    await expectAccessible(page);
    await page.screenshot({ path: resolve(shots, 'checkout.png'), fullPage: true });
    const confirmed = page.waitForResponse(
      (r) => r.url().includes('/v1/payment_intents/') && r.url().endsWith('/confirm'),
    );
    await page.getByTestId('pay').click();
    expect((await confirmed).status()).toBe(200);
    await page.getByTestId('tickets').waitFor({ state: 'visible', timeout: 90_000 });
    await expect(page.getByTestId('order-state').textContent()).resolves.toBe('Your tickets are ready.');
    await expect(page.getByTestId('order-problem').textContent()).resolves.toBe('');
    const qr = page.getByTestId('ticket-list').locator('img');
    await expect(qr.count()).resolves.toBe(2);
    await page.waitForFunction(() =>
      [...document.querySelectorAll<HTMLImageElement>('[data-testid="ticket-list"] img')].every(
        (i) => i.naturalWidth > 0,
      ),
    );
    const pdf = await page.evaluate(async () => {
      const href = document.querySelector<HTMLAnchorElement>('[data-testid="tickets-pdf"]')!.href;
      const bytes = new Uint8Array(await (await fetch(href)).arrayBuffer());
      return String.fromCharCode(...bytes.slice(0, 5));
    });
    expect(pdf).toBe('%PDF-');
    await expectAccessible(page);
    await page.screenshot({ path: resolve(shots, 'tickets.png'), fullPage: true });
  });

  it('the order is under "my orders", gathered from every cell by the router', async () => {
    const { page } = buyers.ann;
    await page.getByRole('link', { name: 'My orders' }).click();
    await page.waitForURL(`${router}/shop/orders`);
    const row = page.locator(`[data-order="${state.orderId}"]`);
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain('Tickets ready');
    await expect(row.textContent()).resolves.toContain('Shop Night');
    await expect(page.getByTestId('orders-state').textContent()).resolves.toBe('1 order.');
    await expectAccessible(page);
    await page.screenshot({ path: resolve(shots, 'orders.png'), fullPage: true });
    // The other buyer sees his own order only: each cell answers for the token's own buyer.
    const ben = buyers.ben.page;
    await ben.goto(`${router}/shop/orders`);
    await ben.waitForFunction(() => document.body.dataset.interactive === 'true');
    await ben.locator(`[data-order="${state.benOrderId}"]`).waitFor();
    await expect(ben.getByTestId('orders-state').textContent()).resolves.toBe('1 order.');
    await expect(ben.locator(`[data-order="${state.orderId}"]`).count()).resolves.toBe(0);
  });

  it('"my orders" shows a page at a time: a buyer with more orders than a page asks for the older ones', async () => {
    const { page } = buyers.ann;
    const db = t.cellDb(t.demo.events[0]!.cellId);
    // Holds that expired weeks ago, older than the paid order: the first page of a hundred ends before the oldest.
    const ids = Array.from({ length: 100 }, () => randomUUID());
    await db.query(
      `INSERT INTO orders (id, event_id, user_id, status, amount, currency, correlation_id, created_at)
       SELECT id, $2, 'buyer-ann', 'expired', 1000, 'eur', 'paging', now() - interval '30 days' - make_interval(secs => n)
         FROM unnest($1::uuid[]) WITH ORDINALITY AS u(id, n)`,
      [ids, eventId],
    );
    try {
      await page.goto(`${router}/shop/orders`);
      await page.waitForFunction(() => document.body.dataset.interactive === 'true');
      await expect(page.getByTestId('orders-state').textContent()).resolves.toBe(
        '100 orders shown; older ones follow.',
      );
      await expect(page.locator('[data-order]').count()).resolves.toBe(100);
      await expect(page.locator(`[data-order="${ids.at(-1)}"]`).count()).resolves.toBe(0);
      await page.getByTestId('older-orders').click();
      await page.locator(`[data-order="${ids.at(-1)}"]`).waitFor();
      await expect(page.getByTestId('orders-state').textContent()).resolves.toBe('101 orders.');
      await expect(page.getByTestId('older-orders').isHidden()).resolves.toBe(true);
      await expectAccessible(page);
    } finally {
      await db.query('DELETE FROM orders WHERE id = ANY($1::uuid[])', [ids]);
    }
  });

  it('the confirmation with the tickets PDF reaches the buyer through the local SMTP server, once', async () => {
    const inbox = mailbox(emailOf('ann'));
    const deadline = Date.now() + 60_000;
    let mails = await inbox.messages();
    while (mails.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      mails = await inbox.messages();
    }
    expect(mails).toHaveLength(1);
    const [mail] = mails;
    expect(mail!.text).toContain(state.orderId!);
    const pdf = mail!.attachments.find((a) => a.contentType === 'application/pdf');
    expect(pdf, JSON.stringify(mail!.attachments)).toBeDefined();
    const bytes = await inbox.attachment(mail!, pdf!.n);
    expect(new TextDecoder().decode(bytes.slice(0, 5))).toBe('%PDF-');
    // The other buyer paid for nothing and was sent nothing.
    expect(await mailbox(emailOf('ben')).messages()).toEqual([]);
  });

  it('bad input on the new routes is a 4xx in the platform’s error body (JSON) or a problem page (HTML), never a 5xx', async () => {
    const html = [
      ['/shop/events/not-an-id', 404],
      [`/shop/events/${crypto.randomUUID()}`, 404],
      [`/shop/events/${eventId}/orders/not-an-id`, 404],
      [`/shop/events/${eventId}/nope`, 404],
      ['/shop/auth/callback', 400],
      ['/shop/auth/callback?code=x&state=forged-state-value', 400],
    ] as const;
    for (const [path, status] of html) {
      const res = await fetch(`${router}${path}`);
      expect(res.status, path).toBe(status);
      expect(await res.text(), path).toContain('role="alert"');
    }
    // A path the shop's server would read otherwise than the edge (an encoded slash) is refused at the edge.
    const traversal = await fetch(`${router}/shop/assets/..%2Fpackage.json`);
    expect(traversal.status).toBe(400);
    expect(((await traversal.json()) as { error: { code: string; details: unknown } }).error).toMatchObject({
      code: 'bad_request',
      details: { reason: 'encoded_separator' },
    });
    // A sign-in may only return to a page of the shop.
    const away = await fetch(`${router}/shop/auth/login?next=https://evil.example/`, { redirect: 'manual' });
    expect(away.status).toBe(302);
    for (const auth of [undefined, 'Bearer not-a-jwt', 'Basic eA==']) {
      const res = await fetch(`${router}/me/orders`, { headers: auth ? { authorization: auth } : {} });
      expect(res.status, String(auth)).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthenticated');
    }
    const post = await fetch(`${router}/me/orders`, { method: 'POST' });
    expect(post.status).toBe(405);
  });

  it('the presale page registers each buyer once; after the draw one shows an access code the queue page joins with, the other a waitlist place', async () => {
    const now = Date.now();
    const iso = (ms: number) => new Date(now + ms).toISOString();
    const presale = (
      await call('POST', '/events', {
        name: 'Presale Night',
        venue: 'Lyon Hall',
        startsAt: new Date(now + 30 * 86_400_000).toISOString(),
        cellId: t.demo.events[0]!.cellId,
      })
    ).id as string;
    await call('PUT', `/events/${presale}/seat-map`, demoSeatMap(20));
    await call('PUT', `/events/${presale}/onsale`, {
      roomOpensAt: iso(1_000),
      onsaleAt: iso(10 * 60_000),
      perBuyerLimit: 4,
      maxReleaseRate: 50,
    });
    const closesIn = 12_000;
    await call('PUT', `/events/${presale}/presale`, {
      registrationOpensAt: iso(0),
      registrationClosesAt: iso(closesIn),
      presaleStartsAt: iso(closesIn),
      presaleEndsAt: iso(30 * 60_000),
      invitations: 1,
      waitlistSize: 1,
      invitationTtlSeconds: 600,
    });
    const outcome = (page: Page) => page.evaluate(() => document.body.dataset.presale ?? '');
    // Ann's first press loses its connection: she is told, and the button works again.
    await buyers.ann.page.route(`${router}/events/${presale}/presale/registrations`, (route) => route.abort(), {
      times: 1,
    });
    for (const name of ['ann', 'ben'] as const) {
      const { page } = buyers[name];
      await page.goto(`${router}/shop/events/${presale}/presale`);
      await page.waitForFunction(() => document.body.dataset.interactive === 'true');
      await expect(page.getByTestId('presale-state').textContent()).resolves.toMatch(/^Registration is open until/);
      if (name === 'ann') {
        await page.getByTestId('presale-register').click();
        await page.getByText('We could not reach the box office to register you').waitFor();
        await expect(page.getByTestId('presale-register').isEnabled()).resolves.toBe(true);
      }
      await page.getByTestId('presale-register').click();
      await page.waitForFunction(() => document.body.dataset.presale === 'registered');
      await expect(page.getByTestId('presale-register').isVisible()).resolves.toBe(false);
    }
    await expectAccessible(buyers.ann.page);
    // Once registration closes, the promoter draws, unless the worker's tick at the close was first.
    await new Promise((r) => setTimeout(r, Math.max(0, now + closesIn + 500 - Date.now())));
    const drawn = await fetch(`${t.platform.urls.controlPlane}/events/${presale}/presale/draw`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.demo.promoter}` },
    });
    if (drawn.status !== 200)
      expect(await drawn.json()).toMatchObject({ error: { details: { reason: 'already_drawn' } } });
    const seen: Record<string, string> = {};
    for (const name of ['ann', 'ben'] as const) {
      const { page } = buyers[name];
      await page.reload();
      await page.waitForFunction(() => document.body.dataset.interactive === 'true');
      seen[name] = await outcome(page);
    }
    expect(Object.values(seen).sort()).toEqual(['invited', 'waitlisted']);
    const invited = buyers[seen.ann === 'invited' ? 'ann' : 'ben'].page;
    const waitlisted = buyers[seen.ann === 'invited' ? 'ben' : 'ann'].page;
    await expect(invited.getByTestId('presale-code').textContent()).resolves.toMatch(/\S{6,}/);
    await expect(waitlisted.getByTestId('presale-state').textContent()).resolves.toMatch(/waitlist with 0 ahead/);
    await expectAccessible(invited);
    await invited.screenshot({ path: resolve(shots, 'presale.png'), fullPage: true });
    // The queue page joins with the code the presale page kept; without one, the presale door refuses, plainly.
    await invited.getByTestId('presale-join').click();
    await invited.waitForFunction(() => document.body.dataset.queue === 'waiting');
    await waitlisted.goto(`${router}/shop/events/${presale}/queue`);
    await waitlisted.waitForFunction(() => document.body.dataset.queue === 'refused');
    await expect(waitlisted.getByTestId('queue-state').textContent()).resolves.toMatch(
      /^You cannot join this waiting room/,
    );
  });

  it("each page's first load, measured in a fresh browser (cold cache) with the buyer's sign-in", async () => {
    const storage = await buyers.ann.context.storageState();
    const pages = {
      event: `/shop/events/${eventId}`,
      'waiting room': `/shop/events/${eventId}/queue`,
      'seat picker': `/shop/events/${eventId}/seats`,
      'order (tickets)': `/shop/events/${eventId}/orders/${state.orderId}`,
      'my orders': '/shop/orders',
    };
    // The browser's own first context start (its processes, the connection to the router) is not a page's cost.
    await measureFirstLoad(browser, storage, `${router}/shop/orders`);
    // Once each in the suite, which checks that the pages are measured; `pnpm bench:buyer-pages` takes the median of 3.
    const runs = positiveIntegerFromEnv('ONSALE_FIRST_LOAD_RUNS', 1);
    const rows: (FirstLoad & { page: string })[] = [];
    for (const [name, path] of Object.entries(pages)) {
      const samples: FirstLoad[] = [];
      for (let i = 0; i < runs; i++) samples.push(await measureFirstLoad(browser, storage, `${router}${path}`));
      const median = (k: keyof FirstLoad) =>
        percentile(
          samples.map((s) => s[k]),
          50,
        );
      rows.push({
        page: name,
        bytes: median('bytes'),
        requests: median('requests'),
        domContentLoadedMs: median('domContentLoadedMs'),
        interactiveMs: median('interactiveMs'),
      });
    }
    for (const r of rows) {
      expect(r.bytes, r.page).toBeGreaterThan(0);
      expect(r.interactiveMs, r.page).toBeGreaterThan(0);
    }
    const table = [
      `First load of each buyer page (${runs === 1 ? 'one load' : `median of ${runs}`} after one discarded warm-up load, each in a fresh browser context: empty cache; through the edge router on 127.0.0.1; ${new Date().toISOString()})`,
      '',
      '| page | bytes transferred | requests | DOMContentLoaded (ms) | interactive (ms) |',
      '|---|---:|---:|---:|---:|',
      ...rows.map((r) => `| ${r.page} | ${r.bytes} | ${r.requests} | ${r.domContentLoadedMs} | ${r.interactiveMs} |`),
      '',
    ].join('\n');
    writeFileSync(resolve(shots, 'first-load.md'), table);
    console.log(table);
  });
  it('signing out leaves nothing of the buyer in the browser: every open tab shows the signed-out page, and a reload stays signed out', async () => {
    const { page, context } = buyers.ann;
    const interactive = (p: Page) => p.waitForFunction(() => document.body.dataset.interactive === 'true');
    // The device id is the browser's, not the buyer's: it is the one key that outlives a sign-out.
    const buyerKeys = (p: Page) =>
      p.evaluate(() =>
        Object.keys(localStorage)
          .filter((k) => k !== 'onsale.device')
          .sort(),
      );
    await page.goto(`${router}/shop/orders`);
    await interactive(page);
    // An admission past its expiry is dropped by the next page; one still valid stays (the buyer may hold again).
    const stale = `onsale.admission.${crypto.randomUUID()}`;
    const live = `onsale.admission.${crypto.randomUUID()}`;
    await page.evaluate(
      ([stale, live]) => {
        const at = (ms: number) => new Date(Date.now() + ms).toISOString();
        localStorage.setItem(stale!, JSON.stringify({ token: 'stale', expiresAt: at(-1_000) }));
        localStorage.setItem(live!, JSON.stringify({ token: 'live', expiresAt: at(600_000) }));
      },
      [stale, live],
    );
    await page.reload();
    await interactive(page);
    const before = await buyerKeys(page);
    expect(before).toContain('onsale.buyer.token');
    expect(before).toContain(live);
    expect(before).not.toContain(stale);

    const other = await context.newPage();
    await other.goto(`${router}/shop/orders`);
    await interactive(other);
    await expect(other.getByTestId('who').textContent()).resolves.toBe('Signed in as buyer-ann');
    const signOut = page.getByRole('button', { name: 'Sign out' });
    await expect(signOut.isVisible()).resolves.toBe(true);
    await expectAccessible(page);
    await signOut.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(`${router}/shop/signed-out`);
    await other.waitForURL(`${router}/shop/signed-out`);
    const signedOut = async (p: Page) => {
      expect(await buyerKeys(p)).toEqual([]);
      await expect(p.getByTestId('who').textContent()).resolves.toBe('');
      await expect(p.getByRole('button', { name: 'Sign out' }).isVisible()).resolves.toBe(false);
      await expect(p.getByTestId('signed-out').textContent()).resolves.toMatch(/^You're signed out/);
    };
    await signedOut(page);
    await signedOut(other);
    await expectAccessible(page);
    await page.screenshot({ path: resolve(shots, 'signed-out.png'), fullPage: true });
    await page.reload();
    await interactive(page);
    await signedOut(page);
    // The buyer's pages ask for a sign-in again.
    await page.goto(`${router}/shop/orders`);
    await page.getByLabel('Username').waitFor();
    await other.close();
  });
});
