import { Pool } from 'undici';

/**
 * A keep-alive client to one origin with a fixed number of connections (no pipelining): what the
 * benchmarks and the local load scenarios send through, so every server they compare sees the same client.
 */
export function keepAlivePool(origin: string, connections: number) {
  const pool = new Pool(origin, { connections, pipelining: 1 });
  return {
    async request(
      path: string,
      init: { method?: 'GET' | 'POST' | 'PUT' | 'DELETE'; headers?: Record<string, string>; body?: string } = {},
    ): Promise<{ status: number; body: string }> {
      const res = await pool.request({ path, method: init.method ?? 'GET', headers: init.headers, body: init.body });
      return { status: res.statusCode, body: await res.body.text() };
    },
    close: () => pool.close(),
  };
}
