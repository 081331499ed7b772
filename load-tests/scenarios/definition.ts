/**
 * The load scenarios, defined once: arrival rates, durations and thresholds. The k6 scripts in
 * load-tests/k6/ (for users' own k6, at the seeds' figures) and the Node runner in load-tests/local/
 * (this machine, scaled and bounded in time) both import this module, so a threshold or a rate is
 * changed in one place. Plain data and pure functions only: k6 runs it too (no Node imports).
 */

export type ScenarioName = 'stampede' | 'hot-section' | 'webhook-storm' | 'soak';

/** A stretch of arrivals: the rate moves linearly to `target` per second over `seconds` (k6's ramping-arrival-rate). */
export interface Stage {
  target: number;
  seconds: number;
}

export interface Thresholds {
  /** Latency limits over every measured request of the scenario, in milliseconds. */
  p95Ms: number;
  p99Ms: number;
  /** Answers outside `expectedStatuses` (and transport errors) over all requests. */
  maxErrorRate: number;
  /** Arrivals dropped because `maxInFlight` requests were already waiting (k6's dropped_iterations). */
  maxDroppedRate: number;
}

export interface Scenario {
  name: ScenarioName;
  description: string;
  /** The seeds' figures: what a k6 run against a deployed platform offers. */
  stages: Stage[];
  /** Requests in flight at most (k6's maxVUs): beyond it an arrival is dropped and counted. */
  maxInFlight: number;
  /** Answers that are the scenario working as designed (a 409 for a seat someone else holds). */
  expectedStatuses: number[];
  thresholds: Thresholds;
  /** This 2-core machine: every stage's rate times `rateScale`, the run cut at `maxSeconds`. */
  local: { rateScale: number; maxSeconds: number };
  /** CI's short form: the same shape, a few seconds. */
  short: { rateScale: number; maxSeconds: number };
  /** Scenario-specific sizes. */
  params: Record<string, number>;
}

export const SCENARIOS: Record<ScenarioName, Scenario> = {
  stampede: {
    name: 'stampede',
    description:
      'An onsale opens: 10,000 new buyers a second join the waiting room through the router, each polling once for their place.',
    stages: [
      { target: 10_000, seconds: 10 },
      { target: 10_000, seconds: 50 },
      { target: 0, seconds: 5 },
    ],
    maxInFlight: 20_000,
    expectedStatuses: [200],
    thresholds: { p95Ms: 500, p99Ms: 1_000, maxErrorRate: 0.01, maxDroppedRate: 0.01 },
    local: { rateScale: 0.04, maxSeconds: 60 },
    short: { rateScale: 0.005, maxSeconds: 5 },
    params: { buyers: 100_000 },
  },
  'hot-section': {
    name: 'hot-section',
    description:
      'Admitted buyers all want the same few seats: holds of 2 seats picked among a hot section of 40, most of them losing the race.',
    stages: [
      { target: 800, seconds: 10 },
      { target: 800, seconds: 110 },
    ],
    maxInFlight: 2_000,
    // 202: held; 409: a seat is taken (the race lost, as designed); 429: the buyer's own hold limit.
    expectedStatuses: [202, 409, 429],
    thresholds: { p95Ms: 400, p99Ms: 800, maxErrorRate: 0.01, maxDroppedRate: 0.01 },
    local: { rateScale: 0.05, maxSeconds: 60 },
    short: { rateScale: 0.02, maxSeconds: 5 },
    params: { hotSeats: 40, seatsPerHold: 2, buyers: 2_000 },
  },
  'webhook-storm': {
    name: 'webhook-storm',
    description:
      "Stripe's deliveries pile up: every event of an order's payment arrives up to ten times, out of order, at the cell's webhook through the router.",
    stages: [
      { target: 2_000, seconds: 10 },
      { target: 2_000, seconds: 50 },
    ],
    maxInFlight: 4_000,
    // A duplicate or out-of-order event is answered 2xx and has no second effect.
    expectedStatuses: [200],
    thresholds: { p95Ms: 300, p99Ms: 800, maxErrorRate: 0.001, maxDroppedRate: 0.01 },
    local: { rateScale: 0.05, maxSeconds: 60 },
    short: { rateScale: 0.02, maxSeconds: 5 },
    params: { orders: 500, maxDeliveries: 10 },
  },
  soak: {
    name: 'soak',
    description:
      'Thirty minutes at a steady mix (joins, polls and holds by admitted buyers): latency and errors must not drift as tables, queues and memory grow.',
    stages: [
      { target: 500, seconds: 60 },
      { target: 500, seconds: 1_740 },
    ],
    maxInFlight: 2_000,
    expectedStatuses: [200, 202, 409, 429],
    thresholds: { p95Ms: 400, p99Ms: 800, maxErrorRate: 0.005, maxDroppedRate: 0.01 },
    local: { rateScale: 0.1, maxSeconds: 1_800 },
    short: { rateScale: 0.02, maxSeconds: 5 },
    params: { buyers: 50_000 },
  },
};

export type Form = 'full' | 'local' | 'short';

/**
 * The stages a form runs: the seeds' figures (`full`), or scaled in rate and cut in time for this
 * machine (`local`) or for CI (`short`). Scaling keeps the shape: the ramp and the plateau.
 */
export function stagesFor(scenario: Scenario, form: Form): Stage[] {
  if (form === 'full') return scenario.stages;
  const { rateScale, maxSeconds } = scenario[form];
  const total = scenario.stages.reduce((s, st) => s + st.seconds, 0);
  const timeScale = Math.min(1, maxSeconds / total);
  return scenario.stages.map((st) => ({
    target: Math.max(1, Math.round(st.target * rateScale)),
    seconds: Math.max(1, Math.round(st.seconds * timeScale)),
  }));
}

/** The same thresholds in k6's syntax, on its built-in metrics. */
export function k6Thresholds(scenario: Scenario): Record<string, string[]> {
  const t = scenario.thresholds;
  return {
    http_req_duration: [`p(95)<${t.p95Ms}`, `p(99)<${t.p99Ms}`],
    unexpected_status: [`rate<${t.maxErrorRate}`],
    dropped_iterations: [`count<${Math.ceil(totalArrivals(scenario.stages) * t.maxDroppedRate)}`],
  };
}

/** k6's ramping-arrival-rate scenario for the stages, starting from the first stage's rate. */
export function k6Scenario(scenario: Scenario, exec = 'default') {
  return {
    executor: 'ramping-arrival-rate',
    exec,
    startRate: 0,
    timeUnit: '1s',
    preAllocatedVUs: Math.min(scenario.maxInFlight, 500),
    maxVUs: scenario.maxInFlight,
    stages: scenario.stages.map((s) => ({ target: s.target, duration: `${s.seconds}s` })),
  };
}

/** Arrivals the stages offer in all (the area under the rate). */
export function totalArrivals(stages: Stage[]): number {
  let rate = 0;
  let total = 0;
  for (const s of stages) {
    total += ((rate + s.target) / 2) * s.seconds;
    rate = s.target;
  }
  return Math.round(total);
}

/**
 * The arrival times (ms from the start) the stages offer: the rate integrated, one arrival each time
 * it adds up to one more. Deterministic, so the Node runner and a reader of its report agree.
 */
export function arrivalTimes(stages: Stage[]): number[] {
  const times: number[] = [];
  let from = 0;
  let t0 = 0;
  let owed = 0;
  const stepMs = 1;
  for (const s of stages) {
    const ms = s.seconds * 1000;
    for (let t = 0; t < ms; t += stepMs) {
      const rate = from + ((s.target - from) * t) / ms;
      owed += (rate * stepMs) / 1000;
      while (owed >= 1) {
        times.push(t0 + t);
        owed -= 1;
      }
    }
    from = s.target;
    t0 += ms;
  }
  return times;
}

/** The soak's mix, by arrival number: in every 10 arrivals, 6 polls, 3 joins and 1 hold (released again). */
export function soakStep(i: number): 'poll' | 'join' | 'hold' {
  const k = i % 10;
  return k < 6 ? 'poll' : k < 9 ? 'join' : 'hold';
}
