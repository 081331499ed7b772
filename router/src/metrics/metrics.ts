/** Latency buckets in seconds: fine below the hold path's 800 ms ceiling, coarse above it. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.8, 1, 2.5, 5, 10];
/** The router's own share of a request: tenths of a millisecond apart where a proxy's cost lies. */
const OWN_BUCKETS = [0.0001, 0.0002, 0.0003, 0.0004, 0.0005, 0.00075, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25];

interface Histogram {
  buckets: readonly number[];
  counts: number[];
  sum: number;
  count: number;
}

function observeIn(histograms: Map<string, Histogram>, buckets: readonly number[], label: string, seconds: number) {
  let h = histograms.get(label);
  if (!h) {
    h = { buckets, counts: buckets.map(() => 0), sum: 0, count: 0 };
    histograms.set(label, h);
  }
  for (let i = 0; i < buckets.length; i++) if (seconds <= buckets[i]!) h.counts[i]!++;
  h.sum += seconds;
  h.count++;
}

/**
 * The router's own Prometheus metrics, labelled by upstream ("cell-1", "control-plane"; "none" when the router
 * answered before choosing one). Label values come from the directory, a short list, so cardinality stays bounded.
 */
export class RouterMetrics {
  readonly #requests = new Map<string, number>();
  readonly #latency = new Map<string, Histogram>();
  readonly #own = new Map<string, Histogram>();
  readonly #upstreamErrors = new Map<string, number>();

  observe(upstream: string, status: number, seconds: number): void {
    const key = `${upstream}\u0000${Math.floor(status / 100)}xx`;
    this.#requests.set(key, (this.#requests.get(key) ?? 0) + 1);
    observeIn(this.#latency, BUCKETS, upstream, seconds);
  }

  /**
   * A forwarded request's time less its wait for the upstream's response head: the router's own work (the token
   * check, routing, headers, forwarding) plus streaming the answer, which is what the router adds to a request.
   */
  observeOwn(upstream: string, seconds: number): void {
    observeIn(this.#own, OWN_BUCKETS, upstream, seconds);
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
    histogramLines(
      lines,
      'router_request_duration_seconds',
      'Time from request to the end of the response, by upstream.',
      this.#latency,
    );
    histogramLines(
      lines,
      'router_own_duration_seconds',
      "A forwarded request's time less its wait for the upstream's response head (what the router adds), by upstream.",
      this.#own,
    );
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

function histogramLines(lines: string[], name: string, help: string, histograms: Map<string, Histogram>) {
  lines.push(`# HELP ${name} ${help}`);
  lines.push(`# TYPE ${name} histogram`);
  for (const [upstream, h] of histograms) {
    const cell = esc(upstream);
    h.buckets.forEach((le, i) => {
      lines.push(`${name}_bucket{cell="${cell}",le="${le}"} ${h.counts[i]}`);
    });
    lines.push(`${name}_bucket{cell="${cell}",le="+Inf"} ${h.count}`);
    lines.push(`${name}_sum{cell="${cell}"} ${h.sum}`);
    lines.push(`${name}_count{cell="${cell}"} ${h.count}`);
  }
}

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
