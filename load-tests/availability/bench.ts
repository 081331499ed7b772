/**
 * Availability polls for a 20,000-seat event with a third of its seats held: the compact document
 * (`/availability/seats`, a bitmap per section) beside today's list of free seat ids (`/availability`), both
 * from the same cell API process (its bundle) on a real PostgreSQL, through the same keep-alive client, in one
 * run. Reported per path: bytes per poll, polls/s, and the API process's CPU per poll (so polls/s per core);
 * and the compact document revalidated with If-None-Match (304, what a poll costs while nothing changed).
 *
 *   pnpm bench:availability   [BENCH_SEATS=20000 BENCH_HELD=0.33 BENCH_POLLS=4000 BENCH_CONNECTIONS=32]
 *
 * Targets (issue 41): the document at least 20x smaller and 10x more polls/s per core than the list.
 */
import { randomUUID } from 'node:crypto';
import { startCellApiProcess } from '../../test/support/cell-process';
import { createTestDatabase } from '../../test/support/db';
import { startIdentity } from '../../test/support/identity';
import { eventLoad } from '../../test/support/seed';
import { runBench } from '../lib/harness';
import { keepAlivePool } from '../lib/http';
import { round } from '../lib/stats';

const SEATS = Number(process.env.BENCH_SEATS ?? 20_000);
const HELD = Number(process.env.BENCH_HELD ?? 0.33);
const POLLS = Number(process.env.BENCH_POLLS ?? 4_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const CELL_ID = 'bench-availability';
const PORT = 18_291;
const SEATS_PER_HOLD = 4;

await runBench('availability', async (bench) => {
  const db = await createTestDatabase('bench_availability');
  bench.defer(db.drop);
  const identity = await startIdentity();
  bench.defer(identity.close);
  const cell = await startCellApiProcess(identity, {
    cellId: CELL_ID,
    port: PORT,
    poolSize: 8,
    database: db,
    runtime: bench.runtime,
    spawned: bench.started,
  });
  const event = await cell.loadEvent(eventLoad(SEATS, { maxSeatsPerOrder: SEATS_PER_HOLD }));
  const client = keepAlivePool(cell.url, CONNECTIONS);
  bench.defer(client.close);

  // A third of the map held, through the API as buyers hold, so the free seats are scattered as in a sale.
  const holds = Math.floor((SEATS * HELD) / SEATS_PER_HOLD);
  await inParallel(holds, CONNECTIONS, async (i) => {
    const userId = `bench-${i}`;
    const res = await client.request(`/events/${event.eventId}/holds`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await identity.buyerToken(userId)}`,
        'x-admission-token': await identity.admissionToken({
          sub: userId,
          eventId: event.eventId,
          purchaseCell: CELL_ID,
        }),
        'idempotency-key': randomUUID(),
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        seatIds: event.seats.slice(i * SEATS_PER_HOLD * 3, i * SEATS_PER_HOLD * 3 + SEATS_PER_HOLD).map((s) => s.id),
      }),
    });
    if (res.status !== 202) throw new Error(`hold ${i}: ${res.status} ${res.body}`);
  });

  const etag = (await fetch(`${cell.url}/events/${event.eventId}/availability/seats`)).headers.get('etag');
  if (!etag) throw new Error('the availability document has no ETag');
  const paths = {
    list: { path: `/events/${event.eventId}/availability`, headers: {} as Record<string, string> },
    compact: { path: `/events/${event.eventId}/availability/seats`, headers: {} as Record<string, string> },
    'compact-304': { path: `/events/${event.eventId}/availability/seats`, headers: { 'if-none-match': etag } },
  };
  const results: Record<string, unknown> = {};
  for (const [name, { path, headers }] of Object.entries(paths)) {
    let bytes = 0;
    const statuses: Record<number, number> = {};
    // Warm: the first poll of a period reads the database; the rest share it, as buyers' polls do.
    await inParallel(200, CONNECTIONS, () => client.request(path, { headers }));
    const { cpu } = await bench.measured(() =>
      inParallel(POLLS, CONNECTIONS, async () => {
        const res = await client.request(path, { headers });
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        bytes += Buffer.byteLength(res.body);
      }),
    );
    const seconds = cpu.seconds;
    const apiCores = cpu.coresByProcess[cell.api.name];
    const apiCpuSeconds = apiCores === undefined ? undefined : apiCores * seconds;
    results[name] = {
      statuses,
      bytesPerPoll: Math.round(bytes / POLLS),
      pollsPerSecond: Math.round(POLLS / seconds),
      apiCpuMsPerPoll: apiCpuSeconds === undefined ? null : round((apiCpuSeconds * 1000) / POLLS, 3),
      pollsPerCoreSecond: apiCpuSeconds ? Math.round(POLLS / apiCpuSeconds) : null,
      cpu,
    };
  }
  const list = results.list as { bytesPerPoll: number; pollsPerSecond: number; pollsPerCoreSecond: number | null };
  const compact = results.compact as typeof list;
  return {
    seats: SEATS,
    held: holds * SEATS_PER_HOLD,
    polls: POLLS,
    connections: CONNECTIONS,
    results,
    ratios: {
      bytesSmaller: round(list.bytesPerPoll / compact.bytesPerPoll, 1),
      pollsPerSecond: round(compact.pollsPerSecond / list.pollsPerSecond, 1),
      pollsPerCore:
        list.pollsPerCoreSecond && compact.pollsPerCoreSecond
          ? round(compact.pollsPerCoreSecond / list.pollsPerCoreSecond, 1)
          : null,
    },
    targets: { bytesSmaller: 20, pollsPerCore: 10 },
  };
});

async function inParallel(n: number, concurrency: number, fn: (i: number) => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}
