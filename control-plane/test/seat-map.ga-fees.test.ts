import { EventLoad } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addCell,
  createHarness,
  type FakeCell,
  type Harness,
  scheduledEvent,
  startFakeCell,
} from '../../test/support/control-plane';
import { runSchedulerTick } from '../src/onsale/scheduler';

let h: Harness;
let cell: FakeCell;
let t: Awaited<ReturnType<Harness['tenant']>>;

beforeAll(async () => {
  h = await createHarness();
  cell = await startFakeCell('cell-ga');
  await addCell(h, 'cell-ga', cell.url);
  t = await h.tenant();
});
afterAll(async () => {
  await h?.close();
  await cell?.close();
});

async function newEvent() {
  const r = await h.req('POST', '/events', {
    token: t.manager,
    body: { name: 'Festival', venue: 'Park', startsAt: new Date(Date.now() + 30 * 86_400_000).toISOString() },
  });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

/** Schedules the event's onsale a minute from now (the room opens then, the sale a minute later). */
function scheduleOnsale(eventId: string) {
  const now = h.clock.now().getTime();
  return h.req('PUT', `/events/${eventId}/onsale`, {
    token: t.manager,
    body: {
      roomOpensAt: new Date(now + 60_000).toISOString(),
      onsaleAt: new Date(now + 120_000).toISOString(),
      perBuyerLimit: 4,
      maxReleaseRate: 100,
    },
  });
}

const festival = {
  tiers: [
    { code: 'floor', name: 'Floor', price: 8_000, currency: 'eur', fee: 900, fees: 'added' },
    { code: 'seat', name: 'Seated', price: 12_000, currency: 'eur' },
  ],
  seats: [
    { section: 'A', row: '1', seat: '1', tier: 'seat' },
    { section: 'A', row: '1', seat: '2', tier: 'seat' },
  ],
  gaAreas: [
    { name: 'Floor', capacity: 5_000, tier: 'floor' },
    { name: 'Lawn', capacity: 12_000, tier: 'floor' },
  ],
};

describe('seat map with general-admission areas', () => {
  it('stores GA areas beside seats, with stable ids by name, and tier fees', async () => {
    const eventId = await newEvent();
    const r = await h.req('PUT', `/events/${eventId}/seat-map`, { token: t.manager, body: festival });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.gaAreas.map((a: { name: string; capacity: number }) => [a.name, a.capacity])).toEqual([
      ['Floor', 5_000],
      ['Lawn', 12_000],
    ]);
    expect(r.body.tiers.find((x: { code: string }) => x.code === 'floor')).toMatchObject({ fee: 900, fees: 'added' });
    const again = await h.req('PUT', `/events/${eventId}/seat-map`, {
      token: t.manager,
      body: { ...festival, gaAreas: [{ name: 'Floor', capacity: 6_000, tier: 'floor' }] },
    });
    expect(again.status).toBe(200);
    expect(again.body.gaAreas).toEqual([{ ...r.body.gaAreas[0], capacity: 6_000 }]);
    const page = await h.req('GET', `/events/${eventId}/seat-map`, { token: t.viewer });
    expect(page.body.gaAreas).toEqual(again.body.gaAreas);
  });

  it('accepts an event of GA areas only', async () => {
    const eventId = await newEvent();
    const r = await h.req('PUT', `/events/${eventId}/seat-map`, {
      token: t.manager,
      body: { tiers: festival.tiers.slice(0, 1), gaAreas: [{ name: 'Lawn', capacity: 300, tier: 'floor' }] },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ seats: 0, gaAreas: [{ name: 'Lawn', capacity: 300, tier: 'floor' }] });
    // With no seats it is still ready to sell: its onsale is scheduled and the cell gets the areas.
    const on = await scheduleOnsale(eventId);
    expect(on.status, JSON.stringify(on.body)).toBe(200);
    await runSchedulerTick(h.services);
    const load = EventLoad.parse(cell.loads.filter((l) => l.body.eventId === eventId).at(-1)!.body);
    expect(load.seats).toEqual([]);
    expect(load.gaAreas).toEqual(r.body.gaAreas);
  });

  it('will not schedule the onsale of an event with neither seats nor GA areas', async () => {
    const eventId = await newEvent();
    const on = await scheduleOnsale(eventId);
    expect(on.status).toBe(400);
    expect(on.body.error.details.issues).toContainEqual({ path: 'seatMap', message: 'upload a seat map first' });
  });

  it('reads GA areas from a CSV: a row with a capacity, named by its section', async () => {
    const eventId = await newEvent();
    const csv = [
      'section,row,seat,tier,price,currency,capacity',
      'A,1,1,seat,12000,eur,',
      'A,1,2,seat,12000,eur,',
      'Floor,,,floor,8000,eur,5000',
      '"Lawn, east",,,floor,8000,eur,1200',
    ].join('\n');
    const r = await h.req('PUT', `/events/${eventId}/seat-map`, { token: t.manager, raw: csv });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.seats).toBe(2);
    expect(
      r.body.gaAreas.map((a: { name: string; capacity: number; tier: string }) => [a.name, a.capacity, a.tier]),
    ).toEqual([
      ['Floor', 5_000, 'floor'],
      ['Lawn, east', 1_200, 'floor'],
    ]);
    // GA areas only: no row or seat column needed. A bad capacity, or a seat on a GA row, is named.
    const gaOnly = await h.req('PUT', `/events/${await newEvent()}/seat-map`, {
      token: t.manager,
      raw: 'section,tier,price,currency,capacity\nPit,floor,9000,eur,800\n',
    });
    expect(gaOnly.status, JSON.stringify(gaOnly.body)).toBe(200);
    expect(gaOnly.body).toMatchObject({ seats: 0, gaAreas: [{ name: 'Pit', capacity: 800, tier: 'floor' }] });
    const bad = await h.req('PUT', `/events/${await newEvent()}/seat-map`, {
      token: t.manager,
      raw: 'section,row,seat,tier,price,currency,capacity\nPit,,,floor,9000,eur,lots\nBox,1,1,floor,9000,eur,4\n',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.issues.map((i: { path: string }) => i.path)).toEqual([
      'line 2: capacity',
      'line 3: capacity',
    ]);
  });

  it('refuses bad GA areas and tier fees naming the row and field, storing nothing', async () => {
    const eventId = await newEvent();
    const r = await h.req('PUT', `/events/${eventId}/seat-map`, {
      token: t.manager,
      body: {
        tiers: [
          { code: 'floor', price: 8_000, currency: 'eur', fee: -1 },
          { code: 'pit', price: 500, currency: 'eur', fee: 900, fees: 'included' },
          { code: 'vip', price: 500, currency: 'eur', fees: 'sometimes' },
        ],
        seats: [],
        gaAreas: [
          { name: 'Floor', capacity: 0, tier: 'floor' },
          { name: 'Floor', capacity: 10, tier: 'nope' },
          { capacity: 10, tier: 'floor' },
        ],
      },
    });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('validation_failed');
    const paths = r.body.error.details.issues.map((i: { path: string; row: number | null }) => `${i.path}@${i.row}`);
    expect(paths).toEqual(
      expect.arrayContaining([
        'tiers[0].fee@null',
        'tiers[1].fee@null',
        'tiers[2].fees@null',
        'gaAreas[0].capacity@1',
        'gaAreas[1].tier@2',
        'gaAreas[1].name@2',
        'gaAreas[2].name@3',
      ]),
    );
    expect((await h.services.pool.query('select 1 from ga_areas where event_id = $1', [eventId])).rowCount).toBe(0);
  });

  it('the event load carries the GA areas and the tier fees', async () => {
    const { eventId } = await scheduledEvent(h, t.manager, { seats: 4 });
    const put = await h.req('PUT', `/events/${eventId}/seat-map`, { token: t.manager, body: festival });
    expect(put.status).toBe(200);
    await runSchedulerTick(h.services);
    const body = EventLoad.parse(cell.loads.at(-1)!.body);
    expect(body.eventId).toBe(eventId);
    expect(body.gaAreas).toEqual(put.body.gaAreas);
    expect(body.tiers).toEqual([
      { code: 'floor', name: 'Floor', price: 8_000, currency: 'eur', fee: 900, fees: 'added' },
      { code: 'seat', name: 'Seated', price: 12_000, currency: 'eur', fee: 0, fees: 'included' },
    ]);
  });
});

describe('evacuating an event with GA areas', () => {
  it('is refused (409 ga_not_movable) and changes nothing: a move would let the target sell the areas again', async () => {
    const { eventId } = await scheduledEvent(h, t.manager, { seats: 4 });
    expect((await h.req('PUT', `/events/${eventId}/seat-map`, { token: t.manager, body: festival })).status).toBe(200);
    await runSchedulerTick(h.services);
    const moves = async () => (await h.services.pool.query('select 1 from event_moves')).rowCount;
    const before = await moves();
    for (const path of ['/operator/evacuation-plans', '/operator/evacuations']) {
      const r = await h.req('POST', path, { token: h.operatorToken, body: { eventId } });
      expect(r.status, JSON.stringify(r.body)).toBe(409);
      expect(r.body.error.details).toMatchObject({ reason: 'ga_not_movable', field: 'eventId' });
    }
    expect(await moves()).toBe(before);
  });
});

describe('fee editing', () => {
  it('sets a tier fee before the onsale and loads the event again with it', async () => {
    const { eventId } = await scheduledEvent(h, t.manager, { seats: 6 });
    await runSchedulerTick(h.services);
    const loads = cell.loads.length;
    const tier = (await h.req('GET', `/events/${eventId}/seat-map`, { token: t.viewer })).body.tiers[0];
    const r = await h.req('PUT', `/events/${eventId}/tiers/${tier.code}/fees`, {
      token: t.manager,
      body: { fee: 350, fees: 'added' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ code: tier.code, fee: 350, fees: 'added', buyerPays: tier.price + 350 });
    await runSchedulerTick(h.services);
    expect(cell.loads.length).toBe(loads + 1);
    const body = EventLoad.parse(cell.loads.at(-1)!.body);
    expect(body.tiers?.find((x) => x.code === tier.code)).toMatchObject({ fee: 350, fees: 'added' });
  });

  it('refuses a bad body naming the field, an unknown tier, a viewer, and any change once the onsale started', async () => {
    const { eventId } = await scheduledEvent(h, t.manager, { seats: 3, opensInMs: 0, onsaleInMs: 1000 });
    const code = (await h.req('GET', `/events/${eventId}/seat-map`, { token: t.viewer })).body.tiers[0].code;
    const path = `/events/${eventId}/tiers/${code}/fees`;
    const bad = await h.req('PUT', path, { token: t.manager, body: { fee: -5, fees: 'added' } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.error.details)).toContain('fee');
    const over = await h.req('PUT', path, { token: t.manager, body: { fee: 10_000_000, fees: 'included' } });
    expect(over.status).toBe(400);
    expect(over.body.error.details.issues[0].path).toBe('fee');
    expect(
      (await h.req('PUT', `/events/${eventId}/tiers/nope/fees`, { token: t.manager, body: { fee: 1, fees: 'added' } }))
        .status,
    ).toBe(404);
    expect((await h.req('PUT', path, { token: t.viewer, body: { fee: 1, fees: 'added' } })).status).toBe(403);
    h.clock.advance(1000);
    const late = await h.req('PUT', path, { token: t.manager, body: { fee: 1, fees: 'added' } });
    expect(late.status).toBe(409);
    expect(late.body.error.message).toMatch(/onsale started .*fees can no longer change/);
    const stored = await h.services.pool.query('select fee from price_tiers where event_id = $1 and code = $2', [
      eventId,
      code,
    ]);
    expect(stored.rows[0].fee).toBe(0);
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await h.req('GET', '/openapi.json')).body;
    expect(doc.paths['/events/{eventId}/tiers/{code}/fees'].put.requestBody).toBeDefined();
  });
});
