import { randomUUID } from 'node:crypto';
import type { TestCell } from './cell';
import type { TestDevice } from './device';
import type { TestIdentity } from './identity';

/**
 * A buyer as the cell sees one: a buyer JWT, an admission token for one event, retries by key.
 * Requests go to the cell itself, or through an edge router when `via` is its URL. With `device`, the admission
 * token is bound to its key (cnf.jkt) and every hold carries a fresh DPoP proof by it.
 */
export async function admittedBuyer(
  identity: TestIdentity,
  cell: TestCell,
  eventId: string,
  userId = `buyer-${randomUUID()}`,
  via: string = cell.url,
  device?: TestDevice,
) {
  const bearer = await identity.buyerToken(userId);
  const admission = await identity.admissionToken({
    sub: userId,
    eventId,
    purchaseCell: cell.cellId,
    ...(device ? { jkt: device.jkt } : {}),
  });
  const holdsUrl = `${via}/events/${eventId}/holds`;
  const headers = async (key: string, extra: Record<string, string> = {}) => ({
    authorization: `Bearer ${bearer}`,
    'x-admission-token': admission,
    ...(device ? { dpop: await device.proof('POST', holdsUrl, admission) } : {}),
    'idempotency-key': key,
    'content-type': 'application/json',
    ...extra,
  });
  return {
    userId,
    bearer,
    admission,
    hold: async (seatIds: string[], key: string = randomUUID(), extra?: Record<string, string>) =>
      fetch(holdsUrl, {
        method: 'POST',
        headers: await headers(key, extra),
        body: JSON.stringify({ seatIds }),
      }),
    holdRaw: async (body: string, key: string = randomUUID(), extra?: Record<string, string>) =>
      fetch(holdsUrl, { method: 'POST', headers: await headers(key, extra), body }),
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
