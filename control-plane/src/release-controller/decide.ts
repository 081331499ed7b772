import type { CellSignals } from '@onsale/contracts';
import type { Config } from '../config';
import type { ReleaseMode } from '../db/schema';

export interface Thresholds {
  holdLatencyP99Ms: number;
  commitLatencyP99Ms: number;
  lockWaits: number;
  connectionUse: number;
  outboxAgeMs: number;
  consumerLag: number;
  expiryDelayMs: number;
}

export const thresholdsFrom = (c: Config): Thresholds => ({
  holdLatencyP99Ms: c.THRESHOLD_HOLD_P99_MS,
  commitLatencyP99Ms: c.THRESHOLD_COMMIT_P99_MS,
  lockWaits: c.THRESHOLD_LOCK_WAITS,
  connectionUse: c.THRESHOLD_CONNECTION_USE,
  outboxAgeMs: c.THRESHOLD_OUTBOX_AGE_MS,
  consumerLag: c.THRESHOLD_CONSUMER_LAG,
  expiryDelayMs: c.THRESHOLD_EXPIRY_DELAY_MS,
});

export interface DecideInput {
  current: number;
  mode: ReleaseMode;
  pinnedRate: number | null;
  floor: number;
  ceiling: number;
  /** null: the cell's signals could not be read. */
  signals: CellSignals | null;
  thresholds: Thresholds;
  increaseFraction: number;
  decreaseFactor: number;
}

/**
 * Signals at or over their threshold. A latency of null was not measured yet (no traffic): not over. A consumer lag of
 * null is one the cell could not read from its broker: a broker that does not answer is a reason to slow down.
 */
export function breaches(s: CellSignals, t: Thresholds): string[] {
  const out: string[] = [];
  if (s.consumerLag === null) out.push('consumerLag unknown (the cell broker did not answer)');
  for (const key of Object.keys(t) as (keyof Thresholds)[]) {
    const v = s[key];
    if (v !== null && v !== undefined && v >= t[key]) out.push(`${key} ${v} >= ${t[key]}`);
  }
  return out;
}

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));
const round = (x: number) => Math.round(x * 100) / 100;

/**
 * AIMD: while every signal is under its threshold, R grows by a fixed step (a fraction of the
 * ceiling); when one crosses, R is cut by a factor at once. Unreadable signals count as a breach.
 * Always within [floor, ceiling]; an operator's pause or pin overrides.
 */
export function decide(i: DecideInput): { rate: number; reason: string } {
  if (i.mode === 'paused') return { rate: 0, reason: 'paused by operator' };
  if (i.mode === 'pinned') {
    const r = clamp(i.pinnedRate ?? i.current, i.floor, i.ceiling);
    return { rate: r, reason: `pinned by operator at ${r}` };
  }
  const current = clamp(i.current, i.floor, i.ceiling);
  if (!i.signals)
    return {
      rate: round(clamp(current * i.decreaseFactor, i.floor, i.ceiling)),
      reason: 'decrease: cell signals unavailable',
    };
  const over = breaches(i.signals, i.thresholds);
  if (over.length)
    return {
      rate: round(clamp(current * i.decreaseFactor, i.floor, i.ceiling)),
      reason: `decrease: ${over.join('; ')}`,
    };
  if (current >= i.ceiling) return { rate: i.ceiling, reason: 'hold: at the promoter ceiling' };
  const step = Math.max(1, i.ceiling * i.increaseFraction);
  return {
    rate: round(clamp(current + step, i.floor, i.ceiling)),
    reason: `increase: all signals under thresholds (+${round(step)})`,
  };
}
