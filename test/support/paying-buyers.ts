import { randomUUID } from 'node:crypto';
import type { Shopper } from './shopper';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Ack {
  orderId: string;
  at: number;
}

/**
 * Buyers who hold a seat and pay for it, one order after another. A refused or failed hold is retried with
 * the same Idempotency-Key after 200 ms (a client does); a payment that cannot start is left to expire.
 */
export function payingBuyers(router: string, eventId: string, list: Shopper[], seatsEach: string[][]) {
  const acked: Ack[] = []; // 202 answers: the order the buyer was told exists
  const paid: Ack[] = []; // Stripe authorized the buyer's payment for it
  let stopped = false;
  const runs = list.map(async (b, i) => {
    const seats = seatsEach[i]!;
    for (let n = 0; !stopped && n < seats.length; n++) {
      const key = randomUUID();
      let orderId: string | undefined;
      while (!stopped && !orderId) {
        const res = await b.hold([seats[n]!], key).catch(() => null);
        if (res?.status === 202) {
          orderId = ((await res.json()) as { orderId: string }).orderId;
          acked.push({ orderId, at: Date.now() });
        } else if (res?.status === 409)
          break; // the seat went to someone else
        else await sleep(200);
      }
      if (!orderId && i === 0) {
        // The probe's seat is still held by a release that failed in the failover: it frees at expiry.
        await sleep(500);
        n--;
        continue;
      }
      if (!orderId) continue;
      if (i === 0) {
        // The first buyer is the probe: it releases what it holds, so the per-buyer limit never stops it.
        await fetch(`${router}/events/${eventId}/orders/${orderId}/hold`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${b.bearer}`, 'x-admission-token': b.admission!.token },
        }).catch(() => null);
        n--;
        continue;
      }
      try {
        const pi = await b.pay(orderId, 'pm_card_visa', 10_000);
        if (pi) paid.push({ orderId, at: Date.now() });
      } catch {}
    }
  });
  return {
    acked,
    paid,
    async stop() {
      stopped = true;
      await Promise.all(runs);
    },
  };
}
