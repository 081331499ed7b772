import type { RetryPolicy } from '@onsale/cell/messaging/consumer-runner';
import type { EventLoad } from '@onsale/contracts';
import { expect, test } from 'vitest';
import { admittedBuyer } from './buyer';
import type { TestCell } from './cell';
import type { FakeCell, Harness } from './control-plane';
import type { TestIdentity } from './identity';

/**
 * vitest fixtures for the integration tests: a test file says what it needs (`it('…', async ({ cell,
 * event }) => …)`) and gets it set up once for the file, on the first test that asks, and torn down
 * after the file's last test, last set up first torn down. Each file still gets its own database
 * (cloned from the migrated template), its own cell id, topics and Redis keys.
 *
 * The fixtures import what they set up when they set it up: a file loads only what it uses (the
 * control plane's tests no cell, a cell's tests no Stripe emulator unless it takes payments).
 */

export interface CellOptions {
  /** Seats of the event the `event` fixture loads (10 unless said). */
  seats?: number;
  /** The rest of that event (e.g. `{ maxSeatsPerOrder: 4 }`, `{ holdTtlSeconds: 120 }`). */
  event?: Partial<EventLoad>;
  /** The prefix of the file's own cell id (which names its topics and consumer groups). */
  prefix?: string;
  /** More environment for the cell API. */
  env?: Record<string, string>;
  /** Provision the cell's Kafka topics for the file (and delete them after it). */
  topics?: boolean;
}

/** What a test of a cell usually hands its helpers. */
export interface CellFixtures {
  identity: TestIdentity;
  cell: TestCell;
  event: EventLoad;
}

const file = { scope: 'file' } as const;
type Cleanup = { onCleanup: (fn: () => Promise<void> | void) => void };

// vitest reads what a fixture depends on from its first parameter, which must be an object pattern:
// the empty patterns below say "nothing".

// biome-ignore lint/correctness/noEmptyPattern: see above
const identityFixture = async ({}, { onCleanup }: Cleanup) => {
  const { startIdentity } = await import('./identity');
  const identity = await startIdentity();
  onCleanup(() => identity.close());
  return identity;
};

/** A cell id of the file's own; with `topics`, its Kafka topics exist until the file is done. */
const cellIdFixture =
  (o: { prefix?: string; topics?: boolean }) =>
  // biome-ignore lint/correctness/noEmptyPattern: see above
  async ({}, { onCleanup }: Cleanup) => {
    const { dropCellTopics, provisionCellTopics, uniqueCellId } = await import('./kafka');
    const cellId = uniqueCellId(o.prefix ?? 'cell');
    if (o.topics) {
      await provisionCellTopics(cellId);
      onCleanup(() => dropCellTopics(cellId));
    }
    return cellId;
  };

const eventFixture =
  (o: CellOptions) =>
  async ({ cell }: { cell: TestCell }) => {
    const { eventLoad, loadIntoCell } = await import('./seed');
    return loadIntoCell(cell, eventLoad(o.seats ?? 10, o.event));
  };

/**
 * `hold(n)` holds the next `n` seats of `event` (seats no earlier call took) for a buyer admitted for
 * the occasion; the hold must be accepted. Returns the buyer, the order and the seats. The `hold`
 * fixture is this for the file's event; a test with an event of its own makes its own.
 */
export const seatHolder = ({ identity, cell, event }: CellFixtures) => {
  let next = 0;
  return async (n = 1) => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const seatIds = event.seats.slice(next, next + n).map((s) => s.id);
    next += n;
    const res = await buyer.hold(seatIds);
    expect(res.status).toBe(202);
    const { orderId } = (await res.json()) as { orderId: string };
    return { buyer, orderId, seatIds };
  };
};

/**
 * A cell: a test identity provider (buyer and admission keys behind a real JWKS), the cell API on a
 * database of its own, one event loaded into it (`event`, loaded when a test first asks), and `hold(n)`
 * to hold fresh seats of it.
 * `cellTest({ seats: 200 })` returns the extended `test`; a file calls it once (`const it = cellTest(...)`).
 */
export function cellTest(o: CellOptions = {}) {
  return test
    .extend('identity', file, identityFixture)
    .extend('cellId', file, cellIdFixture(o))
    .extend('cell', file, async ({ identity, cellId }, { onCleanup }) => {
      const { startTestCell } = await import('./cell');
      const cell = await startTestCell(identity, { cellId, env: o.env });
      onCleanup(() => cell.close());
      return cell;
    })
    .extend('event', file, eventFixture(o))
    .extend('hold', file, seatHolder);
}

export interface PaymentsCellOptions extends Omit<CellOptions, 'topics'> {
  /**
   * Run the payment worker in this process with the relay, saga and ticket issuer (the default);
   * `false` when the file starts it as a process of its own (to crash it).
   */
  paymentsInProcess?: boolean;
  /** The in-process payment worker's retry schedule (the test support's fast one by default). */
  paymentsRetry?: RetryPolicy;
}

/**
 * A cell that takes payments: the Stripe emulator and the SDK pointed at it, the cell's webhook route
 * registered with the emulator under a fresh secret, the cell's topics, the relay, saga, ticket
 * issuer and payment worker running in this process, and every log line captured from the file's
 * start (`logs.lines`, for the no-secret-in-logs checks; printed too with TEST_SHOW_LOGS).
 */
export function paymentsCellTest(o: PaymentsCellOptions = {}) {
  return (
    test
      // Automatic, so the capture starts before anything of the file logs, whichever test asks first.
      // biome-ignore lint/correctness/noEmptyPattern: no dependencies (see above)
      .extend('logs', { scope: 'file', auto: true }, async ({}, { onCleanup }) => {
        const { captureLogs } = await import('./stripe');
        const logs = captureLogs();
        onCleanup(() => {
          logs.restore();
        });
        return logs;
      })
      .extend('identity', file, identityFixture)
      // biome-ignore lint/correctness/noEmptyPattern: no dependencies (see above)
      .extend('emulator', file, async ({}, { onCleanup }) => {
        const { startStripeEmulator } = await import('./stripe');
        const emulator = await startStripeEmulator();
        onCleanup(() => emulator.close());
        return emulator;
      })
      .extend('stripe', file, async ({ emulator }) => (await import('./stripe')).stripeClient(emulator))
      .extend('webhookSecret', file, async () => (await import('./stripe')).newWebhookSecret())
      .extend('cellId', file, cellIdFixture({ prefix: o.prefix, topics: true }))
      .extend('cell', file, async ({ identity, cellId, emulator, webhookSecret }, { onCleanup }) => {
        const [{ startTestCell }, { sendWebhooksTo, stripeApiEnv }] = await Promise.all([
          import('./cell'),
          import('./stripe'),
        ]);
        const cell = await startTestCell(identity, {
          cellId,
          env: { ...stripeApiEnv(emulator, webhookSecret), ...o.env },
        });
        onCleanup(() => cell.close());
        sendWebhooksTo(emulator, cell.url, webhookSecret);
        return cell;
      })
      .extend('event', file, eventFixture(o))
      .extend('hold', file, seatHolder)
      // Automatic: no test names the workers, but every purchase needs them.
      .extend('workers', { scope: 'file', auto: true }, async ({ cell, emulator }, { onCleanup }) => {
        const [{ startCellWorkers }, { stripeClient }] = await Promise.all([import('./workers'), import('./stripe')]);
        const inProcess = o.paymentsInProcess ?? true;
        const workers = await startCellWorkers(
          cell.cellId,
          cell.db.url,
          { relay: true, saga: true, tickets: true, payments: inProcess },
          undefined,
          inProcess ? { stripe: stripeClient(emulator), paymentsRetry: o.paymentsRetry } : {},
        );
        onCleanup(() => workers.stop());
        return workers;
      })
  );
}

export type TestTenant = Awaited<ReturnType<Harness['tenant']>>;

export interface ControlPlaneOptions {
  /** The id of the fake cell registered with the control plane. */
  cellId: string;
  /** More environment for the control plane. */
  env?: Record<string, string>;
}

/**
 * A control plane (`h`: its own database and Redis prefix, a dev identity issuer, a manual clock),
 * a fake cell registered with it (`fakeCell`: records loads, answers signals), and a tenant with an
 * owner, a manager and a viewer (`tenant`).
 */
export function controlPlaneTest(o: ControlPlaneOptions) {
  return (
    test
      // biome-ignore lint/correctness/noEmptyPattern: no dependencies (see above)
      .extend('h', file, async ({}, { onCleanup }): Promise<Harness> => {
        const { createHarness } = await import('./control-plane');
        const h = await createHarness({ env: o.env });
        onCleanup(() => h.close());
        return h;
      })
      // Automatic: scheduling places events on this cell even in tests that never look at it.
      .extend('fakeCell', { scope: 'file', auto: true }, async ({ h }, { onCleanup }): Promise<FakeCell> => {
        const { addCell, startFakeCell } = await import('./control-plane');
        const cell = await startFakeCell(o.cellId);
        onCleanup(() => cell.close());
        await addCell(h, o.cellId, cell.url);
        return cell;
      })
      .extend('tenant', file, ({ h }) => h.tenant())
  );
}
