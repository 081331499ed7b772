/**
 * What one forwarded request costs a proxy in CPU, with nothing else on the path: the same POST (a hold's headers and
 * body) sent direct to a bare Node server, through nginx, and through the minimal Node proxy (proxy-floor.ts) in
 * each of its forms (undici's dispatch or node:http.request out; the body streamed or read whole first). The CPU of
 * each front (its process and its children, /proc utime+stime) over the requests it forwarded, at saturation and at
 * one fixed rate offered to all, in rotating rounds of one run.
 *
 * This separates the hop's own cost from the router's work: if the minimal Node proxy already spends more than 3x
 * nginx's CPU per request, no router written on node:http can come within 3x of nginx, and the router's distance to
 * the floor is what is left to win.
 *
 *   pnpm tsx router/bench/proxy-cost.ts      (nginx from Debian's package; no services needed)
 *
 * Knobs: BENCH_REQUESTS (per front per round at saturation), BENCH_ROUNDS, BENCH_CONCURRENCY, BENCH_RATE (the
 * fixed rate), BENCH_RATE_SECONDS.
 */
import { resolve } from 'node:path';
import { Agent, request } from 'undici';
import { cpuMeter } from '../../load-tests/lib/cpu';
import { reference, runBench } from '../../load-tests/lib/harness';
import { round } from '../../load-tests/lib/stats';
import { repoRoot, startProcess } from '../../scripts/local-platform/process';
import { startNginx } from './nginx';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 4_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const RATE = Number(process.env.BENCH_RATE ?? 500);
const RATE_SECONDS = Number(process.env.BENCH_RATE_SECONDS ?? 4);
const UPSTREAM_PORT = 18_291;

const FRONTS = {
  direct: { port: UPSTREAM_PORT },
  nginx: { port: 18_292 },
  'node proxy (undici dispatch, body streamed)': { port: 18_293, client: 'undici', body: 'stream' },
  'node proxy (undici dispatch, body read first)': { port: 18_294, client: 'undici', body: 'buffer' },
  'node proxy (node:http + keep-alive Agent, body streamed)': { port: 18_295, client: 'node-http', body: 'stream' },
} as const;
type Front = keyof typeof FRONTS;

await runBench('proxy-cost', async (bench) => {
  const names = new Map<number, string>();
  const tsx = (entry: string) => [process.execPath, '--import', 'tsx', resolve(repoRoot, entry)];
  // The answer a hold gets (202 and its JSON), from a server that does nothing else.
  const upstream = await startProcess(
    'load-tests/lib/bare-json-server.ts',
    {
      PORT: String(UPSTREAM_PORT),
      BARE_BODY: JSON.stringify({ orderId: crypto.randomUUID(), holdId: crypto.randomUUID(), status: 'held' }),
    },
    {
      name: 'upstream',
      readyUrl: `http://127.0.0.1:${UPSTREAM_PORT}/`,
      command: tsx('load-tests/lib/bare-json-server.ts'),
      spawned: bench.started,
    },
  );
  names.set(upstream.child.pid!, 'upstream');
  await startNginx(reference('nginx'), { port: FRONTS.nginx.port, upstreamPort: UPSTREAM_PORT }, (p) => {
    names.set(p.child.pid!, 'nginx');
    return bench.started(p);
  });
  for (const [name, front] of Object.entries(FRONTS)) {
    if (!('client' in front)) continue;
    const floor = await startProcess(
      'router/bench/proxy-floor.ts',
      {
        PORT: String(front.port),
        UPSTREAM: `http://127.0.0.1:${UPSTREAM_PORT}`,
        FLOOR_CLIENT: front.client,
        FLOOR_BODY: front.body,
      },
      {
        name,
        readyUrl: `http://127.0.0.1:${front.port}/`,
        command: tsx('router/bench/proxy-floor.ts'),
        spawned: bench.started,
      },
    );
    names.set(floor.child.pid!, name);
  }

  // A hold's request as buyers send it: two JWTs, an idempotency key, a small JSON body.
  const jwt = `eyJhbGciOiJFZERTQSJ9.${Buffer.from('x'.repeat(300)).toString('base64url')}.${'s'.repeat(86)}`;
  const headers = {
    authorization: `Bearer ${jwt}`,
    'x-admission-token': jwt,
    'idempotency-key': crypto.randomUUID(),
    'content-type': 'application/json',
  };
  const body = JSON.stringify({ seatIds: [crypto.randomUUID(), crypto.randomUUID()] });
  const client = new Agent({ connections: CONCURRENCY, pipelining: 1 });
  bench.defer(() => client.close());
  const send = async (front: Front) => {
    const res = await request(`http://127.0.0.1:${FRONTS[front].port}/events/e/holds`, {
      dispatcher: client,
      method: 'POST',
      headers,
      body,
    });
    await res.body.dump();
    if (res.statusCode !== 200) throw new Error(`${front}: ${res.statusCode}`);
  };
  const saturate = async (front: Front, n: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next++ < n) await send(front);
      }),
    );
    return n;
  };
  const paced = async (front: Front) => {
    const started = performance.now();
    const n = RATE * RATE_SECONDS;
    const inflight: Promise<void>[] = [];
    for (let i = 0; i < n; i++) {
      const wait = started + (i * 1000) / RATE - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      inflight.push(send(front));
    }
    await Promise.all(inflight);
    return n;
  };

  const fronts = Object.keys(FRONTS) as Front[];
  type Tally = { requests: number; seconds: number; frontCpuSeconds: number; upstreamCpuSeconds: number };
  const tally = (): Record<Front, Tally> =>
    Object.fromEntries(
      fronts.map((f) => [f, { requests: 0, seconds: 0, frontCpuSeconds: 0, upstreamCpuSeconds: 0 }]),
    ) as Record<Front, Tally>;
  const measure = async (into: Tally, front: Front, drive: () => Promise<number>) => {
    const meter = cpuMeter(() => names);
    const n = await drive();
    const reading = meter.read();
    into.requests += n;
    into.seconds += reading.seconds;
    into.frontCpuSeconds += (front === 'direct' ? 0 : (reading.coresByProcess[front] ?? 0)) * reading.seconds;
    into.upstreamCpuSeconds += (reading.coresByProcess.upstream ?? 0) * reading.seconds;
  };
  for (const f of fronts) await saturate(f, 1_000); // JIT, connections
  const saturated = tally();
  const atRate = tally();
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < fronts.length; k++) {
      const f = fronts[(r + k) % fronts.length]!;
      await measure(saturated[f], f, () => saturate(f, REQUESTS));
      await measure(atRate[f], f, () => paced(f));
    }
  }
  const summary = (t: Record<Front, Tally>) =>
    Object.fromEntries(
      fronts.map((f) => {
        const x = t[f];
        return [
          f,
          {
            requestsPerSecond: round(x.requests / x.seconds),
            frontCpuMsPerRequest: round((x.frontCpuSeconds / x.requests) * 1000, 4),
            upstreamCpuMsPerRequest: round((x.upstreamCpuSeconds / x.requests) * 1000, 4),
          },
        ];
      }),
    );
  const sat = summary(saturated);
  const rate = summary(atRate);
  const vsNginx = (s: typeof sat) =>
    Object.fromEntries(
      fronts
        .filter((f) => f !== 'direct' && f !== 'nginx')
        .map((f) => [f, round(s[f]!.frontCpuMsPerRequest / s.nginx!.frontCpuMsPerRequest, 2)]),
    );
  return {
    settings: {
      requestsPerRound: REQUESTS,
      rounds: ROUNDS,
      concurrency: CONCURRENCY,
      rate: RATE,
      rateSeconds: RATE_SECONDS,
    },
    saturation: sat,
    fixedRate: rate,
    cpuPerRequestVsNginx: { saturation: vsNginx(sat), fixedRate: vsNginx(rate) },
  };
});
