import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCell, createHarness, type Harness, smallSeatMap } from '../../test/support/control-plane';
import { events, priceTiers } from '../src/db/schema';
import { withTransaction } from '../src/db/tx';
import { createEvent, updateEvent } from '../src/events/events';
import { setTierFees } from '../src/events/fees';
import { uploadSeatMap } from '../src/events/seat-map';
import type { PromoterActor } from '../src/lib/actors';
import { scheduleOnsale } from '../src/onsale/schedule';
import { roomKeys } from '../src/waiting-room/keys';

let h: Harness;
let actor: PromoterActor;

beforeAll(async () => {
  h = await createHarness();
  await addCell(h, 'cell-tx');
  const t = await h.tenant();
  actor = { kind: 'promoter', sub: 'manager', tenantId: t.id, role: 'manager' };
});
afterAll(async () => {
  await h?.close();
});

async function draftEvent() {
  const ev = await createEvent({
    ctx: h.services,
    actor,
    input: { name: 'Gig', venue: 'Hall', startsAt: new Date(h.clock.now().getTime() + 30 * 86_400_000) },
  });
  await uploadSeatMap({
    ctx: h.services,
    actor,
    eventId: ev.id,
    input: { format: 'json', body: JSON.stringify(smallSeatMap(10)) },
  });
  return ev.id;
}

const stored = async (eventId: string) => {
  const [ev] = await h.services.db.select().from(events).where(eq(events.id, eventId));
  const [tier] = await h.services.db.select().from(priceTiers).where(eq(priceTiers.eventId, eventId));
  return { name: ev?.name, fee: tier?.fee, fees: tier?.feesIncluded ? 'included' : 'added' };
};

describe('verbs composed in one transaction', () => {
  it('roll back together when the transaction fails after both ran', async () => {
    const eventId = await draftEvent();
    const before = await stored(eventId);
    await expect(
      withTransaction(h.services, async (_tx, ctx) => {
        await setTierFees({ ctx, actor, eventId, code: 'A', input: { fee: 250, fees: 'added' } });
        await updateEvent({ ctx, actor, eventId, input: { name: 'Renamed' } });
        // Each verb saw the transaction's writes so far, and neither committed on its own.
        expect(await stored(eventId)).toEqual(before);
        throw new Error('the step after them failed');
      }),
    ).rejects.toThrow('the step after them failed');
    expect(await stored(eventId)).toEqual(before);
  });

  it('commit together, the second seeing what the first wrote', async () => {
    const eventId = await draftEvent();
    await withTransaction(h.services, async (_tx, ctx) => {
      // A tier only the (uncommitted) upload creates: the fee verb finds it inside the same transaction.
      const map = { ...smallSeatMap(10, 'B'), tiers: [{ code: 'B', name: 'Circle', price: 5000, currency: 'eur' }] };
      await uploadSeatMap({ ctx, actor, eventId, input: { format: 'json', body: JSON.stringify(map) } });
      await setTierFees({ ctx, actor, eventId, code: 'B', input: { fee: 300, fees: 'included' } });
    });
    const [tier] = await h.services.db.select().from(priceTiers).where(eq(priceTiers.eventId, eventId));
    expect(tier).toMatchObject({ code: 'B', fee: 300, feesIncluded: true });
  });

  it("leaves the waiting room untouched when a composed verb's transaction rolls back", async () => {
    const eventId = await draftEvent();
    const now = h.clock.now().getTime();
    const schedule = {
      roomOpensAt: new Date(now + 60_000),
      onsaleAt: new Date(now + 120_000),
      perBuyerLimit: 4,
      maxReleaseRate: 100,
    };
    const meta = roomKeys(h.services.prefix, eventId).meta;
    await expect(
      withTransaction(h.services, async (_tx, ctx) => {
        await scheduleOnsale({ ctx, actor, eventId, input: schedule });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await h.services.redis.exists(meta)).toBe(0);
    const [ev] = await h.services.db.select().from(events).where(eq(events.id, eventId));
    expect(ev?.status).toBe('draft');

    // The same verb on its own configures the room once it has committed.
    await scheduleOnsale({ ctx: h.services, actor, eventId, input: schedule });
    expect(await h.services.redis.hget(meta, 'onsaleAt')).toBe(String(schedule.onsaleAt.getTime()));
  });
});
