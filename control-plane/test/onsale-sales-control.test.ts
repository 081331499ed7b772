import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { addCell, consoleSession, createHarness, type Harness, scheduledEvent } from '../../test/support/control-plane';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import type { PromoterActor } from '../src/lib/actors';
import { cancelOnsale, pauseOnsale, resumeOnsale } from '../src/onsale/sales-control';
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

  it("the console's cancel of a live onsale announces the event ended, not a draft again", async () => {
    const { eventId } = await liveOnsale();
    const promoter = await consoleSession(h, t);
    const cancelled = await promoter.post(`/console/events/${eventId}/onsale/cancel`);
    expect(cancelled.status).toBe(303);
    expect(cancelled.location).toMatch(/notice=ended/);
    const page = await promoter.get(cancelled.location!);
    expect(page.text).toContain('Event cancelled: its unpaid orders are cancelled');
    expect(page.text).not.toContain('draft again');
  });
});

describe('pause, resume and cancel as API routes', () => {
  const control = (verb: 'pause' | 'resume' | 'cancel', eventId: string, token?: string) =>
    h.req('POST', `/events/${eventId}/onsale/${verb}`, { token });

  it('need a promoter of the event’s tenant who may manage it', async () => {
    const { eventId } = await scheduledEvent(h, t.manager, { seats: 4, cellId: 'cell-ctl' });
    const other = await h.tenant('Someone else');
    for (const verb of ['pause', 'resume', 'cancel'] as const) {
      expect((await control(verb, eventId)).status, verb).toBe(401);
      expect((await control(verb, eventId, await h.buyer('a-buyer'))).body.error.code, verb).toBe('forbidden');
      expect((await control(verb, eventId, t.viewer)).status, verb).toBe(403);
      // Another promoter's event does not exist for them, even to a manager or owner.
      const foreign = await control(verb, eventId, other.owner);
      expect(foreign.status, verb).toBe(404);
      expect(foreign.body.error.code, verb).toBe('not_found');
    }
    expect((await h.req('GET', `/events/${eventId}`, { token: t.viewer })).body.status).toBe('scheduled');
  });

  it('move a live onsale from on sale to paused and back, then end it; a verb out of turn is a 409 naming the status', async () => {
    const { eventId, seats } = await liveOnsale();
    const buyer = await admittedBuyer(identity, cell, eventId);

    const paused = await control('pause', eventId, t.manager);
    expect(paused).toMatchObject({ status: 200, body: { eventId, status: 'paused', canceled: null } });
    expect((await (await buyer.hold([seats[0]!])).json()).error.code).toBe('onsale_paused');
    const again = await control('pause', eventId, t.manager);
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'conflict', details: { status: 'paused' } });

    expect((await control('resume', eventId, t.owner)).body).toMatchObject({ eventId, status: 'on_sale' });
    expect((await buyer.hold([seats[0]!])).status).toBe(202);
    expect((await control('resume', eventId, t.manager)).body.error).toMatchObject({
      code: 'conflict',
      details: { status: 'on_sale' },
    });

    const cancelled = await control('cancel', eventId, t.manager);
    expect(cancelled).toMatchObject({
      status: 200,
      body: { eventId, status: 'ended', canceled: { holdsReleased: 1 } },
    });
    expect((await h.req('GET', `/events/${eventId}`, { token: t.viewer })).body.status).toBe('ended');
    expect((await control('cancel', eventId, t.manager)).status).toBe(409);
    expect((await control('resume', eventId, t.manager)).status).toBe(409);
  });

  it('cancel a scheduled onsale before it starts: the event is a draft again', async () => {
    const { eventId } = await scheduledEvent(h, t.manager, { seats: 4, cellId: 'cell-ctl' });
    expect((await control('pause', eventId, t.manager)).body.error).toMatchObject({
      code: 'conflict',
      details: { status: 'scheduled' },
    });
    expect((await control('cancel', eventId, t.manager)).body).toEqual({ eventId, status: 'draft', canceled: null });
    expect((await h.req('GET', `/events/${eventId}/onsale`, { token: t.viewer })).status).toBe(404);
  });

  it('answer 503 cell_unavailable with Retry-After when the cell does not answer, and change nothing', async () => {
    const { eventId } = await liveOnsale();
    const moveCell = (baseUrl: string) =>
      h.req('PATCH', '/operator/cells/cell-ctl', { token: h.operatorToken, body: { baseUrl } });
    expect((await moveCell('http://127.0.0.1:9')).status).toBe(200);
    try {
      for (const verb of ['pause', 'cancel'] as const) {
        const refused = await control(verb, eventId, t.manager);
        expect(refused.status, verb).toBe(503);
        expect(refused.headers.get('retry-after'), verb).toMatch(/^\d+$/);
        expect(refused.body.error, verb).toMatchObject({ code: 'cell_unavailable', details: { cellId: 'cell-ctl' } });
      }
      expect((await h.req('GET', `/events/${eventId}`, { token: t.viewer })).body.status).toBe('on_sale');
    } finally {
      await moveCell(cell.url);
    }
    expect((await control('pause', eventId, t.manager)).body.status).toBe('paused');
  });

  it('are in the OpenAPI document with their refusals', async () => {
    const doc = (await h.req('GET', '/openapi.json')).body;
    for (const verb of ['pause', 'resume', 'cancel']) {
      const op = doc.paths[`/events/{eventId}/onsale/${verb}`]?.post;
      expect(op, verb).toBeDefined();
      expect(Object.keys(op.responses).sort(), verb).toEqual(['200', '400', '401', '403', '404', '409', '413', '503']);
    }
  });
});
