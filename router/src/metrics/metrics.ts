/** Latency buckets in seconds: fine below the hold path's 800 ms ceiling, coarse above it. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.8, 1, 2.5, 5, 10];

interface Histogram {
  counts: number[];
  sum: number;
  count: number;
}

/**
 * The router's own Prometheus metrics, labelled by upstream ("cell-1", "control-plane"; "none" when the router
 * answered before choosing one). Label values come from the directory, a short list, so cardinality stays bounded.
 */
export class RouterMetrics {
  readonly #requests = new Map<string, number>();
  readonly #latency = new Map<string, Histogram>();
  readonly #upstreamErrors = new Map<string, number>();

  observe(upstream: string, status: number, seconds: number): void {
    const key = `${upstream}\u0000${Math.floor(status / 100)}xx`;
    this.#requests.set(key, (this.#requests.get(key) ?? 0) + 1);
    let h = this.#latency.get(upstream);
    if (!h) {
      h = { counts: BUCKETS.map(() => 0), sum: 0, count: 0 };
      this.#latency.set(upstream, h);
    }
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]!) h.counts[i]!++;
    h.sum += seconds;
    h.count++;
  }

  upstreamError(upstream: string, reason: string): void {
    const key = `${upstream}\u0000${reason}`;
    this.#upstreamErrors.set(key, (this.#upstreamErrors.get(key) ?? 0) + 1);
  }

  render(directory: { version: number; ageSeconds: number } | null): string {
    const lines: string[] = [];
    lines.push('# HELP router_requests_total Requests answered, by upstream and status class.');
    lines.push('# TYPE router_requests_total counter');
    for (const [key, n] of this.#requests) {
      const [upstream, cls] = key.split('\u0000');
      lines.push(`router_requests_total{cell="${esc(upstream!)}",class="${cls}"} ${n}`);
    }
    lines.push('# HELP router_request_duration_seconds Time from request to the end of the response, by upstream.');
    lines.push('# TYPE router_request_duration_seconds histogram');
    for (const [upstream, h] of this.#latency) {
      const cell = esc(upstream);
      BUCKETS.forEach((le, i) => {
        lines.push(`router_request_duration_seconds_bucket{cell="${cell}",le="${le}"} ${h.counts[i]}`);
      });
      lines.push(`router_request_duration_seconds_bucket{cell="${cell}",le="+Inf"} ${h.count}`);
      lines.push(`router_request_duration_seconds_sum{cell="${cell}"} ${h.sum}`);
      lines.push(`router_request_duration_seconds_count{cell="${cell}"} ${h.count}`);
    }
    lines.push('# HELP router_upstream_errors_total Upstream failures (unreachable, timeout, broken), by upstream.');
    lines.push('# TYPE router_upstream_errors_total counter');
    for (const [key, n] of this.#upstreamErrors) {
      const [upstream, reason] = key.split('\u0000');
      lines.push(`router_upstream_errors_total{cell="${esc(upstream!)}",reason="${esc(reason!)}"} ${n}`);
    }
    lines.push('# HELP router_directory_version Version of the directory copy in use (-1 before the first load).');
    lines.push('# TYPE router_directory_version gauge');
    lines.push(`router_directory_version ${directory?.version ?? -1}`);
    lines.push(
      '# HELP router_directory_age_seconds Seconds since the control plane last confirmed the directory copy.',
    );
    lines.push('# TYPE router_directory_age_seconds gauge');
    lines.push(`router_directory_age_seconds ${directory ? directory.ageSeconds : 'NaN'}`);
    return `${lines.join('\n')}\n`;
  }
}

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
