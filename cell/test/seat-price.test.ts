import { type PriceTierLoad, tierSeatPrice } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/db';

type Tier = Pick<PriceTierLoad, 'price' | 'fee' | 'fees'>;

const INT4_MAX = 2_147_483_647;

// Prices are integers in minor units, so the edges are the integer ones: no fee, a fee equal to the price,
// the smallest price, odd amounts (no halving or rounding anywhere), and the largest buyer price a column holds.
const cases: Tier[] = [
  { price: 5_000, fee: 0, fees: 'included' },
  { price: 5_000, fee: 0, fees: 'added' },
  { price: 5_000, fee: 750, fees: 'included' },
  { price: 5_000, fee: 750, fees: 'added' },
  { price: 5_000, fee: 5_000, fees: 'included' },
  { price: 5_000, fee: 5_000, fees: 'added' },
  { price: 1, fee: 0, fees: 'included' },
  { price: 1, fee: 1, fees: 'included' },
  { price: 1, fee: 1, fees: 'added' },
  { price: 999, fee: 1, fees: 'added' },
  { price: 12_345, fee: 67, fees: 'added' },
  { price: 12_345, fee: 67, fees: 'included' },
  { price: INT4_MAX, fee: 0, fees: 'added' },
  { price: INT4_MAX, fee: 100_000_000, fees: 'included' },
  { price: INT4_MAX - 100_000_000, fee: 100_000_000, fees: 'added' },
];

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('cell_price', 'cell');
});
afterAll(async () => {
  await db?.drop();
});

const inSql = async (tiers: Tier[], ownPrice: number | null = null) =>
  (
    await db.query<{ price: number }>(
      `SELECT seat_price(t.price, t.fee, t.fees = 'included', $4::int) AS price
         FROM unnest($1::int[], $2::int[], $3::text[]) WITH ORDINALITY AS t(price, fee, fees, n) ORDER BY t.n`,
      [tiers.map((t) => t.price), tiers.map((t) => t.fee), tiers.map((t) => t.fees), ownPrice],
    )
  ).map((r) => r.price);

describe('the buyer price rule: tierSeatPrice (TypeScript) and seat_price (SQL)', () => {
  it('agree on every case, edges included', async () => {
    expect(await inSql(cases)).toEqual(cases.map(tierSeatPrice));
  });

  it('a tier decides the price whatever the seat was loaded with; a seat without a tier keeps its own', async () => {
    expect(await inSql(cases.slice(0, 2), 123)).toEqual(cases.slice(0, 2).map(tierSeatPrice));
    const [untiered] = await db.query<{ price: number }>('SELECT seat_price(NULL, NULL, NULL, 4200) AS price');
    expect(untiered?.price).toBe(4_200);
  });

  it('a buyer price past the integer column is refused by PostgreSQL, not wrapped', async () => {
    const over: Tier = { price: INT4_MAX, fee: 1, fees: 'added' };
    expect(tierSeatPrice(over)).toBe(INT4_MAX + 1);
    await expect(inSql([over])).rejects.toMatchObject({ code: '22003' });
  });
});
