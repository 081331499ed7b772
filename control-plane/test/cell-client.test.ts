import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CellCallError, cellCallRefusal, createHttpCellClient } from '../src/cells/client';

/** A cell's internal API as far as the client sees it: it records each request line and answers by path. */
let server: Server;
let cell: { id: string; baseUrl: string };
const seen: string[] = [];
const client = createHttpCellClient({ token: 'test-cell-internal-token-0123456789', timeoutMs: 2000 });

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const eventId = 'evt/1 ?#%';
    const answer = req.url?.endsWith('/sales')
      ? {
          eventId,
          status: 'paused',
          canceled: { holdsReleased: 0, refundsRequested: 0, ticketsVoided: 0, pendingCapture: 0 },
        }
      : req.url?.includes('/sales-freeze')
        ? { eventId, frozen: req.method === 'PUT' }
        : req.url?.includes('/refund')
          ? { orderId: '5d0c2a9e-2f1b-4c55-8f7e-6a1b2c3d4e5f', status: 'refunding' }
          : { eventId, seats: 0, created: true };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cell = { id: 'cell-x', baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
});
afterAll(() => new Promise((r) => server.close(r)));

describe("the control plane's one cell client", () => {
  it('puts an event id that needs encoding into one path segment, on every event route', async () => {
    const eventId = 'evt/1 ?#%';
    const encoded = 'evt%2F1%20%3F%23%25';
    seen.length = 0;
    await client.setSales(cell, eventId, { status: 'paused' });
    await client.loadEvent(cell, { eventId } as Parameters<typeof client.loadEvent>[1]);
    await client.freeze(cell, eventId);
    await client.unfreeze(cell, eventId, 'on_sale');
    await client.refundOrder(cell, eventId, '5d0c2a9e-2f1b-4c55-8f7e-6a1b2c3d4e5f', { reason: 'cannot come' });
    expect(seen).toEqual([
      `PUT /internal/events/${encoded}/sales`,
      `PUT /internal/events/${encoded}`,
      `PUT /internal/events/${encoded}/sales-freeze`,
      `DELETE /internal/events/${encoded}/sales-freeze?status=on_sale`,
      `POST /internal/events/${encoded}/orders/5d0c2a9e-2f1b-4c55-8f7e-6a1b2c3d4e5f/refund`,
    ]);
  });

  it('names an unreachable cell, which callers see as unavailable (503), not as a conflict', async () => {
    const gone = { id: 'cell-gone', baseUrl: 'http://127.0.0.1:9' };
    const err = await client.setSales(gone, 'e1', { status: 'paused' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CellCallError);
    expect(err).toMatchObject({ status: null, cellId: 'cell-gone' });
    const refusal = cellCallRefusal(err as CellCallError);
    expect(refusal).toMatchObject({ code: 'cell_unavailable', status: 503, details: { cellId: 'cell-gone' } });
    expect(cellCallRefusal(new CellCallError('refused', 409, {}, 'cell-x'))).toMatchObject({ code: 'conflict' });
  });
});
