import { randomUUID } from 'node:crypto';
import { parquetMetadata } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { type Fact, factPlaces, toFact } from '../src/facts';
import { decodeFacts, encodeFacts } from '../src/parquet';

/**
 * "Facts say how many places an order holds, and facts from before GA places were counted still read":
 * a sale context without `ga` (every fact already in Kafka and S3) counts its seat ids, as before.
 */

const tenantId = 'tenant-ga';
const eventId = randomUUID();
const seat = (section: string) => ({ seatId: randomUUID(), section, tier: 'A', price: 7_500 });
const lawn = { areaId: randomUUID(), area: 'Lawn', tier: 'A', quantity: 2, price: 7_500 };

function holdCreated(sale: Record<string, unknown>) {
  const orderId = randomUUID();
  return JSON.stringify({
    eventId: randomUUID(),
    eventType: 'HoldCreated',
    schemaVersion: 2,
    aggregateId: orderId,
    occurredAt: '2026-01-01T00:00:00.000Z',
    correlationId: orderId,
    causationId: null,
    cellId: 'cell-1',
    payload: {
      orderId,
      holdId: randomUUID(),
      eventId,
      userId: 'u1',
      seatIds: [],
      amount: 15_000,
      currency: 'eur',
      expiresAt: '2026-01-01T00:10:00.000Z',
      sale: { tenantId, eventId, amount: 15_000, currency: 'eur', ...sale },
    },
  });
}

const raw = (value: string, offset: number) => ({ source: 'cell-1', partition: 0, offset: String(offset), value });

describe('facts count places', () => {
  it('a sale context without ga (a fact from before) reads, and counts its seat ids', () => {
    const f = toFact(raw(holdCreated({ seats: [seat('S1'), seat('S1')] }), 0))!;
    expect(f.ga).toBeNull();
    expect(factPlaces(f)).toBe(2);
  });

  it('a GA order and a seat + GA order count their GA places', () => {
    const ga = toFact(raw(holdCreated({ seats: [], ga: [lawn] }), 1))!;
    const mixed = toFact(raw(holdCreated({ seats: [seat('S1')], ga: [{ ...lawn, quantity: 1 }] }), 2))!;
    expect(ga.ga).toEqual([lawn]);
    expect([factPlaces(ga), factPlaces(mixed)]).toEqual([2, 2]);
  });

  it('Parquet: objects of facts without GA places have no ga column (their bytes as before); GA places round-trip', async () => {
    const old = toFact(raw(holdCreated({ seats: [seat('S1')] }), 3))!;
    const withGa = toFact(raw(holdCreated({ seats: [], ga: [lawn] }), 4))!;
    const plain = encodeFacts([old]);
    const columns = (bytes: Uint8Array) =>
      parquetMetadata(
        bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
      ).schema.map((c) => c.name);
    expect(columns(plain)).not.toContain('ga');
    expect(columns(encodeFacts([old, withGa]))).toContain('ga');
    expect(await decodeFacts(plain)).toEqual([old]);
    const both: Fact[] = [old, withGa];
    expect(await decodeFacts(encodeFacts(both))).toEqual(both);
  });
});
