import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { addCell, createHarness, type Harness, scheduledEvent } from '../../test/support/control-plane';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { cancelOnsale, pauseOnsale, resumeOnsale } from '../src/onsale/sales-control';
import type { PromoterActor } from '../src/lib/actors';
import { runSchedulerTick } from '../src/onsale/scheduler';

let h: Harness;
let identity: TestIdentity;
let cell: TestCell;
let t: Awaited<ReturnType<Harness['tenant']>>;
let actor: PromoterActor;

beforeAll(async () => {
  h = await createHarness();
  identity = await startIdentity();
  cell = await startTestCell(identity, {
    cellId: 'cell-ctl',
    env: { CELL_INTERNAL_TOKEN: 'test-cell-internal-token-0123456789' },
  });
  await addCell(h, 'cell-ctl', cell.url);
  t = await h.tenant();
  actor = { kind: 'promoter', sub: 'manager', tenantId: t.id, role: 'manager' };
});
afterAll(async () => {
  await cell?.close();
  await identity?.close();
  await h?.close();
});

async function liveOnsale() {
  const { eventId } = await scheduledEvent(h, t.manager, { seats: 20, cellId: 'cell-ctl' });
  await runSchedulerTick(h.services);
  h.clock.advance(121_000);
  await runSchedulerTick(h.services);
  const ev = await h.req('GET', `/events/${eventId}`, { token: t.viewer });
  expect(ev.body.status).toBe('on_sale');
  const seats = await cell.db.query<{ id: string }>('SELECT id FROM seats WHERE event_id = $1 ORDER BY label', [
    eventId,
  ]);
  return { eventId, seats: seats.map((s) => s.id) };
}

describe('the promoter pauses, resumes and cancels a live onsale in its cell', () => {
  it('pause refuses new holds in the cell with the reason, resume lets buyers in again', async () => {
    const { eventId, seats } = await liveOnsale();
    const buyer = await admittedBuyer(identity, cell, eventId);
    expect((await buyer.hold([seats[0]!])).status).toBe(202);

    await pauseOnsale({ ctx: h.services, actor, eventId });
    const refused = await buyer.hold([seats[1]!]);
    expect(refused.status).toBe(409);
    expect((await refused.json()).error).toMatchObject({ code: 'onsale_paused' });
    expect((await h.req('GET', `/events/${eventId}`, { token: t.viewer })).body.status).toBe('paused');

    await resumeOnsale({ ctx: h.services, actor, eventId });
    expect((await buyer.hold([seats[1]!])).status).toBe(202);
  });

  it('cancel ends the sale in the cell (holds released) and ends the event', async () => {
    const { eventId, seats } = await liveOnsale();
    const buyer = await admittedBuyer(identity, cell, eventId);
    const { orderId } = await (await buyer.hold([seats[0]!, seats[1]!])).json();

    const answer = await cancelOnsale({ ctx: h.services, actor, eventId });
    expect(answer).toMatchObject({ eventId, status: 'ended', canceled: { holdsReleased: 1 } });
    const [order] = await cell.db.query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [orderId]);
    expect(order?.status).toBe('canceled');
    const refused = await (await admittedBuyer(identity, cell, eventId)).hold([seats[0]!]);
    expect((await refused.json()).error.code).toBe('event_canceled');
    expect((await h.req('GET', `/events/${eventId}`, { token: t.viewer })).body.status).toBe('ended');
    // Repeating the cancel of an ended event is refused; the cell already ended everything.
    await expect(cancelOnsale({ ctx: h.services, actor, eventId })).rejects.toThrow(/ended/);
  });
});
