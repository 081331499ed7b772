import { describe, expect } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import { cellTest } from '../../test/support/fixtures';
import { eventLoad, loadIntoCell } from '../../test/support/seed';

const it = cellTest();

describe('region epoch fence', () => {
  it('a writer whose epoch was fenced is refused and writes nothing; readiness drops', async ({ identity, cell }) => {
    const event = await loadIntoCell(cell, eventLoad(5));
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    expect((await buyer.hold([event.seats[0]!.id])).status).toBe(202);
    expect((await fetch(`${cell.url}/readyz`)).status).toBe(200);

    // A promotion elsewhere bumps the epoch; this process still believes in epoch 1.
    await cell.db.query('UPDATE cell_epoch SET epoch = epoch + 1 WHERE cell_id = $1', [cell.cellId]);
    const res = await buyer.hold([event.seats[1]!.id]);
    expect(res.status).toBe(503);
    expect((await res.json()).error.code).toBe('epoch_fenced');
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await cell.db.query('SELECT 1 FROM hold_seats WHERE seat_id = $1', [event.seats[1]!.id])).toEqual([]);
    expect((await fetch(`${cell.url}/readyz`)).status).toBe(503);
  });

  it('serves its OpenAPI document and liveness', async ({ cell }) => {
    const doc = await (await fetch(`${cell.url}/openapi.json`)).json();
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/events/{eventId}/holds',
        '/events/{eventId}/orders/{orderId}',
        '/events/{eventId}/availability',
      ]),
    );
    expect((await fetch(`${cell.url}/healthz`)).status).toBe(200);
  });
});
