import { randomUUID } from 'node:crypto';
import { migrateReporting } from '@onsale/reporting';
import type { Fact } from '@onsale/reporting/facts';
import { applyFacts } from '@onsale/reporting/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleSession, createHarness, type Harness, smallSeatMap } from '../../test/support/control-plane';
import { settlementPlaces } from '../../test/support/settlement';

/**
 * "General-admission places count in every sales figure": the facts of a GA order and of a seat + GA
 * order are projected as the reporting consumer projects them (the cell side of these facts is
 * cell/test/holds.ga.test.ts, the Kafka side reporting/test/reporting.test.ts), then read through
 * the sales routes and the console's list of events.
 */

let h: Harness;
let t: Awaited<ReturnType<Harness['tenant']>>;
let eventId: string;
const cellId = 'cell-ga1';
const floor = { areaId: randomUUID(), area: 'Floor', tier: 'A', price: 7_500 };
const gaOrder = randomUUID();
const mixedOrder = randomUUID();
const seatOnly = randomUUID();

let offset = 0n;
function fact(kind: 'held' | 'paid' | 'refunded', orderId: string, o: { seats: number; ga?: number }): Fact {
  return {
    factId: randomUUID(),
    source: cellId,
    partition: 0,
    offset: offset++,
    kind,
    tenantId: t.id,
    eventId,
    orderId,
    occurredAt: new Date(),
    amount: BigInt(7_500 * (o.seats + (o.ga ?? 0))),
    currency: 'eur',
    seats: Array.from({ length: o.seats }, (_, i) => ({
      seatId: `00000000-0000-4000-8000-${orderId.slice(-8)}000${i}`,
      section: 'S1',
      tier: 'A',
      price: 7_500,
    })),
    // A fact without GA places carries no `ga` (as every fact published before they were counted).
    ga: o.ga ? [{ ...floor, quantity: o.ga }] : null,
    count: null,
    detail: null,
  };
}

beforeAll(async () => {
  h = await createHarness();
  t = await h.tenant('GA promoter');
  const startsAt = new Date(Date.now() + 30 * 86_400_000).toISOString();
  const ev = await h.req('POST', '/events', { token: t.owner, body: { name: 'Gig', venue: 'Park', startsAt } });
  expect(ev.status).toBe(201);
  eventId = ev.body.id;
  const map = { ...smallSeatMap(20), gaAreas: [{ name: 'Floor', capacity: 100, tier: 'A' }] };
  expect((await h.req('PUT', `/events/${eventId}/seat-map`, { token: t.owner, body: map })).status).toBe(200);
  await migrateReporting(h.services.pool);
  const orders = [
    [gaOrder, { seats: 0, ga: 2 }],
    [mixedOrder, { seats: 1, ga: 1 }],
    [seatOnly, { seats: 1 }],
  ] as const;
  await applyFacts(h.services.pool, [
    ...orders.map(([id, o]) => fact('held', id, o)),
    ...orders.map(([id, o]) => fact('paid', id, o)),
  ]);
});
afterAll(() => h?.close());

describe('sales figures count general-admission places', () => {
  it('summary: a GA order of 2 and a seat + GA order of 2 sell 4 places beside a seat-only order of 1', async () => {
    const r = await h.req('GET', `/events/${eventId}/sales/summary`, { token: t.viewer });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ paidOrders: 3, seatsSold: 5, gross: 5 * 7_500 });
  });

  it('sections: the GA area is a section of its own, named by the area, with its capacity', async () => {
    const r = await h.req('GET', `/events/${eventId}/sales/sections`, { token: t.viewer });
    expect(r.body.sections).toEqual([
      { section: 'Floor', tier: 'A', capacity: 100, sold: 3, held: 0, remaining: 97 },
      { section: 'S1', tier: 'A', capacity: 20, sold: 2, held: 0, remaining: 18 },
    ]);
  });

  it('settlement.csv: each row and the TOTAL count places', async () => {
    const r = await h.req('GET', `/events/${eventId}/sales/settlement.csv`, { token: t.viewer });
    const { places, total } = settlementPlaces(String(r.body));
    expect([places(gaOrder), places(mixedOrder), places(seatOnly)]).toEqual(['2', '2', '1']);
    expect(total).toBe('TOTAL,,,,eur,37500,0,37500,5');
  });

  it('console events list: Sold counts places, Remaining is out of the seats and the GA capacity', async () => {
    const { text: html } = await (await consoleSession(h, t, 'viewer')).get('/console');
    const row = html.slice(html.indexOf(`/console/events/${eventId}`)).split('</tr>')[0]!;
    const [sold, held, remaining] = [...row.matchAll(/<td class="num">(\d+)<\/td>/g)].map((m) => Number(m[1]));
    expect({ sold, held, remaining }).toEqual({ sold: 5, held: 0, remaining: 115 });
  });

  it('console orders page: each paid order with its places (GA counted); one found by its id; no refund for a viewer', async () => {
    const viewer = await consoleSession(h, t, 'viewer');
    const places = (html: string) =>
      Object.fromEntries(
        [...html.matchAll(/<tr data-order="([0-9a-f-]+)">.*?<td class="num">(\d+)<\/td>/gs)].map((m) => [m[1], m[2]]),
      );
    const { text: all } = await viewer.get(`/console/events/${eventId}/orders`);
    expect(places(all)).toEqual({ [gaOrder]: '2', [mixedOrder]: '2', [seatOnly]: '1' });
    expect(all).toContain('3 orders, newest payment first.');
    expect(all).not.toContain('Refund…');
    const { text: one } = await viewer.get(`/console/events/${eventId}/orders?order=${mixedOrder}`);
    expect(places(one)).toEqual({ [mixedOrder]: '2' });
    const { text: manager } = await (await consoleSession(h, t, 'manager')).get(`/console/events/${eventId}/orders`);
    expect(manager.match(/Refund…/g)).toHaveLength(3);
  });

  it('a refunded seat + GA order takes its 2 places out of the sold count and its sections', async () => {
    await applyFacts(h.services.pool, [fact('refunded', mixedOrder, { seats: 1, ga: 1 })]);
    const summary = await h.req('GET', `/events/${eventId}/sales/summary`, { token: t.viewer });
    expect(summary.body).toMatchObject({ seatsSold: 3, seatsRefunded: 2, refunds: 1 });
    const sections = await h.req('GET', `/events/${eventId}/sales/sections`, { token: t.viewer });
    expect(sections.body.sections.map((x: { section: string; sold: number }) => [x.section, x.sold])).toEqual([
      ['Floor', 2],
      ['S1', 1],
    ]);
  });
});
