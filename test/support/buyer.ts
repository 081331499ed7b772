import { randomUUID } from 'node:crypto';
import type { TestCell } from './cell';
import type { TestIdentity } from './identity';

/**
 * A buyer as the cell sees one: a buyer JWT, an admission token for one event, retries by key.
 * Requests go to the cell itself, or through an edge router when `via` is its URL.
 */
export async function admittedBuyer(
  identity: TestIdentity,
  cell: TestCell,
  eventId: string,
  userId = `buyer-${randomUUID()}`,
  via: string = cell.url,
) {
  const bearer = await identity.buyerToken(userId);
  const admission = await identity.admissionToken({ sub: userId, eventId, purchaseCell: cell.cellId });
  const headers = (key: string, extra: Record<string, string> = {}) => ({
    authorization: `Bearer ${bearer}`,
    'x-admission-token': admission,
    'idempotency-key': key,
    'content-type': 'application/json',
    ...extra,
  });
  return {
    userId,
    bearer,
    admission,
    hold: (seatIds: string[], key: string = randomUUID(), extra?: Record<string, string>) =>
      fetch(`${via}/events/${eventId}/holds`, {
        method: 'POST',
        headers: headers(key, extra),
        body: JSON.stringify({ seatIds }),
      }),
    holdRaw: (body: string, key: string = randomUUID(), extra?: Record<string, string>) =>
      fetch(`${via}/events/${eventId}/holds`, { method: 'POST', headers: headers(key, extra), body }),
    order: (orderId: string) =>
      fetch(`${via}/events/${eventId}/orders/${orderId}`, { headers: { authorization: `Bearer ${bearer}` } }),
    release: (orderId: string) =>
      fetch(`${via}/events/${eventId}/orders/${orderId}/hold`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${bearer}` },
      }),
  };
}
export type Buyer = Awaited<ReturnType<typeof admittedBuyer>>;
