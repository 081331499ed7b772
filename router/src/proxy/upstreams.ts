import { Pool } from 'undici';

export interface Upstream {
  pool: Pool;
  /** Path prefix of the base URL ('' for a bare origin), put in front of every forwarded path. */
  prefix: string;
}

export interface UpstreamOptions {
  connections: number;
  connectTimeoutMs: number;
}

/**
 * One keep-alive pool per upstream base URL (each cell, and the control plane), so a slow or dead cell exhausts only
 * its own connections and queue, never another cell's.
 */
export class Upstreams {
  readonly #pools = new Map<string, Upstream>();

  constructor(private readonly opts: UpstreamOptions) {}

  for(baseUrl: string): Upstream {
    let upstream = this.#pools.get(baseUrl);
    if (!upstream) {
      const url = new URL(baseUrl);
      upstream = {
        pool: new Pool(url.origin, {
          connections: this.opts.connections,
          connect: { timeout: this.opts.connectTimeoutMs },
          // One request per connection at a time: a pipelined request behind a slow hold would wait for it.
          pipelining: 1,
        }),
        prefix: url.pathname.replace(/\/+$/, ''),
      };
      this.#pools.set(baseUrl, upstream);
    }
    return upstream;
  }

  /** Closes the pools of base URLs no longer in use (a cell moved or left the directory); in-flight requests finish. */
  retain(inUse: ReadonlySet<string>): void {
    for (const [baseUrl, upstream] of this.#pools) {
      if (inUse.has(baseUrl)) continue;
      this.#pools.delete(baseUrl);
      void upstream.pool.close().catch(() => {});
    }
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((u) => u.pool.destroy()));
  }
}
