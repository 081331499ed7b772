import { CellSignals } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { dropCellTopics, eventually, provisionCellTopics, uniqueCellId } from '../../test/support/kafka';
import { eventLoad, loadIntoCell } from '../../test/support/seed';
import { startStripeEmulator, stripeClient } from '../../test/support/stripe';
import { startCellWorkers } from '../../test/support/workers';

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

const signalsOf = async () =>
  CellSignals.parse(
    await (
      await fetch(`${cell.url}/internal/signals`, { headers: { authorization: `Bearer ${cell.internalToken}` } })
    ).json(),
  );

describe('health signals for the release controller', () => {
  it('reports active holds, seats left per event and outbox age', async () => {
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
  });

  it("reports the consumers' lag: published facts nobody consumed yet, draining to 0 once the consumers run", async () => {
    const event = await loadIntoCell(cell, eventLoad(4));
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    expect((await buyer.hold([event.seats[0]!.id])).status).toBe(202);
    const relay = await startCellWorkers(cellId, cell.db.url, { relay: true });
    const emulator = await startStripeEmulator();
    let consumers: Awaited<ReturnType<typeof startCellWorkers>> | undefined;
    try {
      // Published, not consumed: every one of the cell's three consumer groups is behind.
      const lagging = await eventually(async () => {
        const lag = (await signalsOf()).consumerLag;
        return lag !== null && lag >= 3 ? lag : null;
      }, 'the relay to publish while no consumer runs');
      expect(lagging).toBeGreaterThanOrEqual(3);
      consumers = await startCellWorkers(
        cellId,
        cell.db.url,
        { saga: true, tickets: true, payments: true },
        undefined,
        { stripe: stripeClient(emulator) },
      );
      await eventually(async () => (await signalsOf()).consumerLag === 0, 'the consumers to catch up', 60_000, 250);
    } finally {
      await consumers?.stop();
      await relay.stop();
      await emulator.close();
    }
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
