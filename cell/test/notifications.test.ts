import { randomUUID } from 'node:crypto';
import type { EventLoad } from '@onsale/contracts';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBundled } from '../../test/support/bundled';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { dropCellTopics, eventually, kafkaBrokers, provisionCellTopics, uniqueCellId } from '../../test/support/kafka';
import { mailbox, mailServer } from '../../test/support/mailbox';
import { envelope, inject, recordPaymentIntent } from '../../test/support/saga';
import { eventLoad, loadIntoCell } from '../../test/support/seed';
import { startCellWorkers, ticketKeyJson } from '../../test/support/workers';
import { placeHold } from '../src/holds/place-hold';

/*
 * The notification worker against the real ledger, the cell's Kafka topics and the local SMTP server
 * (scripts/smtp-mailbox.ts, started by scripts/services): an issued order's buyer gets one confirmation with the
 * tickets PDF however often TicketIssued arrives, a refunded order a refund notice, and a worker killed between its
 * claim and the send leaves the restarted worker to send the one confirmation. Killed after the mail server accepted
 * the message, the restarted worker sends it again with the same Message-ID: the documented at-least-once gap.
 */

const cellId = uniqueCellId('notify');
let identity: TestIdentity;
let cell: TestCell;
let event: EventLoad;
let workers: Awaited<ReturnType<typeof startCellWorkers>>;
let seatsTaken = 0;

beforeAll(async () => {
  identity = await startIdentity();
  cell = await startTestCell(identity, { cellId });
  await provisionCellTopics(cellId);
  event = await loadIntoCell(cell, eventLoad(12, { name: 'The Postal Service' }));
  workers = await startCellWorkers(
    cellId,
    cell.db.url,
    { relay: true, tickets: true },
    await ticketKeyJson('notify-1'),
  );
}, 60_000);
afterAll(async () => {
  await workers?.stop();
  await cell?.close();
  await identity?.close();
  await dropCellTopics(cellId);
});

const buyerAddress = () => `fan-${randomUUID().slice(0, 8)}@buyers.test`;

/** A paid order of `seats` seats whose tickets the ticket worker issued (TicketIssued is in the outbox). */
async function issuedOrder(buyerEmail: string | undefined, seats: number) {
  const seatIds = event.seats.slice(seatsTaken, seatsTaken + seats).map((s) => s.id);
  seatsTaken += seats;
  const { body } = await placeHold(cell.api.services.ctx, {
    eventId: event.eventId,
    userId: `user-${randomUUID()}`,
    buyerEmail,
    idempotencyKey: randomUUID(),
    seatIds,
    correlationId: randomUUID(),
  });
  const orderId = body.orderId as string;
  await cell.db.query(`UPDATE holds SET status = 'confirmed' WHERE id = $1`, [body.holdId]);
  await recordPaymentIntent(cell, orderId, 10_000 * seats);
  await cell.db.query(`UPDATE orders SET status = 'paid' WHERE id = $1`, [orderId]);
  await inject(
    workers.broker,
    cellId,
    envelope(cellId, 'TicketIssueRequested', orderId, { orderId, eventId: event.eventId, seatIds }),
  );
  const issued = await eventually(
    async () =>
      (
        await cell.db.query<{ envelope: ReturnType<typeof envelope<'TicketIssued'>> }>(
          `SELECT envelope FROM outbox WHERE aggregate_id = $1 AND event_type = 'TicketIssued'`,
          [orderId],
        )
      )[0]?.envelope,
    'the tickets issued',
  );
  return { orderId, ticketIssued: issued };
}

const notices = (orderId: string) =>
  cell.db.query<{ kind: string; status: string; attempts: number; message_id: string | null }>(
    'SELECT kind, status, attempts, message_id FROM notifications WHERE order_id = $1 ORDER BY kind',
    [orderId],
  );

const notifierProcess = (extra: Record<string, string> = {}) =>
  startBundled(
    'cell/src/notifications/main.ts',
    {
      CELL_ID: cellId,
      DATABASE_URL: cell.db.url,
      KAFKA_BROKERS: kafkaBrokers().join(','),
      KAFKA_SESSION_TIMEOUT_MS: '6000',
      LOG_LEVEL: 'error',
      SMTP_URL: mailServer().smtpUrl,
      MAIL_FROM: 'Onsale tickets <tickets@onsale.test>',
      NOTIFY_CLAIM_LEASE_MS: '2000',
      ...extra,
    },
    { capture: true },
  );

describe('notifications', () => {
  it('sends one confirmation with the tickets PDF when TicketIssued arrives three times, and a refund notice', async () => {
    const notifier = await startCellWorkers(cellId, cell.db.url, { notifications: true });
    try {
      const address = buyerAddress();
      const inbox = mailbox(address);
      const { orderId, ticketIssued } = await issuedOrder(address, 3);

      const [confirmation] = await eventually(async () => {
        const got = await inbox.messages();
        return got.length ? got : null;
      }, 'the confirmation');
      expect(confirmation!.subject).toBe('Your tickets: The Postal Service');
      expect(confirmation!.messageId).toBe(`<order_confirmation.${orderId}@${cellId}.onsale.invalid>`);
      expect(confirmation!.attachments).toEqual([
        expect.objectContaining({ n: 0, filename: `tickets-${orderId}.pdf`, contentType: 'application/pdf' }),
      ]);
      const pdf = await PDFDocument.load(await inbox.attachment(confirmation!, 0));
      expect(pdf.getPageCount()).toBe(3);

      // Redelivered as the relay would after a crash (the same event twice), and a second TicketIssued for the order.
      await inject(workers.broker, cellId, ticketIssued, 2);
      await inject(workers.broker, cellId, envelope(cellId, 'TicketIssued', orderId, ticketIssued.payload));
      // Then the order is refunded: keyed by the order, it is handled after the three deliveries above.
      await cell.db.query(`UPDATE orders SET status = 'refunded' WHERE id = $1`, [orderId]);
      await inject(
        workers.broker,
        cellId,
        envelope(cellId, 'Refunded', orderId, { orderId, paymentIntentId: 'pi_test', refundId: 're_test' }),
      );
      await eventually(async () => (await inbox.messages()).length >= 2, 'the refund notice');
      await eventually(async () => (await notices(orderId))[1]?.status === 'sent', 'the refund notice recorded');

      const received = await inbox.messages();
      expect(received.map((m) => m.subject)).toEqual([
        'Your tickets: The Postal Service',
        'Your refund: The Postal Service',
      ]);
      expect(received[1]!.attachments).toEqual([]);
      expect(await notices(orderId)).toEqual([
        { kind: 'order_confirmation', status: 'sent', attempts: 1, message_id: confirmation!.messageId },
        { kind: 'refund', status: 'sent', attempts: 1, message_id: received[1]!.messageId },
      ]);
    } finally {
      await notifier.stop();
    }
  }, 90_000);

  it('killed after claiming and before sending: the restarted worker sends the one confirmation', async () => {
    const address = buyerAddress();
    const inbox = mailbox(address);
    const crashing = await notifierProcess({ FAILPOINTS: 'notifications.before-send=crash' });
    const { orderId } = await issuedOrder(address, 2);
    expect(await crashing.exited).toBe(137);
    expect(await notices(orderId)).toEqual([
      { kind: 'order_confirmation', status: 'sending', attempts: 1, message_id: null },
    ]);
    expect(await inbox.messages()).toEqual([]);

    const restarted = await notifierProcess();
    try {
      await eventually(async () => (await notices(orderId))[0]?.status === 'sent', 'the confirmation sent', 60_000);
    } finally {
      await restarted.stop();
    }
    const received = await inbox.messages();
    expect(received).toHaveLength(1);
    expect(received[0]!.attachments).toHaveLength(1);
    expect((await notices(orderId))[0]).toMatchObject({ status: 'sent', attempts: 2 });
  }, 120_000);

  it('killed after the server accepted the mail and before recording it: sent again, with the same Message-ID', async () => {
    const address = buyerAddress();
    const inbox = mailbox(address);
    const crashing = await notifierProcess({ FAILPOINTS: 'notifications.after-send=crash' });
    const { orderId } = await issuedOrder(address, 1);
    expect(await crashing.exited).toBe(137);
    expect(await inbox.messages()).toHaveLength(1);

    const restarted = await notifierProcess();
    try {
      await eventually(async () => (await notices(orderId))[0]?.status === 'sent', 'the confirmation recorded', 60_000);
    } finally {
      await restarted.stop();
    }
    const received = await inbox.messages();
    expect(received).toHaveLength(2);
    expect(new Set(received.map((m) => m.messageId))).toEqual(
      new Set([`<order_confirmation.${orderId}@${cellId}.onsale.invalid>`]),
    );
  }, 120_000);

  it("keeps the buyer token's email claim on the order a hold creates, unless its issuer says it is unverified", async () => {
    const hold = async (claims: { email?: string; email_verified?: boolean }) => {
      const userId = `user-${randomUUID()}`;
      const seat = event.seats[seatsTaken++]!.id;
      const res = await fetch(`${cell.url}/events/${event.eventId}/holds`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${await identity.buyerToken(userId, claims)}`,
          'x-admission-token': await identity.admissionToken({
            sub: userId,
            eventId: event.eventId,
            purchaseCell: cellId,
          }),
          'idempotency-key': randomUUID(),
          'content-type': 'application/json',
        },
        body: JSON.stringify({ seatIds: [seat] }),
      });
      expect(res.status).toBe(202);
      const { orderId } = (await res.json()) as { orderId: string };
      return (
        await cell.db.query<{ buyer_email: string | null }>('SELECT buyer_email FROM orders WHERE id = $1', [orderId])
      )[0]!.buyer_email;
    };
    expect(await hold({ email: 'ada@buyers.test' })).toBe('ada@buyers.test');
    expect(await hold({ email: 'ada@buyers.test', email_verified: false })).toBeNull();
    expect(await hold({ email: 'not an address' })).toBeNull();
    expect(await hold({})).toBeNull();
  });

  it('an order placed without an address is recorded as skipped, not retried; a cancelled payment gets its notice', async () => {
    const notifier = await startCellWorkers(cellId, cell.db.url, { notifications: true });
    try {
      const { orderId } = await issuedOrder(undefined, 1);
      await eventually(async () => (await notices(orderId))[0]?.status === 'skipped', 'the notice skipped');
      expect(await notices(orderId)).toEqual([
        { kind: 'order_confirmation', status: 'skipped', attempts: 1, message_id: null },
      ]);

      const address = buyerAddress();
      const { body } = await placeHold(cell.api.services.ctx, {
        eventId: event.eventId,
        userId: `user-${randomUUID()}`,
        buyerEmail: address,
        idempotencyKey: randomUUID(),
        seatIds: [event.seats[seatsTaken++]!.id],
        correlationId: randomUUID(),
      });
      const canceled = body.orderId as string;
      await inject(
        workers.broker,
        cellId,
        envelope(cellId, 'AuthorizationCanceled', canceled, { orderId: canceled, paymentIntentId: 'pi_test' }),
        2,
      );
      await eventually(async () => (await notices(canceled))[0]?.status === 'sent', 'the cancellation notice');
      const received = await mailbox(address).messages();
      expect(received.map((m) => m.subject)).toEqual(['Your order was cancelled: The Postal Service']);
      expect(received[0]!.text).toContain('you have not been charged');
    } finally {
      await notifier.stop();
    }
  }, 60_000);
});
