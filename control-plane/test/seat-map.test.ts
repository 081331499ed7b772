import { MAX_CHARGE, MAX_SEAT_PRICE, MAX_SEATS_PER_HOLD, PriceTierLoad } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCell, createHarness, type Harness } from '../../test/support/control-plane';

let h: Harness;
let t: Awaited<ReturnType<Harness['tenant']>>;

beforeAll(async () => {
  h = await createHarness();
  await addCell(h, 'cell-s1');
  t = await h.tenant();
});
afterAll(() => h?.close());

async function newEvent() {
  const r = await h.req('POST', '/events', {
    token: t.manager,
    body: { name: 'Stadium', venue: 'Big', startsAt: new Date(Date.now() + 30 * 86_400_000).toISOString() },
  });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

function stadiumCsv(n: number) {
  const lines = ['section,row,seat,tier,price,currency'];
  for (let i = 0; i < n; i++) {
    const section = `S${Math.floor(i / 2000) + 1}`;
    const row = `R${Math.floor((i % 2000) / 50) + 1}`;
    const tier = i % 3 === 0 ? 'GOLD' : 'STD';
    lines.push(`${section},${row},${(i % 50) + 1},${tier},${tier === 'GOLD' ? 12000 : 6500},eur`);
  }
  return `${lines.join('\n')}\n`;
}

const seatCount = async (eventId: string) =>
  (await h.services.pool.query('select count(*)::int as n from seats where event_id = $1', [eventId])).rows[0].n;

describe('seat-map upload', () => {
  it('accepts 100,000 seats as CSV, minting stable uuids', async () => {
    const eventId = await newEvent();
    const csv = stadiumCsv(100_000);
    const started = Date.now();
    const r = await h.req('PUT', `/events/${eventId}/seat-map`, { token: t.manager, raw: csv });
    expect(r.status, JSON.stringify(r.body).slice(0, 500)).toBe(200);
    expect(r.body).toMatchObject({ seats: 100_000, created: 100_000, seatMapVersion: 1 });
    expect(r.body.tiers.map((x: { code: string }) => x.code).sort()).toEqual(['GOLD', 'STD']);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(await seatCount(eventId)).toBe(100_000);
    const before = await h.services.pool.query(
      'select id, label from seats where event_id = $1 order by label limit 5',
      [eventId],
    );
    // Re-uploading keeps every seat id.
    const again = await h.req('PUT', `/events/${eventId}/seat-map`, { token: t.manager, raw: csv });
    expect(again.body).toMatchObject({ seats: 100_000, created: 0, seatMapVersion: 2 });
    const after = await h.services.pool.query(
      'select id, label from seats where event_id = $1 order by label limit 5',
      [eventId],
    );
    expect(after.rows).toEqual(before.rows);
    const page = await h.req('GET', `/events/${eventId}/seat-map?limit=3`, { token: t.viewer });
    expect(page.body.seatCount).toBe(100_000);
    expect(page.body.seats).toHaveLength(3);
    expect(page.body.seats[0].id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('accepts JSON with declared tiers', async () => {
    const eventId = await newEvent();
    const r = await h.req('PUT', `/events/${eventId}/seat-map`, {
      token: t.manager,
      body: {
        tiers: [{ code: 'A', name: 'Front', price: 9900, currency: 'GBP' }],
        seats: [
          { section: 'Stalls', row: 'A', seat: 1, tier: 'A' },
          { section: 'Stalls', row: 'A', label: 'Stalls A2', tier: 'A' },
        ],
      },
    });
    expect(r.status).toBe(200);
    expect(r.body.tiers).toEqual([
      { code: 'A', name: 'Front', price: 9900, currency: 'gbp', fee: 0, fees: 'included' },
    ]);
  });

  const bad: [string, string, { row: number; field: string; message: RegExp }][] = [
    [
      'duplicate label',
      'section,row,label,tier,price,currency\nS1,A,A1,STD,5000,eur\nS1,A,A2,STD,,\nS1,A,A1,STD,,\n',
      { row: 3, field: 'label', message: /duplicate label 'A1' \(first on row 1\)/ },
    ],
    [
      'bad price (not an integer)',
      'section,row,seat,tier,price,currency\nS1,A,1,STD,5000,eur\nS1,A,2,VIP,49.99,eur\n',
      { row: 2, field: 'price', message: /whole number of minor units/ },
    ],
    [
      'bad price (zero)',
      'section,row,seat,tier,price,currency\nS1,A,1,STD,0,eur\n',
      { row: 1, field: 'price', message: /greater than zero/ },
    ],
    [
      'conflicting tier price',
      'section,row,seat,tier,price,currency\nS1,A,1,STD,5000,eur\nS1,A,2,STD,6000,eur\n',
      { row: 2, field: 'price', message: /tier 'STD' is 5000 eur on row 1/ },
    ],
    [
      'unknown tier',
      'section,row,seat,tier,price,currency\nS1,A,1,STD,5000,eur\nS1,A,2,NOPE,,\n',
      { row: 2, field: 'tier', message: /unknown tier 'NOPE'/ },
    ],
    [
      'missing section',
      'section,row,seat,tier,price,currency\nS1,A,1,STD,5000,eur\n,A,2,STD,,\n',
      { row: 2, field: 'section', message: /section is required/ },
    ],
    [
      'bad currency',
      'section,row,seat,tier,price,currency\nS1,A,1,STD,5000,euro\n',
      { row: 1, field: 'currency', message: /three-letter/ },
    ],
    [
      'currency no payment is made in',
      'section,row,seat,tier,price,currency\nS1,A,1,STD,5000,eur\nS1,A,2,VIP,5000,xxx\n',
      { row: 2, field: 'currency', message: /ISO 4217/ },
    ],
    [
      'price an order could not be charged at',
      `section,row,seat,tier,price,currency\nS1,A,1,STD,5000,eur\nS1,A,2,VIP,${MAX_SEAT_PRICE + 1},eur\n`,
      { row: 2, field: 'price', message: /largest charge \(99999999\)/ },
    ],
  ];

  it('names the line of a quote never closed, and nothing the rest of the file went missing from', async () => {
    const eventId = await newEvent();
    const csv = 'section,row,seat,tier,price,currency\nS1,A,1,STD,5000,eur\n"S1,A,2,STD,,\nS1,A,3,STD,,\n';
    const r = await h.req('PUT', `/events/${eventId}/seat-map`, { token: t.manager, raw: csv });
    expect(r.status).toBe(400);
    expect(r.body.error.details.issues).toEqual([
      {
        row: 2,
        line: 3,
        field: 'csv',
        path: 'line 3',
        message:
          'a quoted field opened on this line is never closed (a missing "): the rest of the file was read into it',
      },
    ]);
    expect(await seatCount(eventId)).toBe(0);
  });

  it.each(bad)('rejects a %s with its row and field, storing nothing', async (_name, csv, expected) => {
    const eventId = await newEvent();
    // A big valid prefix proves all-or-nothing: none of it is stored.
    const lines = csv.trimEnd().split('\n');
    const r = await h.req('PUT', `/events/${eventId}/seat-map`, { token: t.manager, raw: `${lines.join('\n')}\n` });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('validation_failed');
    const issue = r.body.error.details.issues.find((i: { field: string }) => i.field === expected.field);
    expect(issue, JSON.stringify(r.body.error.details)).toBeTruthy();
    expect(issue.row).toBe(expected.row);
    expect(issue.line).toBe(expected.row + 1);
    expect(issue.message).toMatch(expected.message);
    expect(await seatCount(eventId)).toBe(0);
    const ev = await h.req('GET', `/events/${eventId}`, { token: t.viewer });
    expect(ev.body).toMatchObject({ seatCount: 0, seatMapVersion: 0 });
  });

  it('refuses a tier whose currency is not ISO 4217 or whose price plus added fee makes an order Stripe cannot charge, naming row and field', async () => {
    const eventId = await newEvent();
    const seats = [{ section: 'S', row: 'A', seat: 1, tier: 'A' }];
    const upload = (tier: Record<string, unknown>) =>
      h.req('PUT', `/events/${eventId}/seat-map`, {
        token: t.manager,
        body: { tiers: [{ code: 'A', name: 'A', currency: 'eur', ...tier }], seats },
      });
    const refused: [Record<string, unknown>, string, RegExp][] = [
      [{ price: 7500, currency: 'XXX' }, 'tiers[0].currency', /ISO 4217/],
      [{ price: 7500, currency: 'xdr' }, 'tiers[0].currency', /ISO 4217/],
      [{ price: 100_000_000 }, 'tiers[0].price', /at most 12499999 minor units/],
      [{ price: 100_000_000, fee: 100_000_000, fees: 'added' }, 'tiers[0].price', /at most 12499999/],
      [{ price: MAX_SEAT_PRICE, fee: 1, fees: 'added' }, 'tiers[0].fee', /price plus the added fee/],
      [{ price: 7500, fee: MAX_SEAT_PRICE, fees: 'added' }, 'tiers[0].fee', /price plus the added fee/],
      [{ price: 7500, fee: 7501, fees: 'included' }, 'tiers[0].fee', /cannot exceed the price/],
    ];
    for (const [tier, path, message] of refused) {
      const r = await upload(tier);
      expect(r.status, JSON.stringify(tier)).toBe(400);
      expect(r.body.error.details.issues).toContainEqual(
        expect.objectContaining({ path, field: path.split('.')[1], message: expect.stringMatching(message) }),
      );
    }
    expect(await seatCount(eventId)).toBe(0);
    expect((await h.req('GET', `/events/${eventId}`, { token: t.viewer })).body.seatMapVersion).toBe(0);
    // The most a place may cost, in a currency without minor units too: a full order is still one Stripe charges.
    const most = await upload({ price: MAX_SEAT_PRICE - 99, fee: 99, fees: 'added', currency: 'JPY' });
    expect(most.status, JSON.stringify(most.body)).toBe(200);
    expect(MAX_SEATS_PER_HOLD * MAX_SEAT_PRICE).toBeLessThanOrEqual(MAX_CHARGE);
    // The fee editor applies the same rule: an added fee that takes a place past the maximum is refused, not stored.
    const fees = await h.req('PUT', `/events/${eventId}/tiers/A/fees`, {
      token: t.manager,
      body: { fee: 100, fees: 'added' },
    });
    expect(fees.status).toBe(400);
    expect(fees.body.error.details.issues).toEqual([
      { path: 'fee', message: expect.stringMatching(/price plus the added fee/) },
    ]);
    expect((await h.req('GET', `/events/${eventId}/seat-map`, { token: t.viewer })).body.tiers[0]).toMatchObject({
      fee: 99,
      fees: 'added',
    });
  });

  it('the cell refuses the same tiers in a load: the rule is the shared schema', () => {
    const tier = { code: 'A', name: 'A', price: 7500, currency: 'eur', fee: 0, fees: 'included' as const };
    expect(PriceTierLoad.safeParse(tier).success).toBe(true);
    const paths = (t: object) => PriceTierLoad.safeParse(t).error?.issues.map((i) => i.path.join('.'));
    expect(paths({ ...tier, currency: 'xxx' })).toEqual(['currency']);
    expect(paths({ ...tier, price: 100_000_000 })).toEqual(['price']);
    expect(paths({ ...tier, fee: 100_000_000, fees: 'added' })).toEqual(['fee']);
  });

  it('rejects a bad row inside 100,000 good ones and keeps the previous map intact', async () => {
    const eventId = await newEvent();
    expect((await h.req('PUT', `/events/${eventId}/seat-map`, { token: t.manager, raw: stadiumCsv(10) })).status).toBe(
      200,
    );
    const lines = stadiumCsv(100_000).trimEnd().split('\n');
    lines[77_778] = 'S39,R1,1,STD,-5,eur';
    const r = await h.req('PUT', `/events/${eventId}/seat-map`, { token: t.manager, raw: `${lines.join('\n')}\n` });
    expect(r.status).toBe(400);
    expect(r.body.error.details.issues[0]).toMatchObject({ row: 77_778, line: 77_779, field: 'price' });
    expect(await seatCount(eventId)).toBe(10);
  });

  it('rejects more than 100,000 seats and JSON errors by seat index', async () => {
    const eventId = await newEvent();
    const tooMany = await h.req('PUT', `/events/${eventId}/seat-map`, { token: t.manager, raw: stadiumCsv(100_001) });
    expect(tooMany.status).toBe(400);
    expect(JSON.stringify(tooMany.body.error.details)).toMatch(/at most 100000 seats/);
    const json = await h.req('PUT', `/events/${eventId}/seat-map`, {
      token: t.manager,
      body: {
        tiers: [{ code: 'A', name: 'A', price: -1, currency: 'eur' }],
        seats: [{ section: 'S', row: 'A', seat: 1, tier: 'B' }],
      },
    });
    expect(json.status).toBe(400);
    const paths = json.body.error.details.issues.map((i: { path: string }) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['tiers[0].price', 'seats[0].tier']));
    expect(await seatCount(eventId)).toBe(0);
  });
});
