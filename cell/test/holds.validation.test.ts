import { randomUUID } from 'node:crypto';
import type { EventLoad } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admittedBuyer, type Buyer } from '../../test/support/buyer';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { eventLoad, loadIntoCell } from '../../test/support/seed';

let identity: TestIdentity;
let cell: TestCell;
let event: EventLoad;
let buyer: Buyer;

beforeAll(async () => {
  identity = await startIdentity();
  cell = await startTestCell(identity);
  event = await loadIntoCell(cell, eventLoad(20));
  buyer = await admittedBuyer(identity, cell, event.eventId);
});
afterAll(async () => {
  await cell?.close();
  await identity?.close();
});

const nothingWritten = async () =>
  expect(
    await cell.db.query(`SELECT (SELECT count(*) FROM orders)::int AS o, (SELECT count(*) FROM idempotency_keys)::int AS k,
                                (SELECT count(*) FROM outbox)::int AS e`),
  ).toEqual([{ o: 0, k: 0, e: 0 }]);

describe('bad hold bodies', () => {
  const ids = () => event.seats.map((s) => s.id);
  const cases: [string, () => string, string][] = [
    ['nine seats', () => JSON.stringify({ seatIds: ids().slice(0, 9) }), 'seatIds'],
    ['duplicate ids', () => JSON.stringify({ seatIds: [ids()[0], ids()[0]] }), 'seatIds'],
    ['one id spelled in two cases', () => JSON.stringify({ seatIds: [ids()[0], ids()[0]!.toUpperCase()] }), 'seatIds'],
    ['a non-uuid', () => JSON.stringify({ seatIds: ['seat-1'] }), 'seatIds.0'],
    ['an empty list', () => JSON.stringify({ seatIds: [] }), 'seatIds'],
    ['an empty object', () => JSON.stringify({}), 'seatIds'],
    ['a string for the list', () => JSON.stringify({ seatIds: ids()[0] }), 'seatIds'],
    ['numbers for ids', () => JSON.stringify({ seatIds: [1, 2] }), 'seatIds.0'],
    ['an unknown field', () => JSON.stringify({ seatIds: [ids()[0]], price: 1 }), 'price'],
    ['a thousand ids', () => JSON.stringify({ seatIds: Array.from({ length: 1_000 }, () => randomUUID()) }), 'seatIds'],
  ];
  for (const [name, body, field] of cases) {
    it(`${name}: 400 naming ${field}, nothing written`, async () => {
      const res = await buyer.holdRaw(body());
      expect(res.status).toBe(400);
      const json = await res.json();
      expect(json.error.code).toBe('validation_failed');
      expect(json.error.details.issues.map((i: { path: string }) => i.path)).toContain(field);
      expect(json.error.message, 'the message names the first field refused').toMatch(/^[\w.]+: /);
      await nothingWritten();
    });
  }

  it('malformed JSON: 400 bad_request', async () => {
    const res = await buyer.holdRaw('{"seatIds": [');
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('bad_request');
    await nothingWritten();
  });

  it('a body that is not JSON: 415 naming the header', async () => {
    const res = await buyer.holdRaw(JSON.stringify({ seatIds: [ids()[0]] }), randomUUID(), {
      'content-type': 'text/plain',
    });
    expect(res.status).toBe(415);
    expect((await res.json()).error).toMatchObject({
      code: 'unsupported_media_type',
      details: { header: 'content-type', given: 'text/plain' },
    });
    await nothingWritten();
  });

  it('a body over 64 KiB: 413 before it is read further', async () => {
    const res = await buyer.holdRaw(JSON.stringify({ seatIds: [ids()[0]], pad: 'x'.repeat(70_000) }));
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe('payload_too_large');
    await nothingWritten();
  });

  it('a missing or malformed Idempotency-Key: 400 naming the header', async () => {
    for (const key of ['', 'short', 'has spaces in it']) {
      const res = await buyer.hold([ids()[0]!], key);
      expect(res.status).toBe(400);
      const json = await res.json();
      expect(json.error.details.issues.map((i: { path: string }) => i.path)).toContain('idempotency-key');
    }
    await nothingWritten();
  });

  it('a non-uuid event id in the path: 400 naming eventId', async () => {
    const res = await fetch(`${cell.url}/events/not-a-uuid/orders/${randomUUID()}`, {
      headers: { authorization: `Bearer ${buyer.bearer}` },
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error.details.issues[0].path).toBe('eventId');
  });

  it('every error carries the request id it was answered with', async () => {
    const res = await buyer.holdRaw('{}');
    expect((await res.json()).error.requestId).toBe(res.headers.get('x-request-id'));
  });
});

describe("the cell's document says what the routes do", () => {
  // biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is inspected ad hoc
  const doc = async (): Promise<any> => (await fetch(`${cell.url}/openapi.json`)).json();

  it('the hold body declares its seat ids distinct (uniqueItems), as the validator refuses duplicates', async () => {
    const d = await doc();
    const body = d.paths['/events/{eventId}/holds'].post.requestBody.content['application/json'].schema;
    expect(body.properties.seatIds.uniqueItems).toBe(true);
  });

  it('routes with uuid path parameters document the 400 they answer to a bad one', async () => {
    const d = await doc();
    const routes: [string, string][] = [
      ['/events/{eventId}/availability', 'get'],
      ['/events/{eventId}/orders/{orderId}', 'get'],
      ['/events/{eventId}/orders/{orderId}/hold', 'delete'],
    ];
    for (const [path, method] of routes) {
      expect(d.paths[path][method].responses, `${method} ${path}`).toHaveProperty('400');
      const res = await fetch(`${cell.url}${path.replace('{eventId}', 'x').replace('{orderId}', 'y')}`, {
        method: method.toUpperCase(),
        headers: { authorization: `Bearer ${buyer.bearer}` },
      });
      expect(res.status, `${method} ${path}`).toBe(400);
    }
  });

  it('every POST and PUT lists the 413 its body limit answers, and those with a body the 415 of a wrong media type', async () => {
    const d = await doc();
    const written = Object.entries(d.paths).flatMap(([path, ops]) =>
      Object.entries(ops as Record<string, { requestBody?: unknown; responses: object }>)
        .filter(([method]) => method === 'post' || method === 'put')
        .map(([method, op]) => [`${method} ${path}`, Object.keys(op.responses), !!op.requestBody] as const),
    );
    expect(written.length).toBeGreaterThanOrEqual(8);
    for (const [op, statuses, bodied] of written) {
      expect(statuses, op).toContain('413');
      expect(statuses.includes('415'), op).toBe(bodied);
    }
    const over = await fetch(`${cell.url}/internal/revocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sub: 'x'.repeat(8 * 1024) }),
    });
    expect(over.status).toBe(413);
    expect((await over.json()).error.code).toBe('payload_too_large');
  });

  it('an undeclared method on a known path is a 405 with Allow', async () => {
    const res = await fetch(`${cell.url}/events/${event.eventId}/holds`, { method: 'PUT' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect((await res.json()).error.code).toBe('method_not_allowed');
  });

  it('a trailing slash is another path, which no route serves: 404, not a 405 allowing the method used', async () => {
    for (const [method, path] of [
      ['POST', `/events/${event.eventId}/holds/`],
      ['GET', `/events/${event.eventId}/availability/`],
    ] as const) {
      const res = await fetch(`${cell.url}${path}`, { method, headers: { 'content-type': 'application/json' } });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.headers.get('allow'), `${method} ${path}`).toBeNull();
      expect((await res.json()).error.code).toBe('not_found');
    }
  });
});
