/**
 * What the k6 scripts share: where the platform is (environment), buyer tokens from its identity
 * issuer, the metric the scenarios' error threshold reads, and Stripe's webhook signature.
 *
 *   BASE_URL       the edge router (default http://127.0.0.1:8080)
 *   IDENTITY_URL   an issuer answering POST /tokens with a buyer token (the local platform's dev issuer;
 *                  against a deployed platform, a test issuer the platform trusts)
 *   EVENT_ID       the event under load (its onsale open, its waiting room releasing)
 */
import { sleep } from 'k6';
import crypto from 'k6/crypto';
import http, { type RefinedResponse, type ResponseType } from 'k6/http';
import { Rate } from 'k6/metrics';
import type { Scenario } from '../scenarios/definition.ts';

export const BASE_URL = __ENV.BASE_URL ?? 'http://127.0.0.1:8080';
export const IDENTITY_URL = __ENV.IDENTITY_URL ?? 'http://127.0.0.1:4100';

/** 1 for an answer the scenario does not expect (or no answer), 0 otherwise: the error threshold's metric. */
export const unexpectedStatus = new Rate('unexpected_status');

export function record(scenario: Scenario, res: RefinedResponse<ResponseType | undefined>): void {
  unexpectedStatus.add(!scenario.expectedStatuses.includes(res.status));
}

export function buyerToken(sub: string): string {
  const res = http.post(`${IDENTITY_URL}/tokens`, JSON.stringify({ kind: 'buyer', sub }), {
    headers: { 'content-type': 'application/json' },
    tags: { name: 'setup:token' },
  });
  if (res.status !== 200) throw new Error(`identity issuer: ${res.status} ${res.body}`);
  return (res.json() as { token: string }).token;
}

export function eventId(): string {
  if (!__ENV.EVENT_ID) throw new Error('set EVENT_ID: the event under load');
  return __ENV.EVENT_ID;
}

/** Joins the waiting room and polls until admitted; the admission token. */
export function admit(event: string, bearer: string, timeoutSeconds = 120): string {
  const auth = { headers: { authorization: `Bearer ${bearer}` } };
  http.post(`${BASE_URL}/events/${event}/queue`, null, { ...auth, tags: { name: 'setup:join' } });
  for (let i = 0; i < timeoutSeconds * 2; i++) {
    const me = http.get(`${BASE_URL}/events/${event}/queue/me`, { ...auth, tags: { name: 'setup:poll' } });
    const admission = (me.json() as { admission?: { token: string } | null }).admission;
    if (admission) return admission.token;
    // k6's sleep is in the global scope of its runtime.
    sleep(0.5);
  }
  throw new Error('not admitted in time');
}

/** Stripe's `Stripe-Signature` header for a payload: HMAC-SHA256 of `timestamp.payload` with the endpoint's secret. */
export function stripeSignature(payload: string, secret: string, timestamp = Math.floor(Date.now() / 1000)): string {
  return `t=${timestamp},v1=${crypto.hmac('sha256', secret, `${timestamp}.${payload}`, 'hex')}`;
}
