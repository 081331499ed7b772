import { createRoute, z } from '@hono/zod-openapi';
import { eventVoidList } from '../../tickets/order-tickets';
import type { CellApp } from '../app';
import { errors } from './schemas';
import { ScannerParams, TicketKeySet } from './tickets.schemas';

/*
 * What a door scanner downloads before the doors open (`scan-ticket --sync`): the keys tickets are
 * signed with and the event's signed void list. Both are public: the keys by nature, the list because
 * it holds opaque ticket ids and nothing about buyers, and it is signed, so a cache or a proxy cannot
 * take a voided ticket off it.
 */
export const ticketKeysRoute = createRoute({
  method: 'get',
  path: '/events/{eventId}/tickets/keys',
  summary: "The public keys that verify this cell's tickets and void lists (JWKS)",
  request: { params: ScannerParams },
  responses: {
    200: { description: 'The key set', content: { 'application/json': { schema: TicketKeySet } } },
    400: errors[400],
  },
});

export const voidListRoute = createRoute({
  method: 'get',
  path: '/events/{eventId}/tickets/voids',
  summary: "The event's voided tickets, as a JWT signed with the ticket key (typ ticket-voids+jwt)",
  request: { params: ScannerParams },
  responses: {
    200: { description: 'The signed void list', content: { 'application/jwt': { schema: z.string() } } },
    400: errors[400],
    404: errors[404],
    503: errors[503],
  },
});

export function registerTicketScanner(app: CellApp) {
  app.openapi(ticketKeysRoute, (c) => {
    c.header('Cache-Control', 'public, max-age=300');
    return c.json(TicketKeySet.parse(c.get('services').ticketKeys), 200);
  });
  app.openapi(voidListRoute, async (c) => {
    const list = await eventVoidList(c.get('services').ticketStore, c.req.valid('param').eventId);
    return c.body(list, 200, { 'content-type': 'application/jwt', 'cache-control': 'public, max-age=30' });
  });
}
