/**
 * The webhook storm's deliveries: for each PaymentIntent, the events Stripe sends about it, each
 * delivered between 1 and `maxDeliveries` times, all shuffled (a duplicate may arrive before its
 * original's neighbours, a succeeded before its amount_capturable_updated). Deterministic for a
 * given `seed`, and free of Node imports: the k6 script builds the same list.
 */
const TYPES = ['payment_intent.amount_capturable_updated', 'payment_intent.succeeded'] as const;

export function stormDeliveries(intents: string[], maxDeliveries: number, seed: string, cellId?: string): string[] {
  let state = [...seed].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7);
  // A small linear congruential generator: reproducible and the same in k6 and Node.
  const random = () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
  const deliveries: string[] = [];
  const created = Math.floor(Date.now() / 1000);
  intents.forEach((pi, n) => {
    TYPES.forEach((type, t) => {
      const payload = JSON.stringify({
        id: `evt_storm_${seed}_${n}_${t}`,
        object: 'event',
        type,
        created: created + t,
        livemode: false,
        api_version: '2025-01-27.acacia',
        data: {
          object: {
            id: pi,
            object: 'payment_intent',
            status: type === 'payment_intent.succeeded' ? 'succeeded' : 'requires_capture',
            ...(cellId ? { metadata: { cellId } } : {}),
          },
        },
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
