/**
 * Soak: thirty minutes of a steady mix (new buyers joining, queued buyers polling, admitted buyers holding
 * seats): latency and errors must not drift as tables, queues and memory grow. Rates, durations and
 * thresholds: load-tests/scenarios/definition.ts (the Node runner uses the same).
 *
 *   k6 run -e BASE_URL=… -e IDENTITY_URL=… -e EVENT_ID=… -e SEATS=id1,id2,… load-tests/k6/soak.ts
 */
import exec from 'k6/execution';
import http from 'k6/http';
import { k6Scenario, k6Thresholds, SCENARIOS, soakStep } from '../scenarios/definition.ts';
import { admit, BASE_URL, buyerToken, eventId, record } from './lib.ts';

const scenario = SCENARIOS.soak;
const TOKENS = Number(__ENV.TOKENS ?? 2_000);
const ADMITTED = Number(__ENV.ADMITTED ?? 100);

export const options = {
  scenarios: { soak: k6Scenario(scenario) },
  thresholds: k6Thresholds(scenario),
  setupTimeout: '20m',
};

export function setup() {
  const event = eventId();
  const tokens = Array.from({ length: TOKENS }, (_, i) => buyerToken(`k6-soak-${i}`));
  const admitted = tokens.slice(0, ADMITTED).map((bearer) => ({ bearer, admission: admit(event, bearer) }));
  const seats = (__ENV.SEATS ?? '').split(',').filter(Boolean);
  if (seats.length === 0) throw new Error('set SEATS: seat ids the soak holds and releases');
  return { event, tokens, admitted, seats };
}

export default function (data: {
  event: string;
  tokens: string[];
  admitted: { bearer: string; admission: string }[];
  seats: string[];
}) {
  const i = exec.scenario.iterationInTest;
  const step = soakStep(i);
  if (step === 'hold') {
    const buyer = data.admitted[i % data.admitted.length]!;
    const headers = { authorization: `Bearer ${buyer.bearer}`, 'x-admission-token': buyer.admission };
    const seatIds = [data.seats[i % data.seats.length]!];
    const res = http.post(`${BASE_URL}/events/${data.event}/holds`, JSON.stringify({ seatIds }), {
      headers: { ...headers, 'idempotency-key': `k6-soak-${i}`, 'content-type': 'application/json' },
      tags: { name: 'hold' },
    });
    record(scenario, res);
    // Then its release: the soak keeps seats moving instead of selling the event out.
    const orderId = res.status === 202 ? (res.json() as { orderId: string }).orderId : null;
    if (orderId) {
      record(
        scenario,
        http.del(`${BASE_URL}/events/${data.event}/orders/${orderId}/hold`, null, {
          headers,
          tags: { name: 'release' },
        }),
      );
    }
    return;
  }
  const auth = { headers: { authorization: `Bearer ${data.tokens[i % data.tokens.length]!}` } };
  const res =
    step === 'join'
      ? http.post(`${BASE_URL}/events/${data.event}/queue`, null, { ...auth, tags: { name: 'join' } })
      : http.get(`${BASE_URL}/events/${data.event}/queue/me`, { ...auth, tags: { name: 'poll' } });
  record(scenario, res);
}
