import { createHmac } from 'node:crypto';

/**
 * The `Stripe-Signature` header for a webhook payload, computed as Stripe does: an HMAC-SHA256,
 * keyed with the endpoint's whole signing secret (`whsec_...`), over `<timestamp>.<raw body>`. While a
 * rolled secret is still live, Stripe sends one `v1` per secret, so a receiver holding either verifies.
 */
export function signatureHeader(payload: string, secrets: string | readonly string[], timestamp: number): string {
  const v1 = (typeof secrets === 'string' ? [secrets] : secrets).map(
    (secret) => `v1=${createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex')}`,
  );
  return `t=${timestamp},${v1.join(',')}`;
}
