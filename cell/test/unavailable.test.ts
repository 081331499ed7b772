import { randomUUID } from 'node:crypto';
import type { EventLoad } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { startCellApiOn, startPgProxy, startSilentPort } from '../../test/support/db-outage';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { eventLoad, loadIntoCell } from '../../test/support/seed';

/**
 * A dependency that is down is not an error: while the cell's PostgreSQL cannot be reached (a crash and restart looks
 * like this to the API: its connections cut, new ones refused), every route answers 503 with Retry-After in the
 * platform's error body, never 500; and when it is back, the same requests succeed with nothing restarted.
 */

let identity: TestIdentity;
let cell: TestCell;
let event: EventLoad;
let orderId: string;

beforeAll(async () => {
  identity = await startIdentity();
  cell = await startTestCell(identity);
  event = await loadIntoCell(cell, eventLoad(10));
  const buyer = await admittedBuyer(identity, cell, event.eventId, 'buyer-outage');
  const held = await buyer.hold([event.seats[0]!.id]);
  expect(held.status).toBe(202);
  orderId = ((await held.json()) as { orderId: string }).orderId;
});
afterAll(async () => {
  await cell?.close();
  await identity?.close();
});

interface Answer {
  status: number;
  retryAfter: string | null;
  code: string | undefined;
}
async function answerOf(res: Response): Promise<Answer> {
  const text = await res.text();
  let code: string | undefined;
  try {
    code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
  } catch {
    code = undefined;
  }
  return { status: res.status, retryAfter: res.headers.get('retry-after'), code };
}

/** The requests a buyer and the control plane make most, each valid, so only the database can refuse them. */
function everydayRequests(base: string, buyer: Awaited<ReturnType<typeof admittedBuyer>>) {
  const internal = { authorization: `Bearer ${cell.internalToken}` };
  return {
    availability: () =>
      fetch(`${base}/events/${event.eventId}/availability`, { headers: { authorization: `Bearer ${buyer.bearer}` } }),
    'a new hold': () => buyer.hold([event.seats[1]!.id]),
    'an order read': () => buyer.order(orderId),
    'a hold released': () => buyer.release(orderId),
    'the tickets PDF': () =>
      fetch(`${base}/events/${event.eventId}/orders/${orderId}/tickets.pdf`, {
        headers: { authorization: `Bearer ${buyer.bearer}` },
      }),
    'the signals': () => fetch(`${base}/internal/signals`, { headers: internal }),
    'an order timeline': () => fetch(`${base}/internal/orders/${orderId}/timeline`, { headers: internal }),
    'an event loaded again': () =>
      fetch(`${base}/internal/events/${event.eventId}`, {
        method: 'PUT',
        headers: { ...internal, 'content-type': 'application/json' },
        body: JSON.stringify(event),
      }),
  };
}

describe('the cell API while its PostgreSQL is down', () => {
  it('answers 503 store_unavailable with Retry-After on every route, and serves again once it is back', async () => {
    const proxy = await startPgProxy(cell.db.url);
    // Availability read through, not from the cache a reader may be served while the database is away.
    const api = await startCellApiOn(cell, identity, proxy.url, { AVAILABILITY_CACHE_MS: '0' });
    try {
      const buyer = await admittedBuyer(identity, cell, event.eventId, 'buyer-outage', api.url);
      const requests = everydayRequests(api.url, buyer);
      expect((await answerOf(await requests.availability())).status).toBe(200); // warm: the pool is open

      proxy.down();
      for (const [name, request] of Object.entries(requests)) {
        expect({ name, ...(await answerOf(await request())) }).toEqual({
          name,
          status: 503,
          retryAfter: '5',
          code: 'store_unavailable',
        });
      }

      // Every route the cell documents, with whatever a caller might send: none is a 500, every 5xx says when to retry.
      const documented = await documentedRequests(api.url, buyer.bearer);
      const answers = await Promise.all(
        documented.map(async ({ label, send }) => ({ label, ...(await answerOf(await send())) })),
      );
      const serverErrors = answers.filter((a) => a.status >= 500);
      expect(serverErrors.filter((a) => a.status !== 503 || a.retryAfter === null)).toEqual([]);
      expect(serverErrors.map((a) => a.code).every((c) => c === 'store_unavailable' || c === 'cell_unavailable')).toBe(
        true,
      );
      expect(serverErrors.length).toBeGreaterThanOrEqual(10);

      proxy.up();
      expect((await answerOf(await requests.availability())).status).toBe(200);
      expect((await answerOf(await requests['an order read']())).status).toBe(200);
      expect((await answerOf(await requests['a new hold']())).status).toBe(202);
    } finally {
      await api.close();
      await proxy.close();
    }
  });

  it('a writer that accepts connections and never answers (frozen) is a 503 within the connect time-out', async () => {
    const frozen = await startSilentPort();
    const url = new URL(cell.db.url);
    url.port = String(frozen.port);
    // No connection was ever opened: every request waits for a new one, as after a restart of the writer.
    const api = await startCellApiOn(cell, identity, url.toString(), { DB_CONNECT_TIMEOUT_MS: '500' });
    try {
      const buyer = await admittedBuyer(identity, cell, event.eventId, 'buyer-frozen', api.url);
      const started = performance.now();
      const answer = await answerOf(await buyer.order(orderId));
      expect(answer).toEqual({ status: 503, retryAfter: '5', code: 'store_unavailable' });
      expect(performance.now() - started).toBeLessThan(3_000);
    } finally {
      await api.close();
      await frozen.close();
    }
  });
});

describe("the cell's signals while its Kafka broker is frozen", () => {
  it('answers within the bound with the consumer lag unknown (null), the ledger figures as measured', async () => {
    const frozen = await startSilentPort();
    const api = await startCellApiOn(cell, identity, cell.db.url, {
      KAFKA_BROKERS: `127.0.0.1:${frozen.port}`,
    });
    try {
      const started = performance.now();
      const res = await fetch(`${api.url}/internal/signals`, {
        headers: { authorization: `Bearer ${cell.internalToken}` },
      });
      expect(res.status).toBe(200);
      const signals = (await res.json()) as { consumerLag: number | null; activeHolds: number };
      expect(signals.consumerLag).toBeNull();
      expect(signals.activeHolds).toBeGreaterThanOrEqual(1);
      // Under the control plane's 2 s budget for the call.
      expect(performance.now() - started).toBeLessThan(2_000);
    } finally {
      await api.close();
      await frozen.close();
    }
  });
});

/** Every path and method of the cell's OpenAPI document, with ids that exist and the credentials each asks for. */
async function documentedRequests(base: string, bearer: string) {
  const healthy = await fetch(`${cell.url}/openapi.json`);
  const doc = (await healthy.json()) as { paths: Record<string, Record<string, unknown>> };
  const ids: Record<string, string> = { eventId: event.eventId, orderId, ticketId: randomUUID() };
  const out: { label: string; send: () => Promise<Response> }[] = [];
  for (const [template, methods] of Object.entries(doc.paths)) {
    const path = template.replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? randomUUID());
    for (const method of Object.keys(methods)) {
      const authorization = path.startsWith('/internal/') ? `Bearer ${cell.internalToken}` : `Bearer ${bearer}`;
      const withBody = method === 'post' || method === 'put';
      out.push({
        label: `${method.toUpperCase()} ${template}`,
        send: () =>
          fetch(`${base}${path}`, {
            method: method.toUpperCase(),
            headers: {
              authorization,
              'idempotency-key': randomUUID(),
              ...(withBody && { 'content-type': 'application/json' }),
            },
            ...(withBody && { body: JSON.stringify(path.includes('/internal/events/') ? event : {}) }),
          }),
      });
    }
  }
  return out;
}
