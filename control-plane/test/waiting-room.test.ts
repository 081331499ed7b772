import { ADMISSION_ALG, ADMISSION_AUDIENCE, ADMISSION_ISSUER, AdmissionClaims } from '@onsale/contracts';
import { eq, sql } from 'drizzle-orm';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect } from 'vitest';
import { type Harness, scheduledEvent } from '../../test/support/control-plane';
import { controlPlaneTest, type TestTenant } from '../../test/support/fixtures';
import { releaseRates } from '../src/db/schema';
import { runSchedulerTick } from '../src/onsale/scheduler';
import { runControllerTick } from '../src/release-controller/tick';
import { joinQueue } from '../src/waiting-room/join';
import { releaseStep } from '../src/waiting-room/release';

const it = controlPlaneTest({ cellId: 'cell-wr', env: { WAITING_ROOM_ABANDON_SECONDS: '3600' } });

const join = async (h: Harness, eventId: string, token: string) => h.req('POST', `/events/${eventId}/queue`, { token });
const me = async (h: Harness, eventId: string, token: string) => h.req('GET', `/events/${eventId}/queue/me`, { token });

/** Loads (fake cell), opens the room and starts the onsale by moving the clock past onsaleAt. */
async function startOnsale(h: Harness, tenant: TestTenant, eventId: string) {
  h.clock.advance(121_000);
  const s = await runSchedulerTick(h.services);
  expect(s.started + s.blocked).toBeGreaterThan(0);
  const on = await h.req('GET', `/events/${eventId}/onsale`, { token: tenant.viewer });
  expect(on.body.ready).toBe(true);
  expect(on.body.room.releasing).toBe(true);
}

describe('waiting room', () => {
  it('joins are idempotent: a refresh or a second device keeps the place', async ({ h, tenant }) => {
    const { eventId } = await scheduledEvent(h, tenant.manager, { opensInMs: 0, onsaleInMs: 120_000 });
    const tokens = await Promise.all(['a', 'b', 'c'].map((s) => h.buyer(`idem-${s}`)));
    for (const t of tokens) expect((await join(h, eventId, t)).status).toBe(200);
    const first = await join(h, eventId, tokens[1]!);
    expect(first.body.joined).toBe(false);
    expect(first.body.position).toBe(2);
    // "second device": a new token for the same buyer
    const again = await h.buyer('idem-b');
    const r = await join(h, eventId, again);
    expect(r.body).toMatchObject({ status: 'waiting', position: 2, peopleAhead: 1, joined: false });
    expect((await me(h, eventId, again)).body.position).toBe(2);
  });

  it('a crowd of joins shares group-commit INSERTs of at most 64 facts, and every join that answered has its fact', async ({
    h,
    tenant,
  }) => {
    const { eventId } = await scheduledEvent(h, tenant.manager, { opensInMs: 0, onsaleInMs: 120_000 });
    const crowd = 300;
    const answers = await Promise.all(
      Array.from({ length: crowd }, (_, i) =>
        joinQueue({ ctx: h.services, actor: { kind: 'buyer', sub: `crowd-${i}` }, eventId }),
      ),
    );
    expect(answers.every((a) => a.joined && a.status === 'waiting')).toBe(true);
    // A row's xmin is the transaction that inserted it: one per group-commit INSERT.
    const writes = await h.services.db.execute<{ facts: number }>(sql`
      SELECT count(*)::int AS facts FROM fact_outbox
       WHERE event_type = 'QueueJoined' AND aggregate_id = ${eventId} GROUP BY xmin::text`);
    const sizes = writes.rows.map((w) => w.facts);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(crowd);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(64);
    expect(sizes.length).toBeLessThan(crowd / 4);
  });

  it('shuffles pre-opening arrivals once, keeps later arrivals in order, positions only go down', async ({
    h,
    tenant,
  }) => {
    const { eventId } = await scheduledEvent(h, tenant.manager, {
      opensInMs: 60_000,
      onsaleInMs: 120_000,
      maxReleaseRate: 5,
    });
    const early = await Promise.all(Array.from({ length: 30 }, (_, i) => h.buyer(`early-${i}`)));
    for (const t of early) {
      const r = await join(h, eventId, t);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ status: 'waiting', roomOpen: false, position: null });
    }
    h.clock.advance(60_000);
    await runSchedulerTick(h.services); // opens the room
    const late = await Promise.all(Array.from({ length: 10 }, (_, i) => h.buyer(`late-${i}`)));
    for (const t of late) await join(h, eventId, t);

    const positions = async (ts: string[]) =>
      Promise.all(ts.map(async (t) => (await me(h, eventId, t)).body.position as number));
    const earlyPos = await positions(early);
    expect([...earlyPos].sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    // A random order: not arrival order (the chance of identity is 1/30!).
    expect(earlyPos).not.toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(await positions(late)).toEqual(Array.from({ length: 10 }, (_, i) => 31 + i));
    // Shuffled once: asking again gives the same order.
    expect(await positions(early)).toEqual(earlyPos);

    // Release in steps; every waiter's position only goes down, and release follows queue order.
    await startOnsale(h, tenant, eventId);
    let prev = new Map([...early, ...late].map((t, i) => [t, i < 30 ? earlyPos[i]! : 31 + (i - 30)]));
    let releasedTotal = 0;
    for (let step = 0; step < 5; step++) {
      const releasedOrder: number[] = [];
      h.clock.advance(1000);
      const r = await releaseStep(h.services, eventId);
      expect(r.released.length).toBeLessThanOrEqual(5);
      const next = new Map<string, number>();
      for (const [t, p] of prev) {
        const s = (await me(h, eventId, t)).body;
        if (s.status === 'waiting') {
          expect(s.position).toBeLessThanOrEqual(p);
          next.set(t, s.position);
        } else {
          expect(s.status).toBe('released');
          releasedOrder.push(p);
        }
      }
      prev = next;
      // Those released in a step were exactly the head of the queue.
      expect([...releasedOrder].sort((a, b) => a - b)).toEqual(
        Array.from({ length: releasedOrder.length }, (_, i) => i + 1),
      );
      expect(releasedOrder.length).toBe(r.released.length);
      releasedTotal += releasedOrder.length;
    }
    expect(releasedTotal).toBeGreaterThan(0);
  });

  it('released buyers receive a verifiable admission token; those not released get none', async ({ h, tenant }) => {
    const { eventId } = await scheduledEvent(h, tenant.manager, {
      opensInMs: 0,
      onsaleInMs: 120_000,
      maxReleaseRate: 4,
    });
    const buyers = await Promise.all(Array.from({ length: 6 }, (_, i) => h.buyer(`tok-${i}`)));
    for (const t of buyers) await join(h, eventId, t);
    await startOnsale(h, tenant, eventId);
    h.clock.advance(1000);
    const step = await releaseStep(h.services, eventId);
    expect(step.released).toEqual(['tok-0']); // initial R = 25% of the ceiling (4) = 1/s

    const jwks = (await h.req('GET', '/.well-known/jwks.json')).body;
    const keySet = createLocalJWKSet(jwks);
    const released = (await me(h, eventId, buyers[0]!)).body;
    expect(released.status).toBe('released');
    const token = released.admission.token as string;
    const { payload, protectedHeader } = await jwtVerify(token, keySet, {
      audience: ADMISSION_AUDIENCE,
      issuer: ADMISSION_ISSUER,
      algorithms: [ADMISSION_ALG],
      currentDate: h.clock.now(),
    });
    expect(protectedHeader.kid).toBeTruthy();
    const claims = AdmissionClaims.parse(payload);
    expect(Object.keys(payload).sort()).toEqual(
      ['aud', 'directoryEpoch', 'eventId', 'exp', 'iat', 'iss', 'jti', 'purchaseCell', 'sub'].sort(),
    );
    expect(claims).toMatchObject({ sub: 'tok-0', eventId, purchaseCell: 'cell-wr', directoryEpoch: 1 });
    expect(claims.exp - claims.iat).toBe(h.config.ADMISSION_TOKEN_TTL_SECONDS);
    // Fetchable again until it expires: the same token.
    expect((await me(h, eventId, buyers[0]!)).body.admission.token).toBe(token);
    expect(decodeProtectedHeader(token).alg).toBe(ADMISSION_ALG);

    for (const t of buyers.slice(1)) {
      const s = (await me(h, eventId, t)).body;
      expect(s.status).toBe('waiting');
      expect(s.admission).toBeNull();
    }
    // Once expired it is no longer handed out.
    h.clock.advance(h.config.ADMISSION_TOKEN_TTL_SECONDS * 1000 + 1000);
    const later = (await me(h, eventId, buyers[0]!)).body;
    expect(later.status).toBe('expired');
    expect(later.admission).toBeNull();
  });

  it('gives every event its own queue and R', async ({ h, tenant }) => {
    const a = await scheduledEvent(h, tenant.manager, { opensInMs: 0, onsaleInMs: 1000, maxReleaseRate: 8 });
    const b = await scheduledEvent(h, tenant.manager, { opensInMs: 0, onsaleInMs: 1000, maxReleaseRate: 40 });
    const t = await h.buyer('multi-1');
    expect((await join(h, a.eventId, t)).body.position).toBe(1);
    expect((await join(h, b.eventId, t)).body.position).toBe(1);
    const other = await h.req('GET', `/events/${b.eventId}/onsale`, { token: tenant.viewer });
    expect(other.body.release.rate).toBe(10);
    const first = await h.req('GET', `/events/${a.eventId}/onsale`, { token: tenant.viewer });
    expect(first.body.release.rate).toBe(2);
  });

  it('a room Redis lost is rebuilt from the onsale record by the next scheduler pass: open, releasing, admitting again', async ({
    h,
    tenant,
  }) => {
    const { eventId } = await scheduledEvent(h, tenant.manager, { opensInMs: 0, onsaleInMs: 120_000 });
    await startOnsale(h, tenant, eventId);
    const before = await h.req('GET', `/events/${eventId}/onsale`, { token: tenant.viewer });
    const waiting = await h.buyer('lost-waiting');
    expect((await join(h, eventId, waiting)).status).toBe(200);

    // Redis restarted without its data: every key of this control plane is gone.
    const keys = await h.services.redis.keys(`${h.config.REDIS_KEY_PREFIX}*`);
    await h.services.redis.del(...keys);
    // Until the scheduler's next pass, the room answers 503 with Retry-After: it is on sale, not unknown.
    const lost = await me(h, eventId, waiting);
    expect(lost.status).toBe(503);
    expect(lost.body.error.code).toBe('waiting_room_unavailable');
    expect(lost.headers.get('retry-after')).toBe('2');
    expect((await join(h, eventId, waiting)).body.error.code).toBe('waiting_room_unavailable');
    // The release controller's pass may come first: its R and sold-out flag do not make a partial room of the loss.
    await runControllerTick(h.services);
    expect(await h.services.redis.keys(`${h.config.REDIS_KEY_PREFIX}wr:*`)).toEqual([]);

    // Every live room of this control plane (earlier tests' events too) comes back in one pass.
    expect((await runSchedulerTick(h.services)).restored).toBeGreaterThanOrEqual(1);
    const after = await h.req('GET', `/events/${eventId}/onsale`, { token: tenant.viewer });
    // At the R the record holds now (the controller's pass above may have moved it on from before the loss).
    const [rr] = await h.services.db.select().from(releaseRates).where(eq(releaseRates.eventId, eventId));
    expect(rr!.rate).toBeGreaterThanOrEqual(before.body.room.rate);
    expect(after.body.room).toMatchObject({ open: true, releasing: true, rate: rr!.rate });
    // The record holds no queue: the buyer who waited is told to join again, and is then released.
    expect((await me(h, eventId, waiting)).body).toMatchObject({ status: 'not_in_queue', roomOpen: true });
    expect((await join(h, eventId, waiting)).body).toMatchObject({ status: 'waiting', position: 1 });
    h.clock.advance(2_000);
    await releaseStep(h.services, eventId);
    expect((await me(h, eventId, waiting)).body.admission?.token).toEqual(expect.any(String));
    // A room that is there is left alone.
    expect((await runSchedulerTick(h.services)).restored).toBe(0);
  });

  it("refuses a promoter's and an operator's token with 403 and a subject with a control character with 401; none joins", async ({
    h,
    tenant,
  }) => {
    const { eventId } = await scheduledEvent(h, tenant.manager, { opensInMs: 0, onsaleInMs: 120_000 });
    for (const token of [tenant.owner, h.operatorToken]) {
      const r = await join(h, eventId, token);
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('forbidden');
    }
    const r = await join(h, eventId, await h.buyer('nul\u0000sub'));
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('unauthenticated');
    const first = await join(h, eventId, await h.buyer('first-real-buyer'));
    expect(first.body).toMatchObject({ joined: true, position: 1 });
  });

  it('answers 404 for an event without a waiting room and 401 without a token', async ({ h }) => {
    const t = await h.buyer('nobody');
    expect((await join(h, '00000000-0000-4000-8000-000000000000', t)).status).toBe(404);
    const r = await h.req('POST', '/events/00000000-0000-4000-8000-000000000000/queue');
    expect(r.status).toBe(401);
    expect(r.body.error).toMatchObject({ code: 'unauthenticated' });
  });

  it("names each request itself: a caller's X-Request-Id is not taken, its X-Correlation-Id is", async ({ h }) => {
    const res = await h.app.request('/events/00000000-0000-4000-8000-000000000000/queue', {
      method: 'POST',
      headers: { 'x-request-id': 'chosen-by-the-caller', 'x-correlation-id': 'corr-7' },
    });
    const { error } = await res.json();
    expect(error.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(res.headers.get('x-request-id')).toBe(error.requestId);
    expect(res.headers.get('x-correlation-id')).toBe('corr-7');
    const malformed = await h.app.request('/healthz', { headers: { 'x-correlation-id': 'not an id' } });
    expect(malformed.headers.get('x-correlation-id')).toBe(malformed.headers.get('x-request-id'));
  });
});
