import type { Logger } from '@onsale/contracts';
import { metrics } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import { isUniqueViolation } from '../db/tx';
import { PermanentError } from '../errors';
import { numberGaUnits } from '../holds/ga-units';
import type { Handlers } from '../messaging/consumer-runner';
import { appendEvent } from '../outbox/append';
import { type TicketSigner, ticketIdFor } from './signing';

/**
 * Issues one ticket per seat and per general-admission place of a paid order. Ids derive from (order, seat), so a replay
 * inserts nothing new; the unique index on tickets(seat_id) refuses a second ticket for a seat
 * under any order, and that refusal is an alarm (an oversell), not a retry.
 */
export function ticketHandlers(sign: TicketSigner, log: Logger): Handlers {
  return {
    async TicketIssueRequested(tx, { payload }, cause) {
      const order = await tx.execute<{ status: string; user_id: string }>(
        sql`SELECT status, user_id FROM orders WHERE id = ${payload.orderId} FOR SHARE`,
      );
      const status = order.rows[0]?.status;
      // The event was cancelled after payment: the order is being refunded and gets no tickets.
      if (status === 'refunding' || status === 'refunded') return;
      if (status !== 'paid' && status !== 'ticketed') {
        throw new PermanentError(`order ${payload.orderId} is ${status ?? 'missing'}, not paid`);
      }
      const seats = await tx.execute<{ id: string; label: string; section: string; row: string }>(
        sql`SELECT id, label, section, row FROM seats WHERE id = ANY(${sql.param(payload.seatIds)}::uuid[]) ORDER BY id`,
      );
      const ticketIds: string[] = [];
      for (const seat of seats.rows) {
        const tid = ticketIdFor(payload.orderId, seat.id);
        const token = await sign({
          tid,
          orderId: payload.orderId,
          eventId: payload.eventId,
          seatId: seat.id,
          seat: { label: seat.label, section: seat.section, row: seat.row },
          cell: cause.cellId,
        });
        try {
          await tx.execute(sql`SAVEPOINT ticket`);
          await tx.execute(sql`
            INSERT INTO tickets (id, order_id, event_id, seat_id, user_id, token)
            VALUES (${tid}, ${payload.orderId}, ${payload.eventId}, ${seat.id}, ${order.rows[0]!.user_id}, ${token})
            ON CONFLICT (id) DO NOTHING`);
          await tx.execute(sql`RELEASE SAVEPOINT ticket`);
        } catch (err) {
          if (!isUniqueViolation(err, 'tickets_seat_uq')) throw err;
          await tx.execute(sql`ROLLBACK TO SAVEPOINT ticket`);
          metrics.oversell.inc();
          log.error('second ticket refused for a seat', {
            alarm: 'ticket_uniqueness_violation',
            orderId: payload.orderId,
            seatId: seat.id,
          });
          throw new PermanentError(`seat ${seat.id} already has a ticket under another order`);
        }
        ticketIds.push(tid);
      }
      // General-admission places: one ticket per place, naming the area and its unit number.
      for (const ga of await numberGaUnits(tx, payload.orderId)) {
        const tid = ticketIdFor(payload.orderId, `${ga.areaId}:${ga.index}`);
        const claims = { tid, orderId: payload.orderId, eventId: payload.eventId, cell: cause.cellId };
        const token = await sign({ ...claims, ga: { areaId: ga.areaId, area: ga.area, unit: ga.unit } });
        await tx.execute(sql`
          INSERT INTO tickets (id, order_id, event_id, ga_area_id, unit_no, user_id, token)
          VALUES (${tid}, ${payload.orderId}, ${payload.eventId}, ${ga.areaId}, ${ga.unit}, ${order.rows[0]!.user_id}, ${token})
          ON CONFLICT (id) DO NOTHING`);
      }
      const gaTickets = await tx.execute<{ id: string }>(
        sql`SELECT id FROM tickets WHERE order_id = ${payload.orderId} AND ga_area_id IS NOT NULL ORDER BY id`,
      );
      ticketIds.push(...gaTickets.rows.map((t) => t.id));
      await appendEvent(tx, cause, 'TicketIssued', payload.orderId, { orderId: payload.orderId, ticketIds });
    },
  };
}
