import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCell, createHarness, type Harness } from '../../test/support/control-plane';
import { events } from '../src/db/schema';

let h: Harness;
let t: Awaited<ReturnType<Harness['tenant']>>;

beforeAll(async () => {
  h = await createHarness();
  // Scheduling places the event on a cell; nothing here loads it (no scheduler tick), so none need answer.
  await addCell(h, 'cell-catalog');
  t = await h.tenant();
});
afterAll(async () => {
  await h?.close();
});

const arena = {
  tiers: [
    { code: 'gold', name: 'Gold', price: 12_000, currency: 'eur', fee: 1_500, fees: 'added' },
    { code: 'std', name: 'Standard', price: 6_000, currency: 'eur', fee: 500, fees: 'included' },
    { code: 'floor', name: 'Floor', price: 5_000, currency: 'eur' },
  ],
  // Out of order on purpose, and named so that code-unit order ("10" < "2", "B-1-10" < "B-1-2") is wrong.
  seats: [
    { section: '10', row: '1', seat: '2', tier: 'std' },
    { section: '2', row: '10', seat: '1', tier: 'gold' },
    { section: '2', row: '2', seat: '10', tier: 'gold' },
    { section: '2', row: '2', seat: '9', tier: 'std' },
    { section: '10', row: '1', seat: '1', tier: 'std' },
    { section: '2', row: '2', seat: '1', tier: 'gold' },
  ],
  gaAreas: [{ name: 'Pit', capacity: 800, tier: 'floor' }],
};

async function announcedEvent(seatMap: unknown = arena) {
  const now = h.clock.now().getTime();
  const ev = await h.req('POST', '/events', {
    token: t.manager,
    body: {
      name: 'Arena night',
      venue: 'Arena',
      timeZone: 'Europe/Paris',
      startsAt: new Date(now + 30 * 86_400_000).toISOString(),
    },
  });
  expect(ev.status, JSON.stringify(ev.body)).toBe(201);
  const eventId = ev.body.id as string;
  const sm = await h.req('PUT', `/events/${eventId}/seat-map`, { token: t.manager, body: seatMap });
  expect(sm.status, JSON.stringify(sm.body)).toBe(200);
  return { eventId, startsAt: ev.body.startsAt as string, schedule: () => schedule(eventId, now) };
}

async function schedule(eventId: string, now: number) {
  const window = { roomOpensAt: new Date(now + 60_000).toISOString(), onsaleAt: new Date(now + 120_000).toISOString() };
  const r = await h.req('PUT', `/events/${eventId}/onsale`, {
    token: t.manager,
    body: { ...window, perBuyerLimit: 4, maxReleaseRate: 100 },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return window;
}

/** The promoter's view of the seats (ids by label), to hold the public seat map against. */
async function promoterSeatIds(eventId: string) {
  const r = await h.req('GET', `/events/${eventId}/seat-map?limit=5000`, { token: t.manager });
  expect(r.status).toBe(200);
  return new Map((r.body.seats as { id: string; label: string }[]).map((s) => [s.label, s.id]));
}

type Seat = { id: string; label: string; tier: string; x: number; y: number };
type Section = { section: string; x: number; width: number; height: number; rows: { row: string; seats: Seat[] }[] };

describe('the public catalog', () => {
  it("serves an announced event's page without sign-in: tiers with the fees buyers pay, sections, GA, sale window", async () => {
    const { eventId, startsAt, schedule } = await announcedEvent();
    const window = await schedule();
    const r = await h.req('GET', `/events/${eventId}/catalog`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({
      eventId,
      name: 'Arena night',
      venue: 'Arena',
      timeZone: 'Europe/Paris',
      startsAt,
      saleStatus: 'scheduled',
      roomOpensAt: window.roomOpensAt,
      onsaleAt: window.onsaleAt,
      seatCount: 6,
      seatMapVersion: 1,
      tiers: [
        { code: 'floor', name: 'Floor', currency: 'eur', price: 5_000, fee: 0, fees: 'included', buyerPays: 5_000 },
        { code: 'gold', name: 'Gold', currency: 'eur', price: 12_000, fee: 1_500, fees: 'added', buyerPays: 13_500 },
        { code: 'std', name: 'Standard', currency: 'eur', price: 6_000, fee: 500, fees: 'included', buyerPays: 6_000 },
      ],
      sections: [
        { section: '2', seats: 4, tiers: ['gold', 'std'] },
        { section: '10', seats: 2, tiers: ['std'] },
      ],
      gaAreas: [{ id: expect.any(String), name: 'Pit', capacity: 800, tier: 'floor' }],
    });
    expect(r.headers.get('cache-control')).toBe('public, max-age=10, stale-while-revalidate=20');
    expect(r.headers.get('etag')).toMatch(/^W\/".+"$/);
  });

  it('serves the seat map with every seat id, its section, tier and a position in natural order', async () => {
    const { eventId, schedule } = await announcedEvent();
    await schedule();
    const r = await h.req('GET', `/events/${eventId}/catalog/seat-map`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.headers.get('cache-control')).toBe('public, max-age=300, stale-while-revalidate=600');
    expect(r.body).toMatchObject({ eventId, seatMapVersion: 1, layout: 'blocks-by-section', seatCount: 6 });
    const ids = await promoterSeatIds(eventId);
    const sections = r.body.sections as Section[];
    const drawn = sections.map((s) => ({
      section: s.section,
      x: s.x,
      width: s.width,
      height: s.height,
      rows: s.rows.map((row) => [row.row, row.seats.map((seat) => [seat.label, seat.tier, seat.x, seat.y])]),
    }));
    // Section "2" is a block 3 seats wide (its longest row), then two empty columns, then section "10".
    expect(drawn).toEqual([
      {
        section: '2',
        x: 0,
        width: 3,
        height: 2,
        rows: [
          [
            '2',
            [
              ['2-2-1', 'gold', 0, 0],
              ['2-2-9', 'std', 1, 0],
              ['2-2-10', 'gold', 2, 0],
            ],
          ],
          ['10', [['2-10-1', 'gold', 0, 1]]],
        ],
      },
      {
        section: '10',
        x: 5,
        width: 2,
        height: 1,
        rows: [
          [
            '1',
            [
              ['10-1-1', 'std', 5, 0],
              ['10-1-2', 'std', 6, 0],
            ],
          ],
        ],
      },
    ]);
    // Every seat carries the id holds and the availability bitmap use.
    for (const seat of sections.flatMap((s) => s.rows.flatMap((row) => row.seats)))
      expect(seat.id, seat.label).toBe(ids.get(seat.label));
    expect(r.body.gaAreas).toEqual([{ id: expect.any(String), name: 'Pit', capacity: 800, tier: 'floor' }]);
  });

  it('answers 304 to a matching If-None-Match, weak or strong, and 200 to another tag', async () => {
    const { eventId, schedule } = await announcedEvent();
    await schedule();
    for (const path of [`/events/${eventId}/catalog`, `/events/${eventId}/catalog/seat-map`]) {
      const first = await h.req('GET', path);
      const etag = first.headers.get('etag')!;
      const same = await h.req('GET', path, { headers: { 'if-none-match': etag } });
      expect(same.status, path).toBe(304);
      expect(same.body, path).toBeNull();
      expect(same.headers.get('etag')).toBe(etag);
      expect(same.headers.get('cache-control')).toBe(first.headers.get('cache-control'));
      // The edge may weaken or strip W/ after compressing: the comparison is weak.
      const strong = etag.replace(/^W\//, '');
      expect((await h.req('GET', path, { headers: { 'if-none-match': `"other", ${strong}` } })).status).toBe(304);
      expect((await h.req('GET', path, { headers: { 'if-none-match': 'W/"other"' } })).status).toBe(200);
    }
  });

  it('gives the seat map a new ETag after a re-upload, keeping the ids of unchanged labels', async () => {
    const { eventId, schedule } = await announcedEvent();
    await schedule();
    const before = await h.req('GET', `/events/${eventId}/catalog/seat-map`);
    const page = await h.req('GET', `/events/${eventId}/catalog`);
    const reupload = { ...arena, seats: [...arena.seats, { section: '10', row: '1', seat: '3', tier: 'std' }] };
    const sm = await h.req('PUT', `/events/${eventId}/seat-map`, { token: t.manager, body: reupload });
    expect(sm.status, JSON.stringify(sm.body)).toBe(200);

    const stale = await h.req('GET', `/events/${eventId}/catalog/seat-map`, {
      headers: { 'if-none-match': before.headers.get('etag')! },
    });
    expect(stale.status).toBe(200);
    expect(stale.headers.get('etag')).not.toBe(before.headers.get('etag'));
    expect(stale.body).toMatchObject({ seatMapVersion: 2, seatCount: 7 });
    const seatsOf = (body: { sections: Section[] }) =>
      new Map(body.sections.flatMap((s) => s.rows.flatMap((r) => r.seats)).map((s) => [s.label, s.id]));
    const old = seatsOf(before.body);
    const now = seatsOf(stale.body);
    for (const [label, id] of old) expect(now.get(label)).toBe(id);
    expect(now.get('10-1-3')).toEqual(expect.any(String));
    // The page says which seat map it goes with, so its tag moves too.
    const pageAfter = await h.req('GET', `/events/${eventId}/catalog`, {
      headers: { 'if-none-match': page.headers.get('etag')! },
    });
    expect(pageAfter.status).toBe(200);
    expect(pageAfter.body.seatMapVersion).toBe(2);
  });

  it("moves the page's ETag on a fee or a sale status change, and leaves the seat map's alone", async () => {
    const { eventId, schedule } = await announcedEvent();
    await schedule();
    const page = await h.req('GET', `/events/${eventId}/catalog`);
    const map = await h.req('GET', `/events/${eventId}/catalog/seat-map`);
    const fee = await h.req('PUT', `/events/${eventId}/tiers/std/fees`, {
      token: t.manager,
      body: { fee: 700, fees: 'added' },
    });
    expect(fee.status, JSON.stringify(fee.body)).toBe(200);
    const priced = await h.req('GET', `/events/${eventId}/catalog`, {
      headers: { 'if-none-match': page.headers.get('etag')! },
    });
    expect(priced.status).toBe(200);
    expect(priced.body.tiers.find((x: { code: string }) => x.code === 'std')).toMatchObject({
      fee: 700,
      fees: 'added',
      buyerPays: 6_700,
    });
    // The scheduler opens the sale by setting the status; the page shows it at its next revalidation.
    await h.services.db.update(events).set({ status: 'paused' }).where(eq(events.id, eventId));
    const paused = await h.req('GET', `/events/${eventId}/catalog`, {
      headers: { 'if-none-match': priced.headers.get('etag')! },
    });
    expect(paused.status).toBe(200);
    expect(paused.body.saleStatus).toBe('paused');
    const sameMap = await h.req('GET', `/events/${eventId}/catalog/seat-map`, {
      headers: { 'if-none-match': map.headers.get('etag')! },
    });
    expect(sameMap.status).toBe(304);
  });

  it('answers 404 for a draft, an ended and an unknown event, in the platform error body', async () => {
    const { eventId: draft } = await announcedEvent();
    const { eventId: ended, schedule } = await announcedEvent();
    await schedule();
    await h.services.db.update(events).set({ status: 'ended' }).where(eq(events.id, ended));
    for (const eventId of [draft, ended, randomUUID()])
      for (const path of [`/events/${eventId}/catalog`, `/events/${eventId}/catalog/seat-map`]) {
        const r = await h.req('GET', path);
        expect(r.status, path).toBe(404);
        expect(r.body.error).toMatchObject({ code: 'not_found', requestId: expect.any(String) });
        // Not the documents' long public caching: a draft announced later must not be hidden behind a cached 404.
        expect(r.headers.get('cache-control'), path).toBeNull();
      }
  });

  it("the shop's event page counts each section's seats and each area's places in words a buyer reads", async () => {
    const { eventId, schedule } = await announcedEvent({
      tiers: arena.tiers,
      seats: [
        { section: 'A', row: '1', seat: '1', tier: 'std' },
        { section: 'B', row: '1', seat: '1', tier: 'std' },
        { section: 'B', row: '1', seat: '2', tier: 'std' },
      ],
      gaAreas: [
        { name: 'Box', capacity: 1, tier: 'floor' },
        { name: 'Pit', capacity: 800, tier: 'floor' },
      ],
    });
    await schedule();
    const r = await h.req('GET', `/shop/events/${eventId}`);
    expect(r.status).toBe(200);
    const places = [...(r.body as string).matchAll(/<li>([^<]+)<\/li>/g)].map((m) => m[1]);
    expect(places).toEqual([
      'Section A: 1 seat',
      'Section B: 2 seats',
      'Box: standing, 1 place',
      'Pit: standing, 800 places',
    ]);
  });

  it('refuses a malformed event id with 400 naming the field', async () => {
    for (const path of ['/events/not-a-uuid/catalog', '/events/not-a-uuid/catalog/seat-map']) {
      const r = await h.req('GET', path);
      expect(r.status, path).toBe(400);
      expect(r.body.error.code).toBe('validation_failed');
      expect(r.body.error.details.issues).toContainEqual(expect.objectContaining({ path: 'eventId' }));
    }
  });
});
