import { createHmac } from 'node:crypto';

/**
 * The `Stripe-Signature` header for a webhook payload, computed as Stripe does: an HMAC-SHA256,
 * keyed with the endpoint's whole signing secret (`whsec_...`), over `<timestamp>.<raw body>`.
 */
export function signatureHeader(payload: string, secret: string, timestamp: number): string {
  const signature = createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex');
  return `t=${timestamp},v1=${signature}`;
}
