import { randomUUID } from 'node:crypto';
import type { EventLoad } from '@onsale/contracts';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBundled } from '../../test/support/bundled';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { dropCellTopics, eventually, kafkaBrokers, provisionCellTopics, uniqueCellId } from '../../test/support/kafka';
import { envelope, inject, recordPaymentIntent } from '../../test/support/saga';
import { eventLoad, loadIntoCell } from '../../test/support/seed';
import { serviceEnv } from '../../test/support/services';
import { startCellWorkers, ticketKeyJson } from '../../test/support/workers';
import { placeHold } from '../src/holds/place-hold';
import { createTicketStore, TicketStoreConfig } from '../src/tickets/store';

/*
 * The ticket worker as its own process (cell/src/tickets/main.ts), killed between issuing the
 * tickets (committed, TicketIssued in the outbox) and uploading their PDF: the next worker ends
 * with the PDF stored, and the tickets are the ones issued before the crash.
 */

const cellId = uniqueCellId('tcrash');
const services = serviceEnv();
const storeEnv = {
  TICKETS_BUCKET: `tickets-${cellId}`,
  S3_ENDPOINT: services.S3_ENDPOINT!,
  S3_REGION: services.S3_REGION!,
  S3_ACCESS_KEY_ID: services.S3_ACCESS_KEY_ID!,
  S3_SECRET_ACCESS_KEY: services.S3_SECRET_ACCESS_KEY!,
};
const store = createTicketStore(TicketStoreConfig.parse(storeEnv));

let identity: TestIdentity;
let cell: TestCell;
let event: EventLoad;
let relay: Awaited<ReturnType<typeof startCellWorkers>>;
let ticketKey: string;

beforeAll(async () => {
  ticketKey = await ticketKeyJson('tickets-crash-1');
  identity = await startIdentity();
  cell = await startTestCell(identity, { cellId });
  await provisionCellTopics(cellId);
  event = await loadIntoCell(cell, eventLoad(6, { name: 'Crash Test Dummies' }));
  relay = await startCellWorkers(cellId, cell.db.url, { relay: true });
}, 60_000);
afterAll(async () => {
  await relay?.stop();
  await cell?.close();
  await identity?.close();
  await dropCellTopics(cellId);
});

const worker = (extra: Record<string, string> = {}) =>
  startBundled(
    'cell/src/tickets/main.ts',
    {
      CELL_ID: cellId,
      DATABASE_URL: cell.db.url,
      KAFKA_BROKERS: kafkaBrokers().join(','),
      KAFKA_SESSION_TIMEOUT_MS: '6000',
      LOG_LEVEL: 'error',
      TICKET_SIGNING_KEY: ticketKey,
      ...storeEnv,
      ...extra,
    },
    { capture: true },
  );

describe('ticket worker crash', () => {
  it('killed after issuing and before the upload: the restarted worker stores the PDF of the same tickets', async () => {
    const seats = event.seats.slice(0, 3).map((s) => s.id);
    const { body } = await placeHold(cell.api.services.ctx, {
      eventId: event.eventId,
      userId: `fan-${randomUUID()}`,
      idempotencyKey: randomUUID(),
      seatIds: seats,
      correlationId: randomUUID(),
    });
    const orderId = body.orderId as string;
    await cell.db.query(`UPDATE holds SET status = 'confirmed' WHERE id = $1`, [body.holdId]);
    await recordPaymentIntent(cell, orderId, 15_000);
    await cell.db.query(`UPDATE orders SET status = 'paid' WHERE id = $1`, [orderId]);

    const crashing = await worker({ FAILPOINTS: 'tickets.before-pdf-upload=crash' });
    await inject(
      relay.broker,
      cellId,
      envelope(cellId, 'TicketIssueRequested', orderId, { orderId, eventId: event.eventId, seatIds: seats }),
    );
    expect(await crashing.exited).toBe(137);
    expect(crashing.output.join('')).toContain('failpoint tickets.before-pdf-upload: crash');

    const issued = await cell.db.query<{ id: string; token: string }>(
      'SELECT id, token FROM tickets WHERE order_id = $1 ORDER BY id',
      [orderId],
    );
    expect(issued).toHaveLength(3);
    const key = store.keys.orderPdf(event.eventId, orderId);
    expect(await store.exists(key)).toBe(false);

    const restarted = await worker();
    try {
      await eventually(() => store.exists(key), 'the PDF after the restart', 60_000);
    } finally {
      await restarted.stop();
    }
    expect((await PDFDocument.load((await store.get(key))!)).getPageCount()).toBe(3);
    // The tickets are those issued before the crash: the replay signed nothing new.
    expect(await cell.db.query('SELECT id, token FROM tickets WHERE order_id = $1 ORDER BY id', [orderId])).toEqual(
      issued,
    );
  });
});
