import type { OrderView } from '@onsale/contracts';
import Stripe from 'stripe';
import { devToken } from '../../scripts/local-platform/demo';
import type { Platform } from '../../scripts/local-platform/launch';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A buyer going through the edge router, as a browser would: queue, admission, hold, pay. */
export async function shopper(platform: Platform, eventId: string, name: string) {
  const router = platform.urls.router;
  const bearer = await devToken(platform.urls.identity, { kind: 'buyer', sub: name });
  const auth = { authorization: `Bearer ${bearer}` };
  const stripeUrl = new URL(platform.urls.stripe);
  const stripe = new Stripe(platform.stripeKey, {
    host: stripeUrl.hostname,
    port: Number(stripeUrl.port),
    protocol: 'http',
    maxNetworkRetries: 2,
  });
  let admission: { token: string; purchaseCell: string } | null = null;

  return {
    name,
    bearer,
    get admission() {
      return admission;
    },
    async admit(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      // A 503 (the room being restored, a cell restarting) is retried after its Retry-After, as the page does.
      for (;;) {
        const joined = await fetch(`${router}/events/${eventId}/queue`, { method: 'POST', headers: auth });
        if (joined.ok) break;
        if (joined.status !== 503 || Date.now() > deadline)
          throw new Error(`${name} join: ${joined.status} ${await joined.text()}`);
        await sleep(Number(joined.headers.get('retry-after') ?? 1) * 1000);
      }
      while (Date.now() < deadline) {
        const res = await fetch(`${router}/events/${eventId}/queue/me`, { headers: auth }).catch(() => null);
        if (res?.ok) {
          const me = (await res.json()) as { admission: { token: string; purchaseCell: string } | null };
          if (me.admission) {
            admission = me.admission;
            return admission;
          }
        }
        await sleep(600);
      }
      throw new Error(`${name} was not admitted in time`);
    },
    hold(seatIds: string[], key: string, admissionToken = admission?.token ?? '') {
      return fetch(`${router}/events/${eventId}/holds`, {
        method: 'POST',
        headers: {
          ...auth,
          'x-admission-token': admissionToken,
          'idempotency-key': key,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ seatIds }),
      });
    },
    async order(orderId: string): Promise<OrderView> {
      const res = await fetch(`${router}/events/${eventId}/orders/${orderId}`, { headers: auth });
      if (!res.ok) throw new Error(`${name} order: ${res.status} ${await res.text()}`);
      return (await res.json()) as OrderView;
    },
    /** Waits until the order reaches one of `statuses` (through the router). */
    async until(orderId: string, statuses: string[], timeoutMs = 90_000): Promise<OrderView> {
      const deadline = Date.now() + timeoutMs;
      let last: OrderView | undefined;
      while (Date.now() < deadline) {
        try {
          last = await this.order(orderId);
          if (statuses.includes(last.status)) return last;
        } catch {}
        await sleep(300);
      }
      throw new Error(`${name}: order ${orderId} stuck in ${last?.status} (wanted ${statuses.join('|')})`);
    },
    /** The payment form: waits until the payment worker has created the intent and the order shows its client secret. */
    async paymentForm(orderId: string, timeoutMs = 30_000) {
      const view = await this.until(orderId, ['pending_payment'], timeoutMs);
      let intent = view.payment;
      const deadline = Date.now() + timeoutMs;
      while (!intent?.clientSecret && Date.now() < deadline) {
        await sleep(200);
        // A poll that fails (a keep-alive socket the server closed, a 503 while a cell restarts) is
        // retried, as a payment page would.
        intent = (await this.order(orderId).catch(() => null))?.payment ?? intent;
      }
      if (!intent?.clientSecret) throw new Error(`${name}: no payment intent for ${orderId}`);
      return { paymentIntentId: intent.paymentIntentId, clientSecret: intent.clientSecret };
    },
    /** Pays as the browser does once the payment worker has created the intent. */
    async pay(orderId: string, paymentMethod: 'pm_card_visa' | 'pm_card_chargeDeclined', timeoutMs = 30_000) {
      const { paymentIntentId } = await this.paymentForm(orderId, timeoutMs);
      await this.confirm(paymentIntentId, paymentMethod);
      return paymentIntentId;
    },
    /** The browser's part with Stripe alone: no call to the platform. A decline is an answer, not an error. */
    async confirm(paymentIntentId: string, paymentMethod: 'pm_card_visa' | 'pm_card_chargeDeclined') {
      try {
        await stripe.paymentIntents.confirm(paymentIntentId, { payment_method: paymentMethod });
      } catch (err) {
        if (!(err instanceof Stripe.errors.StripeCardError)) throw err;
      }
    },
  };
}
export type Shopper = Awaited<ReturnType<typeof shopper>>;
