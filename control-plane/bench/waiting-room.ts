/**
 * Waiting-room benchmark: joins/s and position polls/s with 100,000 buyers queued for one event,
 * driving the domain verbs (the same Lua the API runs, through ioredis with auto-pipelining),
 * then the same commands through redis-benchmark, and Redis memory per queued buyer. Then what
 * buyers call: joins and polls over real sockets to the control-plane API process (its bundle),
 * beside a bare Node HTTP server answering a same-size JSON body, with the same client, and between the two
 * a floor: the waiting room's verbs without the API's HTTP stack (waiting-room-floor.ts). Beside them, in the same
 * run, the polls buyers repeat with their queue ticket (GET queue/poll: no token check, no Redis call), against a bare
 * Node server answering a copy of that poll's body. Last, joins and polls/s of a room of one shard and of three
 * shards on a Redis Cluster of three primaries (scripts/lib/redis-cluster.sh, started when not running, left running).
 *
 *   pnpm bench:waiting-room   [BUYERS=100000 CONCURRENCY=256 HTTP_REQUESTS=20000 HTTP_CONNECTIONS=64
 *                              REDIS_BENCH_REQUESTS=200000 SHARD_BUYERS=20000]
 *
 * redis-benchmark (Debian's redis-tools) is installed by `scripts/platform install-references` when missing.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { Redis } from 'ioredis';
import { type Bench, reference, runBench } from '../../load-tests/lib/harness';
import { keepAlivePool } from '../../load-tests/lib/http';
import { freePort } from '../../scripts/local-platform/launch';
import { startProcess } from '../../scripts/local-platform/process';
import { createHarness } from '../../test/support/control-plane';
import { deleteClusterKeys, redisClusterClient, redisClusterNodes } from '../../test/support/redis-cluster';
import { repoRoot, serviceEnv } from '../../test/support/services';
import { commitmentOf, newFairnessSecrets } from '../src/waiting-room/fairness';
import { joinQueue } from '../src/waiting-room/join';
import { roomKeys } from '../src/waiting-room/keys';
import { releaseStep } from '../src/waiting-room/release';
import { configureRoom, openRoom, startReleasing } from '../src/waiting-room/room';
import { joinKeys, LUA, statusKeys } from '../src/waiting-room/scripts';
import { queueStatus } from '../src/waiting-room/status';

const BUYERS = Number(process.env.BUYERS ?? 100_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 256);
const HTTP_REQUESTS = Number(process.env.HTTP_REQUESTS ?? 20_000);
const HTTP_CONNECTIONS = Number(process.env.HTTP_CONNECTIONS ?? 64);
const REDIS_BENCH_REQUESTS = Number(process.env.REDIS_BENCH_REQUESTS ?? 200_000);
const SHARD_BUYERS = Number(process.env.SHARD_BUYERS ?? 20_000);

async function pool<T>(n: number, concurrency: number, fn: (i: number) => Promise<T>) {
  let next = 0;
  const lat: number[] = [];
  const workers = Array.from({ length: concurrency }, async () => {
    while (next < n) {
      const i = next++;
      const t0 = performance.now();
      await fn(i);
      lat.push(performance.now() - t0);
    }
  });
  const started = performance.now();
  await Promise.all(workers);
  const secs = (performance.now() - started) / 1000;
  lat.sort((a, b) => a - b);
  const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]!.toFixed(2);
  return { n, secs: secs.toFixed(2), perSec: Math.round(n / secs), p50ms: q(0.5), p99ms: q(0.99) };
}

const usedMemory = async (r: Redis) => Number(/used_memory:(\d+)/.exec(await r.info('memory'))?.[1] ?? 0);

async function redisBenchmark(
  bench: Bench,
  binary: string,
  host: string,
  port: number,
  db: number,
  args: string[],
  opts: { pipeline: number; n: number; keyspace: number },
) {
  const out = await bench.exec('redis-benchmark', binary, [
    '-h',
    host,
    '-p',
    String(port),
    '--dbnum',
    String(db),
    '-n',
    String(opts.n),
    '-c',
    '50',
    '-P',
    String(opts.pipeline),
    '-r',
    String(opts.keyspace),
    '-q',
    '--csv',
    ...args,
  ]);
  const line = out.trim().split('\n').pop() ?? '';
  const cols = line.split(',').map((s) => s.replaceAll('"', ''));
  return { rps: Math.round(Number(cols[1])), p50ms: cols[5], p99ms: cols[7] };
}

await runBench('waiting-room', async (bench) => {
  const redisBenchmarkBinary = reference('redis-benchmark');
  const h = await createHarness({
    env: { LOG_LEVEL: 'error', WAITING_ROOM_ABANDON_SECONDS: '3600', ADMISSION_CLAIM_WINDOW_SECONDS: '600' },
  });
  bench.defer(h.close);
  const ctx = h.services;
  const eventId = randomUUID();
  const k = roomKeys(ctx.prefix, eventId);
  const redisUrl = new URL(h.config.REDIS_URL);
  const baseRedis = serviceEnv().REDIS_URL;
  const info = new Redis(h.config.REDIS_URL);
  bench.defer(() => info.quit());
  const results: Record<string, unknown> = {
    buyers: BUYERS,
    concurrency: CONCURRENCY,
    redis: baseRedis,
    redisDb: h.redisDb,
  };
  {
    const now = h.clock.now();
    await configureRoom(ctx, {
      eventId,
      opensAt: now,
      onsaleAt: new Date(now.getTime() + 3_600_000),
      cellId: 'cell-bench',
      epoch: 1,
      maxActive: null,
      rate: 500,
      // The bench's room has no onsale record: it opens before anyone joins, so no seed orders anybody.
      fairnessCommitment: commitmentOf(newFairnessSecrets().seed),
    });
    await openRoom(ctx, eventId);
    const memBefore = await usedMemory(info);

    results.joins = await bench.measured(() =>
      pool(BUYERS, CONCURRENCY, (i) => joinQueue({ ctx, actor: { kind: 'buyer', sub: `buyer-${i}` }, eventId })),
    );
    const memAfter = await usedMemory(info);
    results.memory = {
      beforeBytes: memBefore,
      afterBytes: memAfter,
      bytesPerQueuedBuyer: Math.round((memAfter - memBefore) / BUYERS),
      queued: await ctx.redis.zcard(k.queue),
    };
    results.polls = await bench.measured(() =>
      pool(BUYERS, CONCURRENCY, (i) =>
        queueStatus({ ctx, actor: { kind: 'buyer', sub: `buyer-${(i * 7919) % BUYERS}` }, eventId }),
      ),
    );
    // Idempotent re-joins (a refresh storm) cost about as much as polls.
    results.rejoins = await pool(Math.min(BUYERS, 50_000), CONCURRENCY, (i) =>
      joinQueue({ ctx, actor: { kind: 'buyer', sub: `buyer-${i}` }, eventId }),
    );

    // Through HTTP (in-process app.request: JWT verification, rate limits, JSON) on a sample of buyers.
    const sample = 2000;
    const tokens = await Promise.all(Array.from({ length: sample }, (_, i) => h.identity.buyer(`buyer-${i}`)));
    results.httpPolls = await pool(20_000, 64, async (i) => {
      const r = await h.app.request(`/events/${eventId}/queue/me`, {
        headers: { authorization: `Bearer ${tokens[i % sample]}` },
      });
      if (r.status !== 200) throw new Error(`poll ${r.status}`);
      await r.arrayBuffer();
    });

    // What buyers call: the control-plane API as its own process, over real sockets, beside a bare Node HTTP server
    // answering a copy of a real poll's body, and between the two a floor: the waiting room's verbs behind node:http
    // without the API's HTTP stack (waiting-room-floor.ts). The same client for all three (HTTP_CONNECTIONS
    // keep-alive connections).
    const roomServer = async (name: string, entry: string, command: string[] | undefined) => {
      const port = await freePort();
      await startProcess(
        entry,
        { ...Object.fromEntries(Object.entries(h.config).map(([k, v]) => [k, String(v)])), PORT: String(port) },
        { name, readyUrl: `http://127.0.0.1:${port}/healthz`, command, spawned: bench.started },
      );
      const client = keepAlivePool(`http://127.0.0.1:${port}`, HTTP_CONNECTIONS);
      bench.defer(() => client.close());
      const call = async (method: 'GET' | 'POST', path: string, token: string) => {
        const r = await client.request(`/events/${eventId}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}` },
        });
        if (r.status !== 200) throw new Error(`${name}: ${method} ${path}: ${r.status} ${r.body.slice(0, 200)}`);
        return r.body;
      };
      return {
        poll: (token: string) => call('GET', '/queue/me', token),
        join: (token: string) => call('POST', '/queue', token),
        ticketPoll: async (ticket: string) => {
          const r = await client.request(`/events/${eventId}/queue/poll`, { headers: { 'x-queue-ticket': ticket } });
          if (r.status !== 200) throw new Error(`${name}: queue/poll: ${r.status} ${r.body.slice(0, 200)}`);
          return r.body;
        },
      };
    };
    const api = await roomServer(
      'control-plane-api',
      'control-plane/src/main.ts',
      bench.command('control-plane/src/main.ts'),
    );
    const floorEntry = 'control-plane/bench/waiting-room-floor.ts';
    const floor = await roomServer('waiting-room-floor', floorEntry, [
      process.execPath,
      '--import',
      'tsx',
      resolve(repoRoot, floorEntry),
    ]);
    const pollBody = await api.poll(tokens[0]!);
    const half = Math.floor(HTTP_REQUESTS / 2);
    // New buyers to join: the API's joins, then its half of the mixed phase; the floor's half of the mixed phase.
    const newBuyers = (name: string, n: number) =>
      Promise.all(Array.from({ length: n }, (_, i) => h.identity.buyer(`${name}-${i}`)));
    const joinTokens = await newBuyers('http-buyer', HTTP_REQUESTS);
    const floorJoinTokens = await newBuyers('floor-buyer', HTTP_REQUESTS - half);
    const barePort = await freePort();
    await startProcess(
      'load-tests/lib/bare-json-server.ts',
      { PORT: String(barePort), BARE_BODY: pollBody },
      {
        name: 'bare-node-http',
        readyUrl: `http://127.0.0.1:${barePort}/`,
        command: [process.execPath, '--import', 'tsx', resolve(repoRoot, 'load-tests/lib/bare-json-server.ts')],
        spawned: bench.started,
      },
    );
    const bare = keepAlivePool(`http://127.0.0.1:${barePort}`, HTTP_CONNECTIONS);
    bench.defer(() => bare.close());
    const bareGet = () => bare.request(`/events/${eventId}/queue/me`);
    // The ticket poll's reference: a bare Node server answering a copy of a ticket poll's body.
    const tickets = await Promise.all(
      tokens.map(async (t) => (JSON.parse(await api.poll(t)) as { ticket: string }).ticket),
    );
    const ticketPollBody = await api.ticketPoll(tickets[0]!);
    const bareTicketPort = await freePort();
    await startProcess(
      'load-tests/lib/bare-json-server.ts',
      { PORT: String(bareTicketPort), BARE_BODY: ticketPollBody },
      {
        name: 'bare-node-http-ticket-poll',
        readyUrl: `http://127.0.0.1:${bareTicketPort}/`,
        command: [process.execPath, '--import', 'tsx', resolve(repoRoot, 'load-tests/lib/bare-json-server.ts')],
        spawned: bench.started,
      },
    );
    const bareTicket = keepAlivePool(`http://127.0.0.1:${bareTicketPort}`, HTTP_CONNECTIONS);
    bench.defer(() => bareTicket.close());
    const bareTicketGet = () => bareTicket.request(`/events/${eventId}/queue/poll`);
    const polls = (server: typeof api) =>
      pool(HTTP_REQUESTS, HTTP_CONNECTIONS, (i) => server.poll(tokens[i % sample]!));
    // Joins of new buyers and polls of queued ones alternating on the same connections: the request rate the
    // buyers' side of the waiting room sustains.
    const mixed = (server: typeof api, newTokens: string[]) =>
      pool(HTTP_REQUESTS - half, HTTP_CONNECTIONS, async (i) => {
        if (i % 2 === 0) await server.join(newTokens[i]!);
        else await server.poll(tokens[i % sample]!);
      });
    // Warm the three servers (JIT, JWKS fetch, connections) before the clocks start.
    await pool(2_000, HTTP_CONNECTIONS, (i) => api.poll(tokens[i % sample]!));
    await pool(2_000, HTTP_CONNECTIONS, () => bareGet());
    await pool(2_000, HTTP_CONNECTIONS, (i) => floor.poll(tokens[i % sample]!));
    await pool(2_000, HTTP_CONNECTIONS, (i) => api.ticketPoll(tickets[i % sample]!));
    await pool(2_000, HTTP_CONNECTIONS, () => bareTicketGet());
    const bareNodeServer = await bench.measured(() => pool(HTTP_REQUESTS, HTTP_CONNECTIONS, () => bareGet()));
    const tokenPolls = await bench.measured(() => polls(api));
    const bareTicketServer = await bench.measured(() => pool(HTTP_REQUESTS, HTTP_CONNECTIONS, () => bareTicketGet()));
    const ticketPolls = await bench.measured(() =>
      pool(HTTP_REQUESTS, HTTP_CONNECTIONS, (i) => api.ticketPoll(tickets[i % sample]!)),
    );
    results.httpOverSockets = {
      pollBodyBytes: Buffer.byteLength(pollBody),
      ticketPollBodyBytes: Buffer.byteLength(ticketPollBody),
      connections: HTTP_CONNECTIONS,
      bareNodeServer,
      polls: tokenPolls,
      pollsOfBare: Number((tokenPolls.perSec / bareNodeServer.perSec).toFixed(2)),
      // Polls with the queue ticket (GET queue/poll), beside a bare server answering a same-size body.
      bareNodeServerTicketBody: bareTicketServer,
      ticketPolls,
      ticketPollsOfBare: Number((ticketPolls.perSec / bareTicketServer.perSec).toFixed(2)),
      joins: await bench.measured(() => pool(half, HTTP_CONNECTIONS, (i) => api.join(joinTokens[i]!))),
      mixed: await bench.measured(() => mixed(api, joinTokens.slice(half))),
      floor: {
        polls: await bench.measured(() => polls(floor)),
        mixed: await bench.measured(() => mixed(floor, floorJoinTokens)),
      },
    };

    // Releasing: one release step of 500 buyers, and collecting their tokens (EdDSA signing).
    await startReleasing(ctx, eventId, 500);
    h.clock.advance(1000);
    const t0 = performance.now();
    const step = await releaseStep(ctx, eventId);
    const stepMs = performance.now() - t0;
    const claim = await pool(step.released.length, 64, (i) =>
      queueStatus({ ctx, actor: { kind: 'buyer', sub: step.released[i]! }, eventId }),
    );
    results.release = { released: step.released.length, stepMs: stepMs.toFixed(2), tokenMintsPerSec: claim.perSec };

    // redis-benchmark on the same server, same DB, comparable commands.
    const host = redisUrl.hostname;
    const port = Number(redisUrl.port);
    const db = h.redisDb;
    const sha = (await ctx.redis.script('LOAD', LUA.STATUS)) as string;
    const joinSha = (await ctx.redis.script('LOAD', LUA.JOIN)) as string;
    const zb = `${ctx.prefix}bench:z`;
    const n = REDIS_BENCH_REQUESTS;
    const rb: Record<string, unknown> = {};
    for (const P of [1, 16]) {
      rb[`ZADD -P ${P}`] = await redisBenchmark(
        bench,
        redisBenchmarkBinary,
        host,
        port,
        db,
        ['ZADD', zb, '__rand_int__', 'm:__rand_int__'],
        {
          pipeline: P,
          n,
          keyspace: BUYERS,
        },
      );
      rb[`ZRANK -P ${P}`] = await redisBenchmark(
        bench,
        redisBenchmarkBinary,
        host,
        port,
        db,
        ['ZRANK', k.queue, 'buyer-__rand_int__'],
        {
          pipeline: P,
          n,
          keyspace: BUYERS,
        },
      );
      rb[`EVALSHA status -P ${P}`] = await redisBenchmark(
        bench,
        redisBenchmarkBinary,
        host,
        port,
        db,
        ['EVALSHA', sha, String(statusKeys(k).length), ...statusKeys(k), 'buyer-__rand_int__', String(now.getTime())],
        { pipeline: P, n, keyspace: BUYERS },
      );
      rb[`EVALSHA join (idempotent) -P ${P}`] = await redisBenchmark(
        bench,
        redisBenchmarkBinary,
        host,
        port,
        db,
        [
          'EVALSHA',
          joinSha,
          String(joinKeys(k).length),
          ...joinKeys(k),
          'buyer-__rand_int__',
          String(now.getTime()),
          '1',
        ],
        { pipeline: P, n, keyspace: BUYERS },
      );
    }
    results.redisBenchmark = rb;
    await ctx.redis.del(zb);
  }

  // One room of one shard and one of three, on the same Redis Cluster of three primaries: joins and polls/s through
  // the verbs (one process driving, as above), and one release step of 500 buyers merged across the shards.
  const nodes = redisClusterNodes();
  const shardRun = async (shards: number) => {
    const redis = await redisClusterClient(nodes);
    const sh = await createHarness({
      env: {
        LOG_LEVEL: 'error',
        WAITING_ROOM_SHARDS: String(shards),
        WAITING_ROOM_ABANDON_SECONDS: '3600',
        ADMISSION_CLAIM_WINDOW_SECONDS: '600',
      },
      overrides: { redis },
    });
    try {
      const sctx = sh.services;
      const event = randomUUID();
      const now = sh.clock.now();
      await configureRoom(sctx, {
        eventId: event,
        opensAt: now,
        onsaleAt: now,
        cellId: 'cell-bench',
        epoch: 1,
        maxActive: null,
        rate: 500,
        fairnessCommitment: commitmentOf(newFairnessSecrets().seed),
      });
      await openRoom(sctx, event);
      const who = (i: number) => ({ kind: 'buyer' as const, sub: `shard-buyer-${i}` });
      const joins = await bench.measured(() =>
        pool(SHARD_BUYERS, CONCURRENCY, (i) => joinQueue({ ctx: sctx, actor: who(i), eventId: event })),
      );
      const polls = await bench.measured(() =>
        pool(SHARD_BUYERS, CONCURRENCY, (i) =>
          queueStatus({ ctx: sctx, actor: who((i * 7919) % SHARD_BUYERS), eventId: event }),
        ),
      );
      await startReleasing(sctx, event, 500);
      sh.clock.advance(1000);
      const t0 = performance.now();
      const step = await releaseStep(sctx, event);
      return {
        shards,
        joins,
        polls,
        release: { released: step.released.length, stepMs: (performance.now() - t0).toFixed(2) },
      };
    } finally {
      await deleteClusterKeys(redis, sh.config.REDIS_KEY_PREFIX);
      await sh.close();
    }
  };
  const one = await shardRun(1);
  const three = await shardRun(3);
  results.shards = {
    cluster: nodes.map((n) => `${n.host}:${n.port}`),
    buyers: SHARD_BUYERS,
    oneShard: one,
    threeShards: three,
    joinsThreeOverOne: Number((three.joins.perSec / one.joins.perSec).toFixed(2)),
    pollsThreeOverOne: Number((three.polls.perSec / one.polls.perSec).toFixed(2)),
  };
  return results;
});
