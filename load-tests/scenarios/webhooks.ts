/**
 * The webhook storm's deliveries: for each captured PaymentIntent (as Stripe returns it), the two events
 * Stripe sent about it, authorized then captured, each delivered between 1 and `maxDeliveries` times,
 * all shuffled (a duplicate may arrive before its original's neighbours, a succeeded before its
 * amount_capturable_updated). The events tell only what happened, so the storm tests the deduplication
 * and ordering, not the cell's trust in a forged payload. Deterministic for a given `seed`, and free of
 * Node imports: the k6 script builds the same list.
 */
const TYPES = ['payment_intent.amount_capturable_updated', 'payment_intent.succeeded'] as const;

/** A PaymentIntent as Stripe's API returns it; the storm needs its id and amount. */
export type Intent = { id: string; amount: number } & Record<string, unknown>;

export function stormDeliveries(intents: Intent[], maxDeliveries: number, seed: string): string[] {
  let state = [...seed].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7);
  // A small linear congruential generator: reproducible and the same in k6 and Node.
  const random = () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
  const deliveries: string[] = [];
  const created = Math.floor(Date.now() / 1000);
  intents.forEach((intent, n) => {
    TYPES.forEach((type, t) => {
      // The intent as it was when Stripe sent the event: authorized (nothing received yet), then captured.
      const object =
        type === 'payment_intent.succeeded'
          ? { ...intent, status: 'succeeded', amount_capturable: 0, amount_received: intent.amount }
          : { ...intent, status: 'requires_capture', amount_capturable: intent.amount, amount_received: 0 };
      const payload = JSON.stringify({
        id: `evt_storm_${seed}_${n}_${t}`,
        object: 'event',
        type,
        created: created + t,
        livemode: false,
        api_version: '2025-01-27.acacia',
        data: { object },
      });
      const copies = 1 + Math.floor(random() * maxDeliveries);
      for (let c = 0; c < copies; c++) deliveries.push(payload);
    });
  });
  for (let i = deliveries.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [deliveries[i], deliveries[j]] = [deliveries[j]!, deliveries[i]!];
  }
  return deliveries;
}
