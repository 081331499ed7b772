import { CellSignals } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { dropCellTopics, provisionCellTopics, uniqueCellId } from '../../test/support/kafka';
import { eventLoad, loadIntoCell } from '../../test/support/seed';

let identity: TestIdentity;
let cell: TestCell;
const cellId = uniqueCellId('sig');

beforeAll(async () => {
  identity = await startIdentity();
  cell = await startTestCell(identity, { cellId });
  await provisionCellTopics(cellId);
});
afterAll(async () => {
  await cell?.close();
  await identity?.close();
  await dropCellTopics(cellId);
});

describe('health signals for the release controller', () => {
  it('reports active holds, seats left per event, outbox age and consumer lag', async () => {
    const event = await loadIntoCell(cell, eventLoad(10));
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    expect((await buyer.hold([event.seats[0]!.id, event.seats[1]!.id])).status).toBe(202);

    const res = await fetch(`${cell.url}/internal/signals`, {
      headers: { authorization: `Bearer ${cell.internalToken}` },
    });
    expect(res.status).toBe(200);
    const signals = CellSignals.parse(await res.json());
    expect(signals.cellId).toBe(cellId);
    expect(signals.activeHolds).toBe(1);
    expect(signals.availableSeats[event.eventId]).toBe(8);
    expect(signals.outboxAgeMs).toBeGreaterThan(0);
    expect(signals.holdLatencyP99Ms).toBeGreaterThan(0);
    expect(signals.consumerLag).toBe(0);
  });

  it('reports a sold-out event as zero seats, not as missing', async () => {
    const event = await loadIntoCell(cell, eventLoad(1));
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    expect((await buyer.hold([event.seats[0]!.id])).status).toBe(202);
    const signals = await (
      await fetch(`${cell.url}/internal/signals`, { headers: { authorization: `Bearer ${cell.internalToken}` } })
    ).json();
    expect(signals.availableSeats[event.eventId]).toBe(0);
  });

  it('is internal only', async () => {
    expect((await fetch(`${cell.url}/internal/signals`)).status).toBe(401);
  });
});
