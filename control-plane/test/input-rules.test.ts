import { NUL_MESSAGE } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCell, createHarness, type Harness, smallSeatMap } from '../../test/support/control-plane';

let h: Harness;
let t: Awaited<ReturnType<Harness['tenant']>>;
let eventId: string;
const startsAt = new Date(Date.now() + 30 * 86_400_000).toISOString();

beforeAll(async () => {
  h = await createHarness();
  await addCell(h, 'cell-in1');
  t = await h.tenant('Inputs');
  const r = await h.req('POST', '/events', { token: t.manager, body: { name: 'Show', venue: 'Hall', startsAt } });
  expect(r.status).toBe(201);
  eventId = r.body.id;
});
afterAll(() => h?.close());

/** The answer every refused input gets: 400, validation_failed, the field named in details.issues. */
// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected ad hoc
type Json = any;

function expectFieldRefused(r: { status: number; body: Json }, path: string, message?: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(r.body.error.code).toBe('validation_failed');
  expect(r.body.error.details.issues).toContainEqual(message ? { path, message } : expect.objectContaining({ path }));
}

const event = async () => (await h.req('GET', `/events/${eventId}`, { token: t.manager })).body;
const count = async (table: string) =>
  Number((await h.services.pool.query(`select count(*)::int as n from ${table}`)).rows[0].n);

describe('a NUL character in any text input is a 400 naming the field, and nothing is written', () => {
  it('POST /events name', async () => {
    const before = await count('events');
    const r = await h.req('POST', '/events', { token: t.manager, body: { name: 'a\u0000b', venue: 'Hall', startsAt } });
    expectFieldRefused(r, 'name', NUL_MESSAGE);
    expect(await count('events')).toBe(before);
  });

  it('PATCH /events/{id} venue', async () => {
    const r = await h.req('PATCH', `/events/${eventId}`, { token: t.manager, body: { venue: 'x\u0000' } });
    expectFieldRefused(r, 'venue', NUL_MESSAGE);
    expect((await event()).venue).toBe('Hall');
  });

  it('PUT /events/{id}/placement cellId', async () => {
    const before = await event();
    const r = await h.req('PUT', `/events/${eventId}/placement`, { token: t.manager, body: { cellId: 'a\u0000' } });
    expectFieldRefused(r, 'cellId', NUL_MESSAGE);
    expect(await event()).toEqual(before);
  });

  it('GET /events/{id}/seat-map?after=%00 (a query parameter)', async () => {
    const r = await h.req('GET', `/events/${eventId}/seat-map?after=%00`, { token: t.manager });
    expectFieldRefused(r, 'after', NUL_MESSAGE);
  });

  it('PUT /events/{id}/seat-map, a label in the JSON upload and in the CSV upload', async () => {
    const json = {
      tiers: [{ code: 'A', name: 'Stalls', price: 7500, currency: 'eur' }],
      seats: [{ section: 'S1', row: 'A', label: 'A-1\u0000', tier: 'A' }],
    };
    expectFieldRefused(
      await h.req('PUT', `/events/${eventId}/seat-map`, { token: t.manager, body: json }),
      'seats.0.label',
      NUL_MESSAGE,
    );
    const csv = 'section,row,seat,tier,price,currency\nS1\u0000,A,1,A,7500,eur\n';
    expectFieldRefused(
      await h.req('PUT', `/events/${eventId}/seat-map`, { token: t.manager, raw: csv }),
      'seats.0.section',
      NUL_MESSAGE,
    );
    expect(await count('seats')).toBe(0);
    expect((await event()).seatMapVersion).toBe(0);
  });

  it('POST /operator/tenants name', async () => {
    const before = await count('tenants');
    const r = await h.req('POST', '/operator/tenants', { token: h.operatorToken, body: { name: 'T\u0000' } });
    expectFieldRefused(r, 'name', NUL_MESSAGE);
    expect(await count('tenants')).toBe(before);
  });

  it('POST /operator/cells and PATCH /operator/cells/{id} region', async () => {
    const before = await count('cells');
    const created = await h.req('POST', '/operator/cells', {
      token: h.operatorToken,
      body: { id: 'cell-nul', baseUrl: 'http://127.0.0.1:9', region: 'eu\u0000' },
    });
    expectFieldRefused(created, 'region', NUL_MESSAGE);
    expect(await count('cells')).toBe(before);
    const patched = await h.req('PATCH', '/operator/cells/cell-in1', {
      token: h.operatorToken,
      body: { region: 'eu\u0000' },
    });
    expectFieldRefused(patched, 'region', NUL_MESSAGE);
    const cells = (await h.req('GET', '/operator/cells', { token: h.operatorToken })).body.cells;
    expect(cells.find((c: { id: string }) => c.id === 'cell-in1').region).toBe('eu-west-1');
  });

  it('POST /operator/admissions/revocations jti', async () => {
    const before = await count('revocations');
    const r = await h.req('POST', '/operator/admissions/revocations', {
      token: h.operatorToken,
      body: { jti: 'jti-0000\u0000', reason: 'fraud' },
    });
    expectFieldRefused(r, 'jti', NUL_MESSAGE);
    expect(await count('revocations')).toBe(before);
  });
});

describe('an event start: one rule for create and update, and a refused write writes nothing', () => {
  it.each([
    ['a year below 100', '0018-02-14T00:00:00Z'],
    ['a year that would read back as 19xx', '0099-06-01T00:00:00Z'],
    ['a past date', '1999-01-01T00:00:00Z'],
  ])('PATCH and POST refuse %s', async (_what, value) => {
    const patched = await h.req('PATCH', `/events/${eventId}`, { token: t.manager, body: { startsAt: value } });
    expectFieldRefused(patched, 'startsAt', 'must be in the future');
    expect((await event()).startsAt).toBe(startsAt);
    const list = await h.req('GET', '/events', { token: t.manager });
    expect(list.status).toBe(200);
    const created = await h.req('POST', '/events', {
      token: t.manager,
      body: { name: 'Old', venue: 'Hall', startsAt: value },
    });
    expectFieldRefused(created, 'startsAt', 'must be in the future');
  });

  it('a day that does not exist is refused, not rolled into the next month', async () => {
    const r = await h.req('PATCH', `/events/${eventId}`, {
      token: t.manager,
      body: { startsAt: '2099-02-30T20:00:00Z' },
    });
    expectFieldRefused(r, 'startsAt', 'not a calendar date');
    expect((await event()).startsAt).toBe(startsAt);
  });

  it('a future start round-trips as written', async () => {
    const later = '2099-06-01T19:30:00.000Z';
    const r = await h.req('PATCH', `/events/${eventId}`, { token: t.manager, body: { startsAt: later } });
    expect(r.status).toBe(200);
    expect(r.body.startsAt).toBe(later);
    expect((await event()).startsAt).toBe(later);
    await h.req('PATCH', `/events/${eventId}`, { token: t.manager, body: { startsAt } });
  });
});

describe("the dates before an event's start: one rule, whichever verb moves one, and a refused write writes nothing", () => {
  const DAY = 86_400_000;
  const at = (days: number) => new Date(h.clock.now().getTime() + days * DAY).toISOString();
  const iso = (v: string) => new Date(v).toISOString();

  async function onsaleEvent() {
    const ev = await h.req('POST', '/events', {
      token: t.manager,
      body: { name: 'Dated', venue: 'Hall', startsAt: at(30) },
    });
    expect(ev.status).toBe(201);
    const id = ev.body.id as string;
    expect((await h.req('PUT', `/events/${id}/seat-map`, { token: t.manager, body: smallSeatMap(4) })).status).toBe(
      200,
    );
    const onsale = await h.req('PUT', `/events/${id}/onsale`, {
      token: t.manager,
      body: { roomOpensAt: at(19.9), onsaleAt: at(20), perBuyerLimit: 4, maxReleaseRate: 50 },
    });
    expect(onsale.status, JSON.stringify(onsale.body)).toBe(200);
    return id;
  }
  const get = async (id: string) => (await h.req('GET', `/events/${id}`, { token: t.manager })).body;

  it('PATCH cannot move the start to or before the onsale; PUT onsale cannot move the onsale to or past the start', async () => {
    const id = await onsaleEvent();
    const before = await get(id);
    for (const startsAt of [at(10), before.onsaleAt]) {
      const r = await h.req('PATCH', `/events/${id}`, { token: t.manager, body: { startsAt } });
      expectFieldRefused(r, 'startsAt', `must be after the onsale starts (${iso(before.onsaleAt)})`);
    }
    expect(await get(id)).toEqual(before);
    const late = await h.req('PUT', `/events/${id}/onsale`, {
      token: t.manager,
      body: { roomOpensAt: at(30), onsaleAt: before.startsAt, perBuyerLimit: 4, maxReleaseRate: 50 },
    });
    expectFieldRefused(late, 'onsaleAt', 'the onsale must start before the event');
    expect(await get(id)).toEqual(before);
    // A start still after the onsale is taken.
    const ok = await h.req('PATCH', `/events/${id}`, { token: t.manager, body: { startsAt: at(21) } });
    expect(ok.status).toBe(200);
  });

  it('PUT onsale refuses a room or sale time more than five minutes past, unless the onsale already has it', async () => {
    const id = await onsaleEvent();
    const before = await get(id);
    const onsale = async () => (await h.req('GET', `/events/${id}/onsale`, { token: t.manager })).body;
    const scheduled = await onsale();
    const put = (roomOpensAt: string, onsaleAt: string) =>
      h.req('PUT', `/events/${id}/onsale`, {
        token: t.manager,
        body: { roomOpensAt, onsaleAt, perBuyerLimit: 4, maxReleaseRate: 50 },
      });
    const ago = (ms: number) => new Date(h.clock.now().getTime() - ms).toISOString();
    const past = 'is more than 5 minutes in the past; to open now, send the current time';
    // A mistyped year would open the room and start the sale at the next tick: both times named, nothing written.
    const typo = await put(ago(366 * DAY), ago(365 * DAY));
    expectFieldRefused(typo, 'roomOpensAt', past);
    expectFieldRefused(typo, 'onsaleAt', past);
    expect(await get(id)).toEqual(before);
    expect(await onsale()).toEqual(scheduled);
    // "Now" from a promoter's clock a minute behind is taken: the room opens at the next tick.
    expect((await put(ago(60_000), at(20))).status).toBe(200);
    // A room opened a day ago: a reschedule of its sale keeps that time, and takes no other past one.
    const dayAgo = ago(DAY);
    await h.services.pool.query('UPDATE onsales SET room_opens_at = $2 WHERE event_id = $1', [id, dayAgo]);
    expect((await put(dayAgo, at(20))).status).toBe(200);
    expectFieldRefused(await put(ago(2 * 3_600_000), at(20)), 'roomOpensAt', past);
  });

  it("a presale must end before the event starts, and PATCH cannot move the start to or before the presale's end", async () => {
    const id = await onsaleEvent();
    const start = (await get(id)).startsAt;
    const presale = (presaleEndsAt: string) => ({
      registrationOpensAt: at(0),
      registrationClosesAt: at(1),
      presaleStartsAt: at(2),
      presaleEndsAt,
      invitations: 10,
    });
    const presales = async () =>
      Number(
        (await h.services.pool.query('select count(*)::int as n from presales where event_id = $1', [id])).rows[0].n,
      );
    for (const end of [start, at(31)]) {
      const r = await h.req('PUT', `/events/${id}/presale`, { token: t.manager, body: presale(end) });
      expectFieldRefused(r, 'presaleEndsAt', 'the presale must end before the event starts');
    }
    expect(await presales()).toBe(0);
    const opened = await h.req('PUT', `/events/${id}/presale`, { token: t.manager, body: presale(at(25)) });
    expect(opened.status, JSON.stringify(opened.body)).toBe(200);
    const before = await get(id);
    for (const startsAt of [at(24), opened.body.presaleEndsAt]) {
      const r = await h.req('PATCH', `/events/${id}`, { token: t.manager, body: { startsAt } });
      expectFieldRefused(r, 'startsAt', `must be after the presale ends (${opened.body.presaleEndsAt})`);
    }
    expect(await get(id)).toEqual(before);
    expect((await h.req('PATCH', `/events/${id}`, { token: t.manager, body: { startsAt: at(26) } })).status).toBe(200);
  });
});

describe('the sales timeline range', () => {
  it('is refused, naming to, when it ends at or before it starts; a range in order is answered', async () => {
    const path = (q: string) => `/events/${eventId}/sales/timeline?${q}`;
    for (const q of [
      'from=2027-03-02T00:00:00Z&to=2027-03-01T00:00:00Z',
      'from=2027-03-01T00:00:00Z&to=2027-03-01T00:00:00Z',
    ])
      expectFieldRefused(await h.req('GET', path(q), { token: t.viewer }), 'to', 'must be after from');
    for (const q of ['bucket=-1m', 'bucket=100000d', 'from=yesterday'])
      expect((await h.req('GET', path(q), { token: t.viewer })).status).toBe(400);
    const ok = await h.req('GET', path('bucket=1h&from=2027-03-01T00:00:00Z&to=2027-03-02T00:00:00Z'), {
      token: t.viewer,
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({ eventId, bucket: '1h', points: [] });
  });
});

describe('requests the documents describe', () => {
  it('a required body is required: PATCH without one is a 400 naming the body', async () => {
    expectFieldRefused(await h.req('PATCH', `/events/${eventId}`, { token: t.manager }), 'body');
    expectFieldRefused(await h.req('PATCH', '/operator/cells/cell-in1', { token: h.operatorToken }), 'body');
  });

  it('the token is checked before the body: 401 without one, 403 with the wrong role', async () => {
    const bad = { jti: 'short', sub: 'both' };
    const none = await h.req('POST', '/operator/admissions/revocations', { body: bad });
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('unauthenticated');
    const promoter = await h.req('POST', '/operator/admissions/revocations', { token: t.owner, body: bad });
    expect(promoter.status).toBe(403);
    expect(promoter.body.error.code).toBe('forbidden');
  });

  it('every secured operation of the document answers 401 to a request with no token and a bad body', async () => {
    const doc = (await h.req('GET', '/openapi.json')).body;
    const secured: [string, string][] = [];
    for (const [path, ops] of Object.entries<Record<string, { security?: unknown[] }>>(doc.paths))
      for (const [method, op] of Object.entries(ops)) if (op.security?.length) secured.push([method, path]);
    expect(secured.length).toBeGreaterThan(20);
    for (const [method, path] of secured) {
      const body = method === 'get' ? undefined : [1];
      const r = await h.req(method.toUpperCase(), path.replaceAll(/\{[^}]+\}/g, 'not-a-uuid'), { body });
      expect(r.status, `${method} ${path}`).toBe(401);
    }
  });

  it('an undeclared method on a known path is a 405 with Allow', async () => {
    const r = await h.req('PUT', `/events/${eventId}`, { token: t.manager, body: {} });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('GET, HEAD, PATCH');
    expect(r.body.error.code).toBe('method_not_allowed');
    expect((await h.req('PUT', '/no/such/path')).status).toBe(404);
  });

  it('a trailing slash is another path, which no route serves: 404, not a 405 allowing the method used', async () => {
    for (const path of [`/events/${eventId}/catalog/`, `/events/${eventId}/`]) {
      const r = await h.req('GET', path, { token: t.manager });
      expect(r.status, path).toBe(404);
      expect(r.headers.get('allow'), path).toBeNull();
      expect(r.body.error.code, path).toBe('not_found');
    }
  });

  it('the revocation body is exactly one of jti or sub, in the schema', async () => {
    const doc = (await h.req('GET', '/openapi.json')).body;
    // Two closed objects, one requiring jti and one sub: a body matches exactly one of them.
    const { anyOf } = doc.components.schemas.Revoke;
    expect(anyOf.map((o: Json) => [o.required[0], o.additionalProperties])).toEqual([
      ['jti', false],
      ['sub', false],
    ]);
    const both = await h.req('POST', '/operator/admissions/revocations', {
      token: h.operatorToken,
      body: { jti: 'jti-00000', sub: 'buyer-1', reason: 'x' },
    });
    expect(both.status).toBe(400);
  });

  it('every operation with path or query parameters or a body documents 400; every secured one 401', async () => {
    const doc = (await h.req('GET', '/openapi.json')).body;
    for (const [path, ops] of Object.entries<Record<string, Json>>(doc.paths))
      for (const [method, op] of Object.entries<Json>(ops)) {
        const validated = op.requestBody || op.parameters?.some((p: { in: string }) => p.in !== 'header');
        if (validated) expect(op.responses, `${method} ${path}`).toHaveProperty('400');
        if (op.security?.length) expect(op.responses, `${method} ${path}`).toHaveProperty('401');
      }
    expect(doc.paths['/events/{eventId}/seat-map'].put.requestBody.content).toHaveProperty('text/csv');
  });
});
