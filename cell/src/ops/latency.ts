/**
 * Keeps the durations of the last `windowMs` in a bounded ring and answers percentiles.
 * Cheap enough for the hold path: one array write per sample.
 */
export class LatencyWindow {
  private readonly at: Float64Array;
  private readonly ms: Float64Array;
  private next = 0;

  constructor(
    private readonly windowMs = 30_000,
    capacity = 8192,
  ) {
    this.at = new Float64Array(capacity);
    this.ms = new Float64Array(capacity);
  }

  record(durationMs: number, now = Date.now()): void {
    this.at[this.next] = now;
    this.ms[this.next] = durationMs;
    this.next = (this.next + 1) % this.at.length;
  }

  percentile(p: number, now = Date.now()): number | null {
    const recent: number[] = [];
    for (let i = 0; i < this.at.length; i++) {
      if (this.at[i]! > 0 && now - this.at[i]! <= this.windowMs) recent.push(this.ms[i]!);
    }
    if (recent.length === 0) return null;
    recent.sort((a, b) => a - b);
    return recent[Math.min(recent.length - 1, Math.ceil((p / 100) * recent.length) - 1)]!;
  }
}
