/**
 * Stampede: 10,000 new buyers a second join the waiting room through the router, each polling once.
 * Rates, durations and thresholds: load-tests/scenarios/definition.ts (the Node runner uses the same).
 *
 *   k6 run -e BASE_URL=… -e IDENTITY_URL=… -e EVENT_ID=… load-tests/k6/stampede.ts
 *
 * Tokens are minted in setup() for a pool of buyers; arrivals beyond the pool rejoin as the same
 * buyers (a refresh storm), which the waiting room answers idempotently.
 */
import exec from 'k6/execution';
import http from 'k6/http';
import { k6Scenario, k6Thresholds, SCENARIOS } from '../scenarios/definition.ts';
import { BASE_URL, buyerToken, eventId, record } from './lib.ts';

const scenario = SCENARIOS.stampede;
const TOKENS = Number(__ENV.TOKENS ?? 5_000);

export const options = {
  scenarios: { stampede: k6Scenario(scenario) },
  thresholds: k6Thresholds(scenario),
  setupTimeout: '10m',
};

export function setup() {
  return {
    event: eventId(),
    tokens: Array.from({ length: TOKENS }, (_, i) => buyerToken(`k6-stampede-${i}`)),
  };
}

export default function (data: { event: string; tokens: string[] }) {
  const bearer = data.tokens[exec.scenario.iterationInTest % data.tokens.length]!;
  const auth = { headers: { authorization: `Bearer ${bearer}` } };
  record(scenario, http.post(`${BASE_URL}/events/${data.event}/queue`, null, { ...auth, tags: { name: 'join' } }));
  record(scenario, http.get(`${BASE_URL}/events/${data.event}/queue/me`, { ...auth, tags: { name: 'poll' } }));
}
