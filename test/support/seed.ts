import { randomUUID } from 'node:crypto';
import type { EventLoad } from '@onsale/contracts';
import type { TestCell } from './cell';

export function seatMap(count: number, price = 5_000): EventLoad['seats'] {
  return Array.from({ length: count }, (_, i) => ({
    id: randomUUID(),
    label: `S${Math.floor(i / 1000)}-R${Math.floor(i / 50) % 20}-${i}`,
    section: `S${Math.floor(i / 1000)}`,
    row: `R${Math.floor(i / 50) % 20}`,
    price,
    currency: 'eur',
  }));
}

export function eventLoad(seats: number, overrides: Partial<EventLoad> = {}): EventLoad {
  return {
    eventId: randomUUID(),
    tenantId: 'tenant-test',
    name: 'Test onsale',
    startsAt: new Date(Date.now() + 86_400_000).toISOString(),
    holdTtlSeconds: 600,
    maxSeatsPerOrder: 8,
    directoryEpoch: 1,
    seats: seatMap(seats),
    ...overrides,
  };
}

/** Loads an event through the cell's internal endpoint, as the control plane does. */
export async function loadIntoCell(cell: TestCell, load: EventLoad): Promise<EventLoad> {
  const res = await fetch(`${cell.url}/internal/events/${load.eventId}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${cell.internalToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(load),
  });
  if (res.status !== 200) throw new Error(`load failed: ${res.status} ${await res.text()}`);
  return load;
}
