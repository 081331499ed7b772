/**
 * Hot-section hold contention: admitted buyers hold 2 seats picked among the same 40, most of them losing
 * the race (409), none of them ever holding a seat someone else holds. Rates, durations and thresholds:
 * load-tests/scenarios/definition.ts (the Node runner uses the same).
 *
 *   k6 run -e BASE_URL=… -e IDENTITY_URL=… -e EVENT_ID=… -e HOT_SEATS=id1,id2,… load-tests/k6/hot-section.ts
 *
 * HOT_SEATS: the seat ids of one section (the event's availability lists them); setup() admits BUYERS
 * buyers through the waiting room first (its release rate bounds how long that takes).
 */
import exec from 'k6/execution';
import http from 'k6/http';
import { k6Scenario, k6Thresholds, SCENARIOS } from '../scenarios/definition.ts';
import { admit, BASE_URL, buyerToken, eventId, record } from './lib.ts';

const scenario = SCENARIOS['hot-section'];
const BUYERS = Number(__ENV.BUYERS ?? 200);

export const options = {
  scenarios: { 'hot-section': k6Scenario(scenario) },
  thresholds: k6Thresholds(scenario),
  setupTimeout: '20m',
};

export function setup() {
  const event = eventId();
  const hot = (__ENV.HOT_SEATS ?? '').split(',').filter(Boolean);
  if (hot.length < scenario.params.seatsPerHold!) throw new Error('set HOT_SEATS: the seat ids of the hot section');
  const buyers = Array.from({ length: BUYERS }, (_, i) => {
    const bearer = buyerToken(`k6-hot-${i}`);
    return { bearer, admission: admit(event, bearer) };
  });
  return { event, hot: hot.slice(0, scenario.params.hotSeats), buyers };
}

export default function (data: { event: string; hot: string[]; buyers: { bearer: string; admission: string }[] }) {
  const i = exec.scenario.iterationInTest;
  const buyer = data.buyers[i % data.buyers.length]!;
  const first = Math.floor(Math.random() * data.hot.length);
  const seatIds = Array.from(
    { length: scenario.params.seatsPerHold! },
    (_, k) => data.hot[(first + k) % data.hot.length]!,
  );
  const res = http.post(`${BASE_URL}/events/${data.event}/holds`, JSON.stringify({ seatIds }), {
    headers: {
      authorization: `Bearer ${buyer.bearer}`,
      'x-admission-token': buyer.admission,
      'idempotency-key': `k6-hot-${i}-${exec.vu.idInTest}`,
      'content-type': 'application/json',
    },
    tags: { name: 'hold' },
  });
  record(scenario, res);
}
