import type { Emulator } from '@onsale/stripe-emulator';
import { afterAll, describe, expect } from 'vitest';
import type { RunningProcess } from '../../scripts/local-platform/process';
import { startBundled } from '../../test/support/bundled';
import { admittedBuyer } from '../../test/support/buyer';
import type { TestCell } from '../../test/support/cell';
import { paymentsCellTest } from '../../test/support/fixtures';
import { eventually, kafkaBrokers } from '../../test/support/kafka';
import { orderStatus } from '../../test/support/saga';
import { intentsFor, payInBrowser, stripeWorkerEnv } from '../../test/support/stripe';

// The payment worker runs as its own process (so it can crash); the rest of the cell in here.
const it = paymentsCellTest({ prefix: 'pcr', seats: 10, env: { LOG_LEVEL: 'debug' }, paymentsInProcess: false });
const processes: RunningProcess[] = [];

// Before the cell and its workers are torn down.
afterAll(async () => {
  for (const p of processes) await p.stop();
});

async function paymentWorker(cell: TestCell, emulator: Emulator, failpoints = '') {
  const p = await startBundled(
    'cell/src/payments/main.ts',
    {
      CELL_ID: cell.cellId,
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

const recorded = async (cell: TestCell, orderId: string) =>
  (await cell.db.query('SELECT payment_intent_id FROM payments WHERE order_id = $1', [orderId]))[0]
    ?.payment_intent_id as string | undefined;

describe('a payment worker crash between Stripe’s answer and the local commit', () => {
  it('replays to the same PaymentIntent and the same capture', async ({
    identity,
    cell,
    event,
    emulator,
    stripe,
    logs,
  }) => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const { orderId } = await (await buyer.hold([event.seats[0]!.id])).json();

    // Crash right after Stripe created the intent, before it is recorded.
    const first = await paymentWorker(cell, emulator, 'payments.after-stripe=crash');
    expect(await first.exited).toBe(137);
    expect(intentsFor(emulator, orderId)).toHaveLength(1);
    expect(await recorded(cell, orderId)).toBeUndefined();

    const second = await paymentWorker(cell, emulator);
    await eventually(recorded.bind(null, cell, orderId), 'intent recorded after the replay', 60_000);
    expect(intentsFor(emulator, orderId).map((pi) => pi.id)).toEqual([await recorded(cell, orderId)]);
    expect(emulator.control.counters().paymentIntentsCreated).toBe(1);
    await second.stop();

    // Crash right after Stripe captured, before PaymentCaptured is recorded.
    const third = await paymentWorker(cell, emulator, 'payments.after-stripe=crash');
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

    await paymentWorker(cell, emulator);
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

  it('a crash in the runner before the commit (inbox and record rolled back) replays the same way', async ({
    identity,
    cell,
    event,
    emulator,
  }) => {
    for (const p of processes.splice(0)) await p.stop();
    const before = emulator.control.counters();
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const { orderId } = await (await buyer.hold([event.seats[1]!.id])).json();

    const crashing = await paymentWorker(cell, emulator, 'payments.before-commit=crash');
    expect(await crashing.exited).toBe(137);
    expect(await recorded(cell, orderId)).toBeUndefined();

    await paymentWorker(cell, emulator);
    await eventually(recorded.bind(null, cell, orderId), 'intent recorded after the replay', 60_000);
    expect(intentsFor(emulator, orderId)).toHaveLength(1);
    expect(emulator.control.counters().paymentIntentsCreated - before.paymentIntentsCreated).toBe(1);
  });
});
