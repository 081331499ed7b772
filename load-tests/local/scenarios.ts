/**
 * The scenarios of load-tests/scenarios/definition.ts against a platform on this machine: what each
 * arrival sends (the same requests as the k6 scripts), what it needs set up first (tokens, admitted
 * buyers, orders with PaymentIntents), and what must hold afterwards in the cell's ledger.
 */

import { createHmac, randomUUID } from 'node:crypto';
import { devToken } from '../../scripts/local-platform/demo';
import { inBatches } from '../lib/batches';
import { keepAlivePool } from '../lib/http';
import { type Form, SCENARIOS, type ScenarioName, soakStep, stagesFor, totalArrivals } from '../scenarios/definition';
import { type Intent, stormDeliveries } from '../scenarios/webhooks';
import { openLoop, type Send } from './generator';
import type { LoadPlatform } from './platform';
import { buildReport, type Check, type ScenarioReport } from './report';

type Client = ReturnType<typeof keepAlivePool>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function tokens(tp: LoadPlatform, prefix: string, n: number): Promise<string[]> {
  return inBatches(n, 16, (i) => devToken(tp.platform.urls.identity, { kind: 'buyer', sub: `${prefix}-${i}` }));
}

/** Joins and polls until admitted, as the k6 scripts' setup does; the admission token. */
async function admit(router: Client, eventId: string, bearer: string): Promise<string> {
  const auth = { authorization: `Bearer ${bearer}` };
  const joined = await router.request(`/events/${eventId}/queue`, { method: 'POST', headers: auth });
  if (joined.status !== 200) throw new Error(`join: ${joined.status} ${joined.body.slice(0, 200)}`);
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const me = await router.request(`/events/${eventId}/queue/me`, { headers: auth });
    if (me.status === 200) {
      const admission = (JSON.parse(me.body) as { admission?: { token: string } | null }).admission;
      if (admission) return admission.token;
    }
    await sleep(250);
  }
  throw new Error('a buyer was not admitted within 120 s');
}

async function seatIds(router: Client, eventId: string): Promise<string[]> {
  const res = await router.request(`/events/${eventId}/availability`);
  if (res.status !== 200) throw new Error(`availability: ${res.status} ${res.body.slice(0, 200)}`);
  return (JSON.parse(res.body) as { availableSeatIds: string[] }).availableSeatIds;
}

const holdRequest = (router: Client, eventId: string, b: { bearer: string; admission: string }, seats: string[]) =>
  router.request(`/events/${eventId}/holds`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${b.bearer}`,
      'x-admission-token': b.admission,
      'idempotency-key': randomUUID(),
      'content-type': 'application/json',
    },
    body: JSON.stringify({ seatIds: seats }),
  });

/** The ledger's last guard, checked after every scenario that holds seats. */
async function noSeatHeldTwice(tp: LoadPlatform, cellId: string): Promise<Check> {
  const rows = await tp
    .cellDb(cellId)
    .query(`SELECT seat_id FROM hold_seats WHERE released_at IS NULL GROUP BY seat_id HAVING count(*) > 1`);
  return { name: 'seats in two active holds', limit: '= 0', actual: rows.length, ok: rows.length === 0 };
}

interface Prepared {
  arrival: (i: number, send: Send) => Promise<void>;
  invariants: () => Promise<Check[]>;
}

/** Setup sizes shrink with the form: the short form must finish in seconds. */
const setupSize = (form: Form, local: number, short: number) => (form === 'short' ? short : local);

const PREPARE: Record<
  ScenarioName,
  (tp: LoadPlatform, router: Client, form: Form, arrivals: number) => Promise<Prepared>
> = {
  async stampede(tp, router, form, arrivals) {
    const { eventId } = tp.demo.events[0]!;
    // A pool of buyers as the k6 script mints; arrivals beyond it rejoin as the same buyers (a refresh storm).
    const pool = await tokens(
      tp,
      `stampede-${randomUUID().slice(0, 6)}`,
      Math.min(arrivals, setupSize(form, 5_000, 200)),
    );
    return {
      async arrival(i, send) {
        const headers = { authorization: `Bearer ${pool[i % pool.length]!}` };
        await send(
          'join',
          async () => (await router.request(`/events/${eventId}/queue`, { method: 'POST', headers })).status,
        );
        await send('poll', async () => (await router.request(`/events/${eventId}/queue/me`, { headers })).status);
      },
      invariants: async () => [],
    };
  },

  async 'hot-section'(tp, router, form) {
    const { eventId, cellId } = tp.demo.events[0]!;
    const params = SCENARIOS['hot-section'].params;
    const hot = (await seatIds(router, eventId)).slice(0, params.hotSeats);
    const bearers = await tokens(tp, `hot-${randomUUID().slice(0, 6)}`, setupSize(form, 100, 10));
    const buyers = await inBatches(bearers.length, 16, async (i) => ({
      bearer: bearers[i]!,
      admission: await admit(router, eventId, bearers[i]!),
    }));
    return {
      async arrival(i, send) {
        const first = Math.floor(Math.random() * hot.length);
        const seats = Array.from({ length: params.seatsPerHold! }, (_, k) => hot[(first + k) % hot.length]!);
        await send('hold', async () => (await holdRequest(router, eventId, buyers[i % buyers.length]!, seats)).status);
      },
      invariants: async () => [await noSeatHeldTwice(tp, cellId)],
    };
  },

  async 'webhook-storm'(tp, router, form) {
    const { eventId, cellId } = tp.demo.events[1] ?? tp.demo.events[0]!;
    const cell = tp.platform.cells.find((c) => c.id === cellId)!;
    const orders = setupSize(form, 50, 5);
    const seats = (await seatIds(router, eventId)).slice(-orders);
    const bearers = await tokens(tp, `storm-${randomUUID().slice(0, 6)}`, orders);
    // Paid orders, as buyers make them: admitted, one seat held, the intent the payment worker created
    // confirmed with a test card (as Stripe.js does), captured by the saga. The storm replays what Stripe
    // said about each of them.
    const stripe = tp.platform.urls.stripe;
    const intents = await inBatches(orders, 8, async (i) => {
      const b = { bearer: bearers[i]!, admission: await admit(router, eventId, bearers[i]!) };
      const held = await holdRequest(router, eventId, b, [seats[i]!]);
      if (held.status !== 202) throw new Error(`storm setup hold: ${held.status} ${held.body.slice(0, 200)}`);
      const { orderId } = JSON.parse(held.body) as { orderId: string };
      const view = async () => {
        const order = await router.request(`/events/${eventId}/orders/${orderId}`, {
          headers: { authorization: `Bearer ${b.bearer}` },
        });
        return order.status === 200
          ? (JSON.parse(order.body) as {
              status: string;
              payment: { paymentIntentId: string; clientSecret?: string } | null;
            })
          : null;
      };
      const deadline = Date.now() + 120_000;
      let confirmed = false;
      while (Date.now() < deadline) {
        const order = await view();
        if (order?.payment?.clientSecret && !confirmed) {
          const res = await fetch(`${stripe}/v1/payment_intents/${order.payment.paymentIntentId}/confirm`, {
            method: 'POST',
            headers: {
              authorization: 'Bearer pk_test_onsale_local',
              'content-type': 'application/x-www-form-urlencoded',
            },
            body: new URLSearchParams({ client_secret: order.payment.clientSecret, payment_method: 'pm_card_visa' }),
          });
          if (!res.ok) throw new Error(`confirm: ${res.status} ${await res.text()}`);
          confirmed = true;
        }
        if (order?.payment && ['paid', 'ticketed'].includes(order.status)) {
          const res = await fetch(`${stripe}/v1/payment_intents/${order.payment.paymentIntentId}`, {
            headers: { authorization: `Bearer ${tp.platform.stripeKey}` },
          });
          return (await res.json()) as Intent;
        }
        await sleep(250);
      }
      throw new Error(`order ${orderId} was not paid within 120 s`);
    });
    const seed = randomUUID().slice(0, 8);
    const deliveries = stormDeliveries(intents, SCENARIOS['webhook-storm'].params.maxDeliveries!, seed);
    return {
      async arrival(i, send) {
        const payload = deliveries[i % deliveries.length]!;
        const t = Math.floor(Date.now() / 1000);
        const signature = `t=${t},v1=${createHmac('sha256', cell.webhookSecret).update(`${t}.${payload}`).digest('hex')}`;
        await send(
          'webhook',
          async () =>
            (
              await router.request(`/cells/${cellId}/webhooks/stripe`, {
                method: 'POST',
                headers: { 'content-type': 'application/json', 'stripe-signature': signature },
                body: payload,
              })
            ).status,
        );
      },
      async invariants() {
        const db = tp.cellDb(cellId);
        const recorded = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM stripe_events WHERE id LIKE $1`,
          [`evt_storm_${seed}_%`],
        );
        const distinct = new Set(deliveries.map((d) => (JSON.parse(d) as { id: string }).id)).size;
        const doubled = await db.query(
          `SELECT envelope->>'causationId' AS cause, event_type FROM outbox
              WHERE envelope->>'causationId' LIKE $1 GROUP BY 1, 2 HAVING count(*) > 1`,
          [`evt_storm_${seed}_%`],
        );
        const twoTickets = await db.query(`SELECT seat_id FROM tickets GROUP BY seat_id HAVING count(*) > 1`);
        return [
          {
            name: 'Stripe events recorded at most once',
            limit: `≤ ${distinct} distinct events`,
            actual: recorded[0]!.n,
            ok: recorded[0]!.n <= distinct,
          },
          { name: 'outbox facts with a second effect', limit: '= 0', actual: doubled.length, ok: doubled.length === 0 },
          {
            name: 'seats with two tickets',
            limit: '= 0',
            actual: twoTickets.length,
            ok: twoTickets.length === 0,
          },
          await noSeatHeldTwice(tp, cellId),
        ];
      },
    };
  },

  async soak(tp, router, form, arrivals) {
    const { eventId, cellId } = tp.demo.events[0]!;
    const pool = await tokens(tp, `soak-${randomUUID().slice(0, 6)}`, Math.min(arrivals, setupSize(form, 2_000, 100)));
    const admitted = await inBatches(setupSize(form, 50, 5), 16, async (i) => ({
      bearer: pool[i]!,
      admission: await admit(router, eventId, pool[i]!),
    }));
    const seats = (await seatIds(router, eventId)).slice(100);
    return {
      async arrival(i, send) {
        const step = soakStep(i);
        if (step === 'hold') {
          const b = admitted[i % admitted.length]!;
          let orderId: string | undefined;
          await send('hold', async () => {
            const res = await holdRequest(router, eventId, b, [seats[i % seats.length]!]);
            if (res.status === 202) orderId = (JSON.parse(res.body) as { orderId: string }).orderId;
            return res.status;
          });
          // Then its release: the soak keeps seats moving instead of selling the event out.
          if (orderId) {
            await send(
              'release',
              async () =>
                (
                  await router.request(`/events/${eventId}/orders/${orderId}/hold`, {
                    method: 'DELETE',
                    headers: { authorization: `Bearer ${b.bearer}`, 'x-admission-token': b.admission },
                  })
                ).status,
            );
          }
          return;
        }
        const headers = { authorization: `Bearer ${pool[i % pool.length]!}` };
        await send(step, async () =>
          step === 'join'
            ? (await router.request(`/events/${eventId}/queue`, { method: 'POST', headers })).status
            : (await router.request(`/events/${eventId}/queue/me`, { headers })).status,
        );
      },
      invariants: async () => [await noSeatHeldTwice(tp, cellId)],
    };
  },
};

/** One scenario, in one form, against a running platform: its report (not yet written). */
export async function runScenario(
  tp: LoadPlatform,
  name: ScenarioName,
  form: Exclude<Form, 'full'>,
): Promise<ScenarioReport> {
  const scenario = SCENARIOS[name];
  const stages = stagesFor(scenario, form);
  const router = keepAlivePool(tp.platform.urls.router, Math.min(scenario.maxInFlight, 256));
  try {
    const prepared = await PREPARE[name](tp, router, form, totalArrivals(stages));
    const startedAt = new Date();
    const run = await openLoop(stages, scenario.maxInFlight, prepared.arrival);
    return buildReport(scenario, form, stages, startedAt, run, await prepared.invariants());
  } finally {
    await router.close();
  }
}
