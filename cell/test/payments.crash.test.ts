import type { EventLoad } from '@onsale/contracts';
import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProcess, startProcess } from '../../scripts/local-platform/process';
import type { Emulator } from '../../stripe-emulator/src/index';
import { admittedBuyer } from '../../test/support/buyer';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { dropCellTopics, eventually, kafkaBrokers, provisionCellTopics, uniqueCellId } from '../../test/support/kafka';
import { orderStatus } from '../../test/support/saga';
import { eventLoad, loadIntoCell } from '../../test/support/seed';
import {
  captureLogs,
  intentsFor,
  newWebhookSecret,
  payInBrowser,
  sendWebhooksTo,
  startStripeEmulator,
  stripeApiEnv,
  stripeClient,
  stripeWorkerEnv,
} from '../../test/support/stripe';
import { startCellWorkers } from '../../test/support/workers';

let identity: TestIdentity;
let emulator: Emulator;
let stripe: Stripe;
let cell: TestCell;
let event: EventLoad;
let workers: Awaited<ReturnType<typeof startCellWorkers>>;
let logs: ReturnType<typeof captureLogs>;
const processes: RunningProcess[] = [];
const cellId = uniqueCellId('pcr');

beforeAll(async () => {
  logs = captureLogs();
  identity = await startIdentity();
  emulator = await startStripeEmulator();
  stripe = stripeClient(emulator);
  const webhookSecret = newWebhookSecret();
  cell = await startTestCell(identity, {
    cellId,
    env: { ...stripeApiEnv(emulator, webhookSecret), LOG_LEVEL: 'debug' },
  });
  sendWebhooksTo(emulator, cell.url, webhookSecret);
  await provisionCellTopics(cellId);
  event = await loadIntoCell(cell, eventLoad(10));
  // The payment worker runs as its own process (so it can crash); the rest of the cell in here.
  workers = await startCellWorkers(cellId, cell.db.url, { relay: true, saga: true, tickets: true });
});
afterAll(async () => {
  for (const p of processes) await p.stop();
  await workers?.stop();
  await cell?.close();
  await emulator?.close();
  await identity?.close();
  await dropCellTopics(cellId);
  logs?.restore();
});

async function paymentWorker(failpoints = '') {
  const p = await startProcess(
    'cell/src/payments/main.ts',
    {
      CELL_ID: cellId,
      DATABASE_URL: cell.db.url,
      KAFKA_BROKERS: kafkaBrokers().join(','),
      KAFKA_SESSION_TIMEOUT_MS: '6000',
      LOG_LEVEL: 'debug',
      FAILPOINTS: failpoints,
      ...stripeWorkerEnv(emulator),
    },
    { capture: true },
  );
  processes.push(p);
  return p;
}

const recorded = async (orderId: string) =>
  (await cell.db.query('SELECT payment_intent_id FROM payments WHERE order_id = $1', [orderId]))[0]
    ?.payment_intent_id as string | undefined;

describe('a payment worker crash between Stripe’s answer and the local commit', () => {
  it('replays to the same PaymentIntent and the same capture', async () => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const { orderId } = await (await buyer.hold([event.seats[0]!.id])).json();

    // Crash right after Stripe created the intent, before it is recorded.
    const first = await paymentWorker('payments.after-stripe=crash');
    expect(await first.exited).toBe(137);
    expect(intentsFor(emulator, orderId)).toHaveLength(1);
    expect(await recorded(orderId)).toBeUndefined();

    const second = await paymentWorker();
    await eventually(recorded.bind(null, orderId), 'intent recorded after the replay', 60_000);
    expect(intentsFor(emulator, orderId).map((pi) => pi.id)).toEqual([await recorded(orderId)]);
    expect(emulator.control.counters().paymentIntentsCreated).toBe(1);
    await second.stop();

    // Crash right after Stripe captured, before PaymentCaptured is recorded.
    const third = await paymentWorker('payments.after-stripe=crash');
    const { clientSecret } = await payInBrowser(stripe, () => buyer.order(orderId), 'pm_card_visa');
    expect(await third.exited).toBe(137);
    expect(emulator.control.counters().captures).toBe(1);
    // The worker's local commit never happened: its inbox has no row for the capture request.
    // (The order may already be paid: Stripe's succeeded webhook can carry the capture too.)
    const captureRequests = await cell.db.query<{ event_id: string }>(
      `SELECT event_id FROM outbox WHERE aggregate_id = $1 AND event_type = 'CaptureRequested'`,
      [orderId],
    );
    expect(captureRequests).toHaveLength(1);
    expect(
      await cell.db.query(`SELECT 1 FROM inbox WHERE consumer = 'payments' AND event_id = $1`, [
        captureRequests[0]!.event_id,
      ]),
    ).toEqual([]);

    await paymentWorker();
    await eventually(
      async () => (await orderStatus(cell, orderId)) === 'ticketed',
      'ticketed after the replay',
      60_000,
    );
    expect(emulator.control.counters()).toMatchObject({ paymentIntentsCreated: 1, captures: 1 });

    const lines = [...logs.lines, ...processes.flatMap((p) => p.output)];
    expect(processes.flatMap((p) => p.output).join('').length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.includes(clientSecret))).toEqual([]);
  });

  it('a crash in the runner before the commit (inbox and record rolled back) replays the same way', async () => {
    for (const p of processes.splice(0)) await p.stop();
    const before = emulator.control.counters();
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const { orderId } = await (await buyer.hold([event.seats[1]!.id])).json();

    const crashing = await paymentWorker('payments.before-commit=crash');
    expect(await crashing.exited).toBe(137);
    expect(await recorded(orderId)).toBeUndefined();

    await paymentWorker();
    await eventually(recorded.bind(null, orderId), 'intent recorded after the replay', 60_000);
    expect(intentsFor(emulator, orderId)).toHaveLength(1);
    expect(emulator.control.counters().paymentIntentsCreated - before.paymentIntentsCreated).toBe(1);
  });
});
