/**
 * `pnpm demo:purchase`: one whole purchase as a buyer would make it, against a platform started
 * with `bash scripts/platform up`, printing each step. Everything goes through the edge router
 * except what a buyer's browser does elsewhere: the dev identity issuer (its sign-in), the
 * control plane's public directory (to pick an event), and Stripe (the emulator), which the
 * browser calls itself with the publishable key and the PaymentIntent's client secret, as
 * Stripe.js does. The platform's secret Stripe key is never used here.
 *
 * Environment (all optional): ROUTER_URL (http://127.0.0.1:8080), CONTROL_PLANE_URL (:4000),
 * IDENTITY_URL (:4100), STRIPE_URL (:12111), STRIPE_PUBLISHABLE_KEY (pk_test_onsale_local),
 * EVENT_ID (else the first event with seats free), SEATS (2), PAYMENT_METHOD (pm_card_visa;
 * pm_card_chargeDeclined shows a decline), BUYER (a new buyer id per run).
 */
import { randomUUID } from 'node:crypto';
import type { OrderView } from '@onsale/contracts/orders';
import { devToken } from './demo';

const env = process.env;
const routerUrl = env.ROUTER_URL ?? 'http://127.0.0.1:8080';
const controlPlaneUrl = env.CONTROL_PLANE_URL ?? 'http://127.0.0.1:4000';
const identityUrl = env.IDENTITY_URL ?? 'http://127.0.0.1:4100';
const stripeUrl = env.STRIPE_URL ?? 'http://127.0.0.1:12111';
/** Publishable keys are public by design (they ship in web pages); the emulator accepts any pk_test_ key unless told one. */
const publishableKey = env.STRIPE_PUBLISHABLE_KEY ?? 'pk_test_onsale_local';
const seatCount = Number(env.SEATS ?? 2);
const paymentMethod = env.PAYMENT_METHOD ?? 'pm_card_visa';
const buyer = env.BUYER ?? `demo-buyer-${randomUUID().slice(0, 8)}`;
/** Where the cell's notifier sends the confirmation: the local SMTP server keeps it (scripts/services' smtp). */
const buyerEmail = env.BUYER_EMAIL ?? `${buyer.replace(/[^A-Za-z0-9._-]/g, '-')}@buyers.onsale.test`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let stepNumber = 0;
const step = (text: string) => console.log(`\n${++stepNumber}. ${text}`);
const say = (text: string) => console.log(`   ${text}`);
const money = (amount: number, currency: string) => `${(amount / 100).toFixed(2)} ${currency.toUpperCase()}`;

class DemoError extends Error {}

async function request(url: string, init: RequestInit = {}): Promise<{ status: number; body: unknown }> {
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch (err) {
    const { origin } = new URL(url);
    throw new DemoError(
      `cannot reach ${origin} (${(err as Error).cause ?? (err as Error).message}): is "bash scripts/platform up" running?`,
    );
  }
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {}
  return { status: res.status, body };
}

function expectStatus(what: string, got: { status: number; body: unknown }, ...ok: number[]): void {
  if (!ok.includes(got.status)) throw new DemoError(`${what}: HTTP ${got.status} ${JSON.stringify(got.body)}`);
}

async function until<T>(what: string, timeoutMs: number, intervalMs: number, poll: () => Promise<T | undefined>) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await poll();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new DemoError(`gave up waiting for ${what} after ${timeoutMs / 1000} s`);
    await sleep(intervalMs);
  }
}

async function main() {
  console.log(`A purchase as buyer "${buyer}", through the router at ${routerUrl}`);

  step(`Sign in: a buyer token from the dev identity issuer (${identityUrl})`);
  const bearer = await devToken(identityUrl, { kind: 'buyer', sub: buyer, email: buyerEmail }).catch((err: Error) => {
    throw new DemoError(`${err.message}: is "bash scripts/platform up" running?`);
  });
  const auth = { authorization: `Bearer ${bearer}` };
  say('got a buyer JWT (not shown)');

  step(
    `Find an event: the control plane's directory (${controlPlaneUrl}/directory, not on the edge), then availability through the router`,
  );
  const directory = await request(`${controlPlaneUrl}/directory`);
  expectStatus('GET /directory', directory, 200);
  const events = (directory.body as { events: { eventId: string; cellId: string }[] }).events;
  if (events.length === 0) throw new DemoError('the directory lists no events: has the demo tenant been seeded?');
  const candidates = env.EVENT_ID ? events.filter((e) => e.eventId === env.EVENT_ID) : events;
  if (candidates.length === 0) throw new DemoError(`EVENT_ID ${env.EVENT_ID} is not in the directory`);
  let chosen: { eventId: string; cellId: string; available: number } | undefined;
  for (const e of candidates) {
    const availability = await request(`${routerUrl}/events/${e.eventId}/availability`);
    const available =
      availability.status === 200 ? (availability.body as { availableCount: number }).availableCount : 0;
    say(
      `event ${e.eventId} on ${e.cellId}: ${availability.status === 200 ? `${available} seats free` : `HTTP ${availability.status}`}`,
    );
    if (!chosen && available >= seatCount) chosen = { ...e, available };
  }
  if (!chosen) throw new DemoError(`no event has ${seatCount} seats free`);
  const eventId = chosen.eventId;
  const base = `${routerUrl}/events/${eventId}`;
  say(`buying ${seatCount} seat(s) for event ${eventId}`);

  step('Join the waiting room: POST /events/{eventId}/queue');
  const joined = await request(`${base}/queue`, { method: 'POST', headers: auth });
  // 409: this buyer is in the queue already (a BUYER given twice); its place still stands.
  expectStatus('join the queue', joined, 200, 201, 202, 409);
  say(joined.status === 409 ? 'already in the queue' : 'in the queue');

  step('Wait for admission: poll GET /events/{eventId}/queue/me until it carries an admission token');
  let lastLine = '';
  const admission = await until('admission', 5 * 60_000, 1_000, async () => {
    const me = await request(`${base}/queue/me`, { headers: auth });
    if (me.status === 429) return undefined;
    expectStatus('GET queue/me', me, 200);
    const view = me.body as {
      status: string;
      position: number | null;
      peopleAhead: number | null;
      estimatedWaitSeconds: number | null;
      admission: { token: string; purchaseCell: string } | null;
    };
    if (view.admission) return view.admission;
    if (['expired', 'revoked', 'skipped', 'not_in_queue'].includes(view.status)) {
      throw new DemoError(`the waiting room says ${view.status}`);
    }
    const line = `${view.status}: position ${view.position ?? '?'}, ${view.peopleAhead ?? '?'} ahead, about ${view.estimatedWaitSeconds ?? '?'} s`;
    if (line !== lastLine) say(line);
    lastLine = line;
    return undefined;
  });
  say(`admitted to buy on ${admission.purchaseCell} (admission token not shown)`);

  step('Hold seats: POST /events/{eventId}/holds with an Idempotency-Key and the x-admission-token header');
  let hold: { orderId: string; expiresAt: string } | undefined;
  for (let attempt = 1; !hold; attempt++) {
    const availability = await request(`${base}/availability`);
    expectStatus('GET availability', availability, 200);
    const seatIds = (availability.body as { availableSeatIds: string[] }).availableSeatIds.slice(0, seatCount);
    if (seatIds.length < seatCount) throw new DemoError('not enough seats left');
    const idempotencyKey = randomUUID();
    say(`seats ${seatIds.join(', ')} (idempotency key ${idempotencyKey})`);
    const res = await request(`${base}/holds`, {
      method: 'POST',
      headers: {
        ...auth,
        'x-admission-token': admission.token,
        'idempotency-key': idempotencyKey,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ seatIds }),
    });
    // 409: someone took a seat since the availability hint (a second stale); pick again.
    if (res.status === 409 && attempt < 3) {
      say('a seat was taken meanwhile; picking again');
      continue;
    }
    expectStatus('hold', res, 202);
    hold = res.body as { orderId: string; expiresAt: string };
  }
  say(`order ${hold.orderId}, held until ${hold.expiresAt}`);
  const orderUrl = `${base}/orders/${hold.orderId}`;
  const order = async () => {
    const res = await request(orderUrl, { headers: auth });
    expectStatus('GET order', res, 200);
    return res.body as OrderView;
  };

  step('Wait for the payment: poll GET /events/{eventId}/orders/{orderId} until payment.clientSecret appears');
  const { view: pending, payment } = await until('the PaymentIntent', 60_000, 300, async () => {
    const view = await order();
    if (['failed', 'expired', 'released', 'canceled'].includes(view.status)) {
      throw new DemoError(`order ${view.status}: ${view.failureReason}`);
    }
    const clientSecret = view.payment?.clientSecret;
    return view.payment && clientSecret ? { view, payment: { ...view.payment, clientSecret } } : undefined;
  });
  say(
    `order ${pending.status}, ${money(pending.amount, pending.currency)} for ${pending.seats.map((s) => s.label).join(', ')}`,
  );
  say(`PaymentIntent ${payment.paymentIntentId}; client secret received (not shown)`);

  step(
    `Pay as Stripe.js does: POST ${stripeUrl}/v1/payment_intents/{id}/confirm with the publishable key and the client secret`,
  );
  // The browser talks to Stripe alone: publishable key in the Authorization header, the client
  // secret in the form body (never a URL), a test card.
  const confirm = await request(`${stripeUrl}/v1/payment_intents/${payment.paymentIntentId}/confirm`, {
    method: 'POST',
    headers: { authorization: `Bearer ${publishableKey}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_secret: payment.clientSecret, payment_method: paymentMethod }).toString(),
  });
  if (confirm.status === 402) {
    const error = (confirm.body as { error: { message: string; decline_code?: string } }).error;
    say(`card declined (${error.decline_code ?? 'declined'}): ${error.message}`);
  } else {
    expectStatus('confirm', confirm, 200);
    say(`PaymentIntent ${(confirm.body as { status: string }).status} (${publishableKey}, ${paymentMethod})`);
  }

  step('Wait for tickets: poll the order until ticketed (webhook → saga → capture → tickets)');
  const final = await until('a final order status', 120_000, 500, async () => {
    const view = await order();
    return ['ticketed', 'failed', 'expired', 'released', 'canceled', 'refunded'].includes(view.status)
      ? view
      : undefined;
  });
  say(`order ${final.orderId}: ${final.status}${final.failureReason ? ` (${final.failureReason})` : ''}`);
  const labels = new Map(final.seats.map((s) => [s.seatId, s.label]));
  for (const ticket of final.tickets) {
    say(
      `ticket ${ticket.ticketId}  ${ticket.ga ? `${ticket.ga.area} #${ticket.ga.unit}` : `seat ${labels.get(ticket.seatId ?? '') ?? ticket.seatId}`}  signed token ${ticket.token.slice(0, 16)}… (${ticket.token.length} chars)`,
    );
  }
  if (final.status !== 'ticketed') {
    if (paymentMethod !== 'pm_card_visa' && final.status === 'failed') {
      console.log('\nThe card was declined, so the order failed and its seats are on sale again.');
      return;
    }
    throw new DemoError(`order ended ${final.status}`);
  }
  console.log(`\nDone: ${final.tickets.length} ticket(s) for ${money(final.amount, final.currency)}.`);
  console.log(`The confirmation with the tickets PDF goes to ${buyerEmail}: the local mail server lists it at`);
  console.log(
    `  $SMTP_MAILBOX_URL/messages?to=${encodeURIComponent(buyerEmail)}   (SMTP_MAILBOX_URL in .data/services.env)`,
  );
}

main().catch((err: unknown) => {
  console.error(`\ndemo purchase failed: ${err instanceof DemoError ? err.message : (err as Error).stack}`);
  process.exit(1);
});
