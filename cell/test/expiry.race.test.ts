import { randomUUID } from 'node:crypto';
import type { EventLoad } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { envelope, recordPaymentIntent } from '../../test/support/saga';
import { eventLoad, loadIntoCell } from '../../test/support/seed';
import { workerContext } from '../../test/support/workers';
import type { CellContext } from '../src/context';
import { withWriteTx } from '../src/db/tx';
import { expireBatch } from '../src/expiry/expiry-worker';
import { placeHold } from '../src/holds/place-hold';
import { sagaHandlers } from '../src/saga/transitions';

let identity: TestIdentity;
let cell: TestCell;
let event: EventLoad;
let saga: CellContext;
let expiry: CellContext;
const RUNS = 200;

beforeAll(async () => {
  identity = await startIdentity();
  cell = await startTestCell(identity);
  event = await loadIntoCell(cell, eventLoad(RUNS + 50, { holdTtlSeconds: 60 }));
  saga = workerContext(cell.cellId, cell.db.url, 'saga');
  expiry = workerContext(cell.cellId, cell.db.url, 'expiry');
});
afterAll(async () => {
  await saga?.database.close();
  await expiry?.database.close();
  await cell?.close();
  await identity?.close();
});

describe('expiry racing authorization', () => {
  it(`ends each of ${RUNS} races in exactly one legal state`, async () => {
    const outcomes = { confirmed: 0, expired: 0 };
    for (let run = 0; run < RUNS; run++) {
      const { body } = await placeHold(cell.api.services.ctx, {
        eventId: event.eventId,
        userId: `racer-${run}`,
        idempotencyKey: randomUUID(),
        seatIds: [event.seats[run]!.id],
        correlationId: `race-${run}`,
      });
      const paymentIntentId = await recordPaymentIntent(cell, body.orderId, 5_000);
      // The hold lapses a few milliseconds from now: who wins is up to the scheduler.
      await cell.db.query(`UPDATE holds SET expires_at = now() + make_interval(secs => $2) WHERE id = $1`, [
        body.holdId,
        (Math.random() * 6) / 1000,
      ]);
      await new Promise((r) => setTimeout(r, Math.random() * 5));
      const authorized = envelope(cell.cellId, 'PaymentAuthorized', body.orderId, {
        orderId: body.orderId,
        paymentIntentId,
        amount: 5_000,
      });
      await Promise.all([
        withWriteTx(saga, (tx) =>
          sagaHandlers.PaymentAuthorized!(tx, authorized as never, {
            cellId: cell.cellId,
            correlationId: authorized.correlationId,
            causationId: authorized.eventId,
          }),
        ),
        // The expiry worker may need a second pass if the saga held the order when it looked.
        expireBatch(expiry, 10).then(() => expireBatch(expiry, 10)),
      ]);

      const [order] = await cell.db.query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [
        body.orderId,
      ]);
      const [hold] = await cell.db.query<{ status: string }>('SELECT status FROM holds WHERE id = $1', [body.holdId]);
      const events = (
        await cell.db.query<{ event_type: string }>('SELECT event_type FROM outbox WHERE aggregate_id = $1', [
          body.orderId,
        ])
      ).map((e) => e.event_type);
      const liveSeats = await cell.db.query('SELECT 1 FROM hold_seats WHERE hold_id = $1 AND released_at IS NULL', [
        body.holdId,
      ]);

      if (order!.status === 'confirmed') {
        outcomes.confirmed++;
        expect(hold!.status).toBe('confirmed');
        expect(events).toContain('CaptureRequested');
        expect(events).not.toContain('HoldExpired');
        expect(events).not.toContain('AuthorizationCancelRequested');
        expect(liveSeats).toHaveLength(1);
      } else {
        outcomes.expired++;
        expect(order!.status).toBe('expired');
        expect(hold!.status).toBe('expired');
        expect(events).toContain('HoldExpired');
        expect(events.filter((e) => e === 'AuthorizationCancelRequested')).toHaveLength(1);
        expect(events).not.toContain('CaptureRequested');
        expect(liveSeats).toHaveLength(0);
      }
    }
    // Both outcomes must really have occurred, or the race was not a race.
    expect(outcomes.confirmed).toBeGreaterThan(0);
    expect(outcomes.expired).toBeGreaterThan(0);
    console.log('expiry race outcomes', outcomes);
  });
});
