import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCell, createHarness, type Harness, scheduledEvent, smallSeatMap } from '../../test/support/control-plane';

let h: Harness;
let a: Awaited<ReturnType<Harness['tenant']>>;
let b: Awaited<ReturnType<Harness['tenant']>>;
let eventA: string;

beforeAll(async () => {
  h = await createHarness();
  await addCell(h, 'cell-t1');
  a = await h.tenant('A');
  b = await h.tenant('B');
  eventA = (await scheduledEvent(h, a.manager, { opensInMs: 3_600_000, onsaleInMs: 7_200_000 })).eventId;
});
afterAll(() => h?.close());

type Route = {
  method: string;
  path: (id: string) => string;
  write: boolean;
  body?: () => unknown;
  raw?: string;
  ok: number;
};
const future = () => new Date(Date.now() + 10 * 86_400_000).toISOString();

/** Every promoter route, with a body that succeeds for the owning tenant. */
const routes: Route[] = [
  { method: 'GET', path: () => '/events', write: false, ok: 200 },
  {
    method: 'POST',
    path: () => '/events',
    write: true,
    body: () => ({ name: 'X', venue: 'Y', startsAt: future() }),
    ok: 201,
  },
  { method: 'GET', path: (id) => `/events/${id}`, write: false, ok: 200 },
  { method: 'PATCH', path: (id) => `/events/${id}`, write: true, body: () => ({ name: 'Renamed' }), ok: 200 },
  { method: 'PUT', path: (id) => `/events/${id}/placement`, write: true, body: () => ({ cellId: 'cell-t1' }), ok: 200 },
  { method: 'PUT', path: (id) => `/events/${id}/seat-map`, write: true, body: () => smallSeatMap(20), ok: 200 },
  { method: 'GET', path: (id) => `/events/${id}/seat-map`, write: false, ok: 200 },
  {
    method: 'PUT',
    path: (id) => `/events/${id}/onsale`,
    write: true,
    body: () => ({
      roomOpensAt: new Date(Date.now() + 3_600_000).toISOString(),
      onsaleAt: new Date(Date.now() + 7_200_000).toISOString(),
      perBuyerLimit: 4,
      maxReleaseRate: 50,
    }),
    ok: 200,
  },
  { method: 'GET', path: (id) => `/events/${id}/onsale`, write: false, ok: 200 },
  { method: 'GET', path: (id) => `/events/${id}/release-decisions`, write: false, ok: 200 },
];

const call = (r: Route, token: string | undefined, id = eventA) =>
  h.req(r.method, r.path(id), { token, body: r.body?.() });
const name = (r: Route) => `${r.method} ${r.path('{eventId}')}`;

describe('tenant isolation and roles, every promoter route', () => {
  it.each(routes.map((r) => [name(r), r] as const))('%s: 401 without a token', async (_n, r) => {
    const res = await call(r, undefined);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthenticated');
  });

  it.each(routes.map((r) => [name(r), r] as const))('%s: 401 with a token from another issuer', async (_n, r) => {
    const res = await call(r, 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.');
    expect(res.status).toBe(401);
  });

  it.each(routes.filter((r) => r.path('x').includes('x')).map((r) => [name(r), r] as const))(
    "%s: another tenant's event is a 404",
    async (_n, r) => {
      for (const token of [b.owner, b.manager, b.viewer]) {
        const res = await call(r, token);
        if (r.write && token === b.viewer) expect(res.status).toBe(403);
        else {
          expect(res.status).toBe(404);
          expect(res.body.error.code).toBe('not_found');
        }
      }
    },
  );

  it.each(routes.filter((r) => r.write).map((r) => [name(r), r] as const))(
    '%s: a viewer cannot write (403)',
    async (_n, r) => {
      const res = await call(r, a.viewer);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    },
  );

  it.each(routes.map((r) => [name(r), r] as const))('%s: the owning tenant succeeds', async (_n, r) => {
    const res = await call(r, r.write ? a.manager : a.viewer);
    expect(res.status, JSON.stringify(res.body)).toBe(r.ok);
  });

  it('lists only the tenant’s own events', async () => {
    const mine = await h.req('GET', '/events', { token: b.viewer });
    expect(mine.body.events.every((e: { tenantId: string }) => e.tenantId === b.id)).toBe(true);
    expect(mine.body.events.some((e: { id: string }) => e.id === eventA)).toBe(false);
  });

  it('promoters cannot use operator routes; operators are not promoters', async () => {
    for (const [m, p] of [
      ['GET', '/operator/cells'],
      ['GET', '/operator/tenants'],
      ['POST', '/operator/signing-keys/rotate'],
      ['GET', `/operator/events/${eventA}/release-decisions`],
    ] as const) {
      expect((await h.req(m, p, { token: a.owner })).status).toBe(403);
    }
    expect((await h.req('GET', '/events', { token: h.operatorToken })).status).toBe(403);
  });
});
