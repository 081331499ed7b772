/**
 * The door's defences, what they cost each side (control-plane/README.md, "Proof of work and device binding"):
 *
 *   proof of work   median solve time in Node (node:crypto, what a bot would use; and the WebCrypto helper a page
 *                   uses) and in Chromium (the page's helper, contracts/src/device-proof.ts, bundled as a page loads
 *                   it) at a few difficulties; the server's check in µs (no I/O) and with its Redis SET NX; joins/s
 *                   with the proof on and off in one run (domain verbs on this machine's Redis and PostgreSQL).
 *   device binding  a DPoP proof's check in µs (key seen before, and a first one); holds/s and CPU per hold through
 *                   a real cell with unbound tokens and with bound tokens plus a proof each, in one run.
 *
 *   pnpm bench:pow   [POW_DIFFICULTIES=12,16,20 POW_SOLVES=15 JOINS=4000 HOLDS=1000 CONCURRENCY=32]
 *
 * Prints a table on stderr and the figures as JSON on stdout.
 */
import { createHash, randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { checkDpopProof, DPOP_JTI_TTL_SECONDS, type EventLoad } from '@onsale/contracts';
import { createDeviceKey, dpopProof, leadingZeroBits, powInput, solveChallenge } from '@onsale/contracts/device-proof';
import { checkProofOfWork, issueChallenge, setDoor } from '@onsale/control-plane/waiting-room/door';
import { joinQueue } from '@onsale/control-plane/waiting-room/join';
import { buildSync } from 'esbuild';
import { launchChromium } from '../../test/support/browser';
import { startTestCell } from '../../test/support/cell';
import { addCell, createHarness, scheduledEvent } from '../../test/support/control-plane';
import { startIdentity } from '../../test/support/identity';
import { eventLoad, loadIntoCell } from '../../test/support/seed';
import { repoRoot } from '../../test/support/services';
import { runBench } from '../lib/harness';

const DIFFICULTIES = (process.env.POW_DIFFICULTIES ?? '12,16,20').split(',').map(Number);
const SOLVES = Number(process.env.POW_SOLVES ?? 15);
const JOINS = Number(process.env.JOINS ?? 4000);
const HOLDS = Number(process.env.HOLDS ?? 1000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 32);
/** The difficulty of the on/off join run: low, so the run measures the server, not the client's solving. */
const JOIN_DIFFICULTY = 8;

const say = (line: string) => process.stderr.write(`${line}\n`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number, digits = 1) => Number(x.toFixed(digits));

function solveNode(challenge: string, difficulty: number) {
  for (let counter = 0; ; counter++)
    if (leadingZeroBits(createHash('sha256').update(powInput(challenge, counter)).digest()) >= difficulty)
      return counter;
}

async function timed(fn: () => unknown): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/**
 * CPU µs per call of a synchronous check, after a warm-up (unless `cold`). CPU time, not wall time: on a machine
 * whose cores other work shares, the wall clock counts the waits for a core too.
 */
function microseconds(n: number, fn: (i: number) => unknown, cold = false) {
  if (!cold) for (let i = 0; i < Math.min(1000, n); i++) fn(i);
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) fn(i);
  const cpu = process.cpuUsage(cpu0);
  return round((cpu.user + cpu.system) / n, 2);
}

async function pool(n: number, concurrency: number, fn: (i: number) => Promise<void>) {
  let next = 0;
  const lat: number[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        const s = performance.now();
        await fn(i);
        lat.push(performance.now() - s);
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  lat.sort((a, b) => a - b);
  return {
    n,
    perSec: Math.round(n / secs),
    p50ms: round(lat[Math.floor(lat.length / 2)]!, 2),
    p99ms: round(lat[Math.floor(lat.length * 0.99)]!, 2),
    cpuUsPerOp: Math.round((cpu.user + cpu.system) / n),
  };
}

await runBench('pow', async (bench) => {
  const challenge = () => `${Buffer.from(randomUUID()).toString('base64url')}.${randomUUID()}`;

  // 1. Client cost: median solve time, Node and Chromium.
  interface Solving {
    nodeCryptoMs: number;
    nodeWebCryptoMs?: number;
    chromiumWebCryptoMs?: number;
    chromiumSamples?: number;
  }
  const solving: Record<number, Solving> = {};
  for (const d of DIFFICULTIES) {
    const node: number[] = [];
    const webcryptoNode: number[] = [];
    for (let i = 0; i < SOLVES; i++) {
      const c = challenge();
      node.push(await timed(() => solveNode(c, d)));
      if (d <= 16) webcryptoNode.push(await timed(() => solveChallenge(c, d)));
    }
    solving[d] = { nodeCryptoMs: round(median(node)) };
    if (webcryptoNode.length) solving[d]!.nodeWebCryptoMs = round(median(webcryptoNode));
    say(`solved ${SOLVES} at ${d} bits in Node`);
  }
  const bundle = buildSync({
    entryPoints: [resolve(repoRoot, 'contracts/src/device-proof.ts')],
    bundle: true,
    format: 'iife',
    globalName: 'deviceProof',
    write: false,
    target: 'es2022',
  }).outputFiles[0]!.text;
  const browser = await launchChromium();
  bench.defer(() => browser.close());
  const page = await browser.newPage();
  // A secure context (WebCrypto needs one): an http://127.0.0.1 origin is one.
  await page.route('http://127.0.0.1:9/', (route) =>
    route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>pow</title>' }),
  );
  await page.goto('http://127.0.0.1:9/');
  await page.addScriptTag({ content: bundle });
  for (const d of DIFFICULTIES) {
    const samples = d >= 20 ? Math.max(3, Math.floor(SOLVES / 3)) : SOLVES;
    const ms = await page.evaluate(
      async ({ d, samples }) => {
        // biome-ignore lint/suspicious/noExplicitAny: the bundle's global
        const lib = (globalThis as any).deviceProof;
        const out: number[] = [];
        for (let i = 0; i < samples; i++) {
          const t0 = performance.now();
          await lib.solveChallenge(`${crypto.randomUUID()}.${crypto.randomUUID()}`, d);
          out.push(performance.now() - t0);
        }
        return out;
      },
      { d, samples },
    );
    solving[d]!.chromiumWebCryptoMs = round(median(ms));
    solving[d]!.chromiumSamples = samples;
    say(`solved ${samples} at ${d} bits in Chromium`);
  }
  const browserDpopMs = await page.evaluate(async () => {
    // biome-ignore lint/suspicious/noExplicitAny: the bundle's global
    const lib = (globalThis as any).deviceProof;
    const key = await lib.createDeviceKey();
    const t0 = performance.now();
    for (let i = 0; i < 200; i++)
      await lib.dpopProof(key, { method: 'POST', url: 'https://tickets.example/events/e/holds', accessToken: 'x.y.z' });
    return (performance.now() - t0) / 200;
  });

  // 2. Server cost of a proof of work, and joins/s with it on and off.
  const h = await createHarness({ env: { LOG_LEVEL: 'error', WAITING_ROOM_ABANDON_SECONDS: '3600' } });
  bench.defer(h.close);
  await addCell(h, 'cell-bench');
  const tenant = await h.tenant();
  const ctx = h.services;
  const [off, on] = await Promise.all([
    scheduledEvent(h, tenant.manager, { opensInMs: 0, onsaleInMs: 3_600_000 }),
    scheduledEvent(h, tenant.manager, { opensInMs: 0, onsaleInMs: 3_600_000 }),
  ]);
  const door = await setDoor(ctx, on.eventId, {
    powDifficulty: JOIN_DIFFICULTY,
    powAdaptiveAbovePerSecond: null,
    powMaxDifficulty: JOIN_DIFFICULTY,
    requireDeviceBinding: false,
  });
  const buyer = (i: number) => ({ kind: 'buyer' as const, sub: `pow-buyer-${i}` });
  const solved: { challenge: string; counter: number }[] = [];
  for (let i = 0; i < JOINS; i++) {
    const c = await issueChallenge({ ctx, actor: buyer(i), eventId: on.eventId });
    solved.push({ challenge: c.challenge, counter: solveNode(c.challenge, c.difficulty) });
  }
  const now = h.clock.now().getTime();
  const verifyUs = microseconds(JOINS, (i) => checkProofOfWork(ctx, buyer(i), on.eventId, door, solved[i], now));
  const issueUs = round(
    ((await timed(() =>
      Promise.all(
        Array.from({ length: 2000 }, (_, i) => issueChallenge({ ctx, actor: buyer(i), eventId: on.eventId })),
      ),
    )) *
      1000) /
      2000,
    1,
  );
  // Warm-up (JIT, pools, the group commit), off the record: buyers of their own, both rooms.
  const warm = Math.min(500, JOINS);
  for (const [eventId, pow] of [
    [off.eventId, false],
    [on.eventId, true],
  ] as const)
    await pool(warm, CONCURRENCY, async (i) => {
      const actor = { kind: 'buyer' as const, sub: `warm-${i}` };
      const c = pow ? await issueChallenge({ ctx, actor, eventId }) : undefined;
      const proof = c ? { challenge: c.challenge, counter: solveNode(c.challenge, c.difficulty) } : undefined;
      await joinQueue({ ctx, actor, eventId, door: { pow: proof } });
    });
  const joinsOff = await pool(JOINS, CONCURRENCY, (i) =>
    joinQueue({ ctx, actor: buyer(i), eventId: off.eventId }).then(() => undefined),
  );
  const joinsOn = await pool(JOINS, CONCURRENCY, (i) =>
    joinQueue({ ctx, actor: buyer(i), eventId: on.eventId, door: { pow: solved[i] } }).then(() => undefined),
  );

  // 3. Device binding: a proof's check, and holds through a real cell with and without.
  const identity = await startIdentity();
  bench.defer(identity.close);
  const cell = await startTestCell(identity, { cellId: 'cell-bench' });
  bench.defer(cell.close);
  const devices = await Promise.all(Array.from({ length: HOLDS }, () => createDeviceKey()));
  const url = `${cell.url}/events/e/holds`;
  const proofs = await Promise.all(
    devices.map((key, i) => dpopProof(key, { method: 'POST', url, accessToken: `token-${i}` })),
  );
  const seconds = Math.floor(Date.now() / 1000);
  const expected = (i: number) => ({
    jkt: devices[i]!.jkt,
    accessToken: `token-${i}`,
    method: 'POST',
    path: '/events/e/holds',
    nowSeconds: seconds,
  });
  // A first proof by a key imports it (and keeps it); every later one of that buyer finds it.
  const firstKeyUs = microseconds(HOLDS, (i) => checkDpopProof(proofs[i], expected(i)), true);
  const knownKeyUs = microseconds(HOLDS, (i) => checkDpopProof(proofs[i], expected(i)));
  const signNodeUs = round(
    ((await timed(() =>
      Promise.all(devices.map((key) => dpopProof(key, { method: 'POST', url, accessToken: 'x.y.z' }))),
    )) *
      1000) /
      HOLDS,
    1,
  );

  const holdRun = async (bound: boolean, n = HOLDS) => {
    const event: EventLoad = await loadIntoCell(cell, eventLoad(n));
    // Keys the cell has not seen: each buyer's first hold, the dearer case.
    const keys = bound ? await Promise.all(Array.from({ length: n }, () => createDeviceKey())) : [];
    const holdsUrl = `${cell.url}/events/${event.eventId}/holds`;
    const buyers = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const userId = `hold-${bound ? 'bound' : 'bearer'}-${i}`;
        const token = await identity.admissionToken({
          sub: userId,
          eventId: event.eventId,
          purchaseCell: cell.cellId,
          ...(bound ? { jkt: keys[i]!.jkt } : {}),
        });
        return { bearer: await identity.buyerToken(userId), token };
      }),
    );
    // Proofs are made before the clock starts: the run measures the servers' side (a client's signing is above).
    const headers = await Promise.all(
      buyers.map(async (b, i) => ({
        authorization: `Bearer ${b.bearer}`,
        'x-admission-token': b.token,
        'content-type': 'application/json',
        'idempotency-key': randomUUID(),
        ...(bound ? { dpop: await dpopProof(keys[i]!, { method: 'POST', url: holdsUrl, accessToken: b.token }) } : {}),
      })),
    );
    const result = await pool(n, CONCURRENCY, async (i) => {
      const res = await fetch(holdsUrl, {
        method: 'POST',
        headers: headers[i]!,
        body: JSON.stringify({ seatIds: [event.seats[i]!.id] }),
      });
      if (res.status !== 202) throw new Error(`hold ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    });
    return result;
  };
  await holdRun(false, Math.min(200, HOLDS)); // warm-up, off the record
  const holdsBearer = await holdRun(false);
  const holdsBound = await holdRun(true);

  const pow = DIFFICULTIES.map((d) => ({ difficulty: d, ...solving[d] }));
  say('');
  say('proof of work: client solve time (median ms)');
  say('difficulty | Node node:crypto | Node WebCrypto | Chromium WebCrypto');
  for (const r of pow)
    say(
      `${String(r.difficulty).padStart(10)} | ${String(r.nodeCryptoMs).padStart(16)} | ${String(r.nodeWebCryptoMs ?? '-').padStart(14)} | ${String(r.chromiumWebCryptoMs).padStart(18)} (n=${r.chromiumSamples})`,
    );
  say(
    `server: issue a challenge ${issueUs} µs wall (with its Redis round trip), check a proof ${verifyUs} µs CPU (no I/O)`,
  );
  say(`joins/s (${JOINS} buyers, ${CONCURRENCY} at once), proof at ${JOIN_DIFFICULTY} bits pre-solved:`);
  say(
    `  off: ${joinsOff.perSec}/s p50 ${joinsOff.p50ms} ms p99 ${joinsOff.p99ms} ms, ${joinsOff.cpuUsPerOp} µs CPU/join`,
  );
  say(`  on:  ${joinsOn.perSec}/s p50 ${joinsOn.p50ms} ms p99 ${joinsOn.p99ms} ms, ${joinsOn.cpuUsPerOp} µs CPU/join`);
  say('');
  say('device binding (DPoP) per hold');
  say(
    `check a proof: ${knownKeyUs} µs CPU (key seen before), ${firstKeyUs} µs CPU (first proof of a key); jti TTL ${DPOP_JTI_TTL_SECONDS} s`,
  );
  say(`sign a proof: ${signNodeUs} µs wall in Node WebCrypto, ${round(browserDpopMs * 1000, 0)} µs wall in Chromium`);
  say(`holds through a cell (${HOLDS}, ${CONCURRENCY} at once; CPU of this process: cell + client):`);
  say(
    `  bearer token: ${holdsBearer.perSec}/s p50 ${holdsBearer.p50ms} ms p99 ${holdsBearer.p99ms} ms, ${holdsBearer.cpuUsPerOp} µs CPU/hold`,
  );
  say(
    `  bound + DPoP: ${holdsBound.perSec}/s p50 ${holdsBound.p50ms} ms p99 ${holdsBound.p99ms} ms, ${holdsBound.cpuUsPerOp} µs CPU/hold`,
  );
  return {
    pow,
    server: { issueUs, verifyUs },
    joins: { difficulty: JOIN_DIFFICULTY, off: joinsOff, on: joinsOn },
    dpop: {
      checkUs: { knownKey: knownKeyUs, firstKey: firstKeyUs },
      signUs: { node: signNodeUs, chromium: round(browserDpopMs * 1000, 0) },
      holds: { bearer: holdsBearer, bound: holdsBound },
    },
  };
});
