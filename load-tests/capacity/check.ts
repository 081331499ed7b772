/**
 * `pnpm capacity --check`: the model's prediction for the small example (examples/small.json) beside the same onsale
 * run here, through the router, on a platform of its own (load-tests/local/platform.ts with one cell per event):
 * buyers arrive by the curve, join, poll at the poll interval until admitted (or told it sold out), then the share
 * that converts holds seats (another pair after a 409, up to the attempts the buyer makes). Prints release rate, hold
 * throughput, hold p99, time to sell out and queue wait, predicted and measured, and the error of each.
 */
import { resolve } from 'node:path';
import { devToken } from '../../scripts/local-platform/demo';
import { keepAlivePool } from '../lib/http';
import { percentile, round } from '../lib/stats';
import { startLoadPlatform } from '../local/platform';
import { lastReportFile, readFigures } from './figures';
import { holdsPerAdmitted, plan } from './model';
import type { Onsale } from './onsale';
import { EXAMPLES_DIR, loadOnsale } from './onsale';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A buyer gives up on holds after this many 409s (the model's holdAttemptsPerBuyer is their mean). */
const MAX_HOLD_ATTEMPTS = 4;

interface BuyerLog {
  event: number;
  joinedAt: number;
  admittedAt?: number;
  leftSoldOut?: boolean;
  holds: { at: number; ms: number; status: number }[];
}

/** When each buyer arrives (ms from the doors' opening): evenly within each window of the curve. */
export function arrivalSchedule(o: Onsale): number[] {
  const comers = Math.round(o.registeredBuyers * o.turnout);
  const out: number[] = [];
  let from = 0;
  for (const w of o.arrival) {
    const n = Math.round(comers * w.share);
    for (let i = 0; i < n; i++) out.push((from + (i * w.seconds) / n) * 1000);
    from += w.seconds;
  }
  return out;
}

export async function runCheck(opts: { report?: string }): Promise<number> {
  const onsale = loadOnsale(resolve(EXAMPLES_DIR, 'small.json'));
  const figures = readFigures(opts.report ?? lastReportFile());
  const predicted = plan(onsale, figures);
  const rates = predicted.events.map((e) => e.releaseRate);
  if (new Set(onsale.events.map((e) => `${e.seats}/${e.holdTtlSeconds}`)).size !== 1 || new Set(rates).size !== 1)
    throw new Error('the check seeds identical events, one per cell: give the small example identical events');
  const ev = onsale.events[0]!;
  console.error(
    `[capacity] predicted R ${rates[0]}/s per event; starting a platform with ${onsale.events.length} cells…`,
  );
  const tp = await startLoadPlatform({
    cells: onsale.events.length,
    seatsPerEvent: ev.seats,
    maxReleaseRate: rates[0]!,
    holdTtlSeconds: ev.holdTtlSeconds,
  });
  const router = keepAlivePool(tp.platform.urls.router, 256);
  try {
    const schedule = arrivalSchedule(onsale);
    const bearers: string[] = [];
    for (let i = 0; i < schedule.length; i += 32)
      bearers.push(
        ...(await Promise.all(
          schedule
            .slice(i, i + 32)
            .map((_, k) => devToken(tp.platform.urls.identity, { kind: 'buyer', sub: `check-${i + k}` })),
        )),
      );
    // The room opens 3 s after seeding (seedDemo): the doors open when it does.
    await sleep(4_000);
    const events = tp.demo.events.map((e) => e.eventId);
    const logs: BuyerLog[] = [];
    const polls: number[] = [];
    const start = performance.now();
    const now = () => performance.now() - start;
    // Whether buyer i converts: evenly spread, the example's share of them.
    const converts = (i: number) => Math.floor((i + 1) * onsale.conversion) > Math.floor(i * onsale.conversion);

    const buyer = async (i: number) => {
      const e = i % events.length;
      const eventId = events[e]!;
      const auth = { authorization: `Bearer ${bearers[i]!}` };
      const log: BuyerLog = { event: e, joinedAt: now(), holds: [] };
      logs.push(log);
      const joined = await router.request(`/events/${eventId}/queue`, { method: 'POST', headers: auth });
      if (joined.status !== 200) throw new Error(`join: ${joined.status} ${joined.body.slice(0, 200)}`);
      let admission: string | undefined;
      while (!admission) {
        await sleep(onsale.pollIntervalSeconds * 1000);
        const t0 = now();
        const me = await router.request(`/events/${eventId}/queue/me`, { headers: auth });
        polls.push(t0);
        if (me.status !== 200) continue;
        const body = JSON.parse(me.body) as { admission: { token: string } | null; soldOutForNow: boolean };
        if (body.admission) admission = body.admission.token;
        else if (body.soldOutForNow) {
          log.leftSoldOut = true;
          return;
        }
      }
      log.admittedAt = now();
      if (!converts(i)) return;
      for (let attempt = 0; attempt < MAX_HOLD_ATTEMPTS; attempt++) {
        const availability = await router.request(`/events/${eventId}/availability`);
        const free = (JSON.parse(availability.body) as { availableSeatIds: string[] }).availableSeatIds;
        if (free.length < ev.seatsPerOrder) return;
        const first = Math.floor(Math.random() * (free.length - ev.seatsPerOrder + 1));
        const t0 = now();
        const held = await router.request(`/events/${eventId}/holds`, {
          method: 'POST',
          headers: {
            ...auth,
            'x-admission-token': admission,
            'idempotency-key': crypto.randomUUID(),
            'content-type': 'application/json',
          },
          body: JSON.stringify({ seatIds: free.slice(first, first + ev.seatsPerOrder) }),
        });
        log.holds.push({ at: t0, ms: now() - t0, status: held.status });
        if (held.status !== 409) return;
      }
    };
    const running: Promise<void>[] = [];
    for (const [i, at] of schedule.entries()) {
      const wait = at - now();
      if (wait > 0) await sleep(wait);
      running.push(buyer(i).catch((err) => console.error(`[capacity] buyer ${i}: ${(err as Error).message}`)));
    }
    await Promise.all(running);

    const measured = measure(logs, polls, events.length, onsale);
    process.stdout.write(`${sideBySide(onsale, predicted, measured, figures.holdP99AtHalfRate)}\n`);
    return 0;
  } finally {
    await router.close();
    await tp.stop();
  }
}

function measure(logs: BuyerLog[], polls: number[], eventCount: number, o: Onsale) {
  const perEvent = Array.from({ length: eventCount }, (_, e) => {
    const mine = logs.filter((l) => l.event === e);
    const admitted = mine
      .filter((l) => l.admittedAt !== undefined)
      .map((l) => l.admittedAt!)
      .sort((a, b) => a - b);
    const holds = mine.flatMap((l) => l.holds);
    const taken = holds.filter((h) => h.status === 202).map((h) => h.at + h.ms);
    const span = (xs: number[]) => (xs.length > 1 ? (Math.max(...xs) - Math.min(...xs)) / 1000 : Number.NaN);
    return {
      // The rate the room let buyers in at, while it was letting them in.
      releaseRate: round(admitted.length / span(admitted), 1),
      holdAttemptsPerSecond: round(holds.length / span(holds.map((h) => h.at)), 1),
      seatsTaken: taken.length * o.events[e]!.seatsPerOrder,
      sellOutSeconds: taken.length > 0 ? round(Math.max(...taken) / 1000, 1) : null,
      waits: mine.filter((l) => l.admittedAt !== undefined).map((l) => (l.admittedAt! - l.joinedAt) / 1000),
      attemptsPerAdmitted: round(holds.length / Math.max(1, admitted.length), 2),
    };
  });
  const holds = logs.flatMap((l) => l.holds);
  const holdStatuses: Record<number, number> = {};
  for (const h of holds) holdStatuses[h.status] = (holdStatuses[h.status] ?? 0) + 1;
  const pollsPerSecond = new Map<number, number>();
  for (const t of polls) pollsPerSecond.set(Math.floor(t / 1000), (pollsPerSecond.get(Math.floor(t / 1000)) ?? 0) + 1);
  return {
    perEvent,
    holdP99Ms: round(
      percentile(
        holds.map((h) => h.ms),
        99,
      ),
      1,
    ),
    holdStatuses,
    peakPollsPerSecond: Math.max(0, ...pollsPerSecond.values()),
    waitP50: round(
      percentile(
        perEvent.flatMap((e) => e.waits),
        50,
      ),
      1,
    ),
    waitMax: round(Math.max(0, ...perEvent.flatMap((e) => e.waits)), 1),
  };
}

function sideBySide(
  o: Onsale,
  p: ReturnType<typeof plan>,
  m: ReturnType<typeof measure>,
  holdP99: { ms: number; perSecond: number },
): string {
  const error = (pred: number | null, meas: number | null) =>
    pred === null || meas === null || !Number.isFinite(meas) || meas === 0
      ? '–'
      : `${round(((pred - meas) / meas) * 100, 0)} %`;
  const rows: [string, number | null, number | null][] = [];
  p.events.forEach((e, i) => {
    const x = m.perEvent[i]!;
    rows.push(
      [`${e.id}: release rate R (buyers/s)`, e.releaseRate, x.releaseRate],
      [`${e.id}: hold requests/s`, e.holdsPerSecond, x.holdAttemptsPerSecond],
      [`${e.id}: hold requests per admitted buyer`, round(holdsPerAdmitted(o), 2), x.attemptsPerAdmitted],
      [`${e.id}: time to sell out (s from the doors)`, e.sellOutSeconds, x.sellOutSeconds],
    );
  });
  rows.push(
    ['hold p99 (ms; predicted: the hold bench at half its max rate)', holdP99.ms, m.holdP99Ms],
    ['queue wait p50 (s)', round(p.events[0]!.queueWaitSeconds.p50, 1), m.waitP50],
    ['queue wait max (s)', round(Math.max(...p.events.map((e) => e.queueWaitSeconds.max)), 1), m.waitMax],
    ['peak polls/s', p.peak.pollsPerSecond, m.peakPollsPerSecond],
  );
  const w = Math.max(...rows.map((r) => r[0].length));
  return [
    `# Capacity check: ${o.name}`,
    '',
    `${'figure'.padEnd(w)}  ${'predicted'.padStart(10)}  ${'measured'.padStart(10)}  error (predicted vs measured)`,
    ...rows.map(
      ([name, pred, meas]) =>
        `${name.padEnd(w)}  ${String(pred ?? '–').padStart(10)}  ${String(meas ?? '–').padStart(10)}  ${error(pred, meas)}`,
    ),
    '',
    `hold answers: ${JSON.stringify(m.holdStatuses)}; seats taken per event: ${m.perEvent.map((e) => e.seatsTaken).join(', ')}`,
  ].join('\n');
}
