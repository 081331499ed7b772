import { createHash } from 'node:crypto';
import { AdmissionClaims, metrics } from '@onsale/contracts';
import { createDeviceKey, leadingZeroBits, powInput, solveChallenge } from '@onsale/contracts/device-proof';
import { decodeJwt } from 'jose';
import { describe, expect } from 'vitest';
import { type Harness, scheduledEvent } from '../../test/support/control-plane';
import { controlPlaneTest, type TestTenant } from '../../test/support/fixtures';
import { runSchedulerTick } from '../src/onsale/scheduler';
import { releaseStep } from '../src/waiting-room/release';

const it = controlPlaneTest({ cellId: 'cell-door', env: { WAITING_ROOM_ABANDON_SECONDS: '3600' } });

const setDoor = (h: Harness, eventId: string, body: object) =>
  h.req('PUT', `/operator/events/${eventId}/door`, { token: h.operatorToken, body });
const challenge = async (h: Harness, eventId: string, token: string) =>
  (await h.req('POST', `/events/${eventId}/queue/challenge`, { token })).body as {
    challenge: string;
    difficulty: number;
    required: boolean;
  };
const join = (h: Harness, eventId: string, token: string, body?: object) =>
  h.req('POST', `/events/${eventId}/queue`, { token, ...(body ? { body } : {}) });

/** A counter whose hash falls short of `difficulty`: what a client that skipped the work would send. */
function unsolved(challenge: string, difficulty: number) {
  for (let counter = 0; ; counter++)
    if (leadingZeroBits(createHash('sha256').update(powInput(challenge, counter)).digest()) < difficulty)
      return counter;
}

const counted = async (eventId: string, outcome: string) =>
  (await metrics.powChallenges.get()).values.find((v) => v.labels.event === eventId && v.labels.outcome === outcome)
    ?.value ?? 0;

describe('proof of work at the door', () => {
  it('refuses a join without the proof, or with work below the difficulty, naming the field; takes a solved one once', async ({
    h,
    tenant,
  }) => {
    const { eventId } = await scheduledEvent(h, tenant.manager, { opensInMs: 0, onsaleInMs: 120_000 });
    expect((await setDoor(h, eventId, { powDifficulty: 8 })).status).toBe(200);
    const buyer = await h.buyer('pow-a');

    const none = await join(h, eventId, buyer);
    expect(none.status).toBe(403);
    expect(none.body.error.code).toBe('proof_of_work_invalid');
    expect(none.body.error.details).toMatchObject({ reason: 'missing', requiredDifficulty: 8 });
    expect(none.body.error.details.issues[0].path).toBe('pow');

    const c = await challenge(h, eventId, buyer);
    expect(c).toMatchObject({ required: true, difficulty: 8 });
    const lazy = await join(h, eventId, buyer, { pow: { challenge: c.challenge, counter: unsolved(c.challenge, 8) } });
    expect(lazy.status).toBe(403);
    expect(lazy.body.error.details).toMatchObject({ reason: 'insufficient_work', requiredDifficulty: 8 });
    expect(lazy.body.error.details.achievedDifficulty).toBeLessThan(8);
    expect(lazy.body.error.details.issues[0].path).toBe('pow.counter');

    const pow = { challenge: c.challenge, counter: await solveChallenge(c.challenge, c.difficulty) };
    const ok = await join(h, eventId, buyer, { pow });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'waiting', joined: true });

    const again = await join(h, eventId, buyer, { pow });
    expect(again.status).toBe(403);
    expect(again.body.error.details.reason).toBe('spent');

    expect(await counted(eventId, 'issued')).toBe(1);
    expect(await counted(eventId, 'solved')).toBe(1);
    expect(await counted(eventId, 'refused')).toBe(3);
    // The onsale's bot report counts the same challenges, per onsale and across processes (Redis).
    const report = await h.req('GET', `/events/${eventId}/bot-report`, { token: tenant.viewer });
    expect(report.body.challenges).toMatchObject({ issued: 1, solved: 1 });
  });

  it('refuses a challenge issued to another buyer, a tampered one, an expired one, and one easier than the onsale now asks', async ({
    h,
    tenant,
  }) => {
    const { eventId } = await scheduledEvent(h, tenant.manager, { opensInMs: 0, onsaleInMs: 600_000 });
    await setDoor(h, eventId, { powDifficulty: 4 });
    const [mine, theirs] = await Promise.all([h.buyer('pow-b'), h.buyer('pow-c')]);
    const solved = async (token: string) => {
      const c = await challenge(h, eventId, token);
      return { challenge: c.challenge, counter: await solveChallenge(c.challenge, c.difficulty) };
    };
    const reason = async (token: string, pow: object) => {
      const r = await join(h, eventId, token, { pow });
      expect(r.status).toBe(403);
      return r.body.error.details.reason;
    };

    expect(await reason(mine, await solved(theirs))).toBe('other_buyer');
    const p = await solved(mine);
    const [body, mac] = p.challenge.split('.') as [string, string];
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), d: 0 }),
    ).toString('base64url');
    expect(await reason(mine, { challenge: `${forged}.${mac}`, counter: 0 })).toBe('signature');

    const stale = await solved(mine);
    h.clock.advance(121_000);
    expect(await reason(mine, stale)).toBe('expired');

    const easy = await solved(mine);
    await setDoor(h, eventId, { powDifficulty: 10 });
    expect(await reason(mine, easy)).toBe('below_difficulty');
  });

  it('adapts: a second of heavy arrivals raises the next challenges by one bit at the threshold and one per doubling', async ({
    h,
    tenant,
  }) => {
    const { eventId } = await scheduledEvent(h, tenant.manager, { opensInMs: 0, onsaleInMs: 120_000 });
    await setDoor(h, eventId, { powDifficulty: 4, powAdaptiveAbovePerSecond: 5, powMaxDifficulty: 10 });
    const buyer = await h.buyer('pow-d');
    h.clock.advance(1000 - (h.clock.now().getTime() % 1000)); // the start of a second
    const first = await Promise.all(Array.from({ length: 20 }, () => challenge(h, eventId, buyer)));
    expect(first.every((c) => c.difficulty === 4)).toBe(true);
    h.clock.advance(1000);
    // 20 issued in the previous second against a threshold of 5: +1, and +2 for two doublings.
    expect((await challenge(h, eventId, buyer)).difficulty).toBe(7);
    h.clock.advance(2000);
    expect((await challenge(h, eventId, buyer)).difficulty).toBe(4);
  });

  it('an onsale without a door asks for nothing; the operator route refuses a ceiling below the base, naming it', async ({
    h,
    tenant,
  }) => {
    const { eventId } = await scheduledEvent(h, tenant.manager, { opensInMs: 0, onsaleInMs: 120_000 });
    const buyer = await h.buyer('pow-e');
    expect(await challenge(h, eventId, buyer)).toMatchObject({ required: false, difficulty: 0 });
    expect((await join(h, eventId, buyer)).status).toBe(200);
    const bad = await setDoor(h, eventId, { powDifficulty: 12, powMaxDifficulty: 8 });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.error.details)).toContain('powMaxDifficulty');
    expect((await setDoor(h, eventId, { powDifficulty: 40 })).status).toBe(400);
    // Found by the fuzzer: a threshold past the column's integer range was a 500.
    const huge = await setDoor(h, eventId, { powDifficulty: 0, powAdaptiveAbovePerSecond: 1878306415953 });
    expect(huge.status).toBe(400);
    expect(JSON.stringify(huge.body.error.details)).toContain('powAdaptiveAbovePerSecond');
    const promoter = await h.req('PUT', `/operator/events/${eventId}/door`, {
      token: tenant.manager,
      body: { powDifficulty: 1 },
    });
    expect(promoter.status).toBe(403);
  });
});

async function startOnsale(h: Harness, tenant: TestTenant, eventId: string) {
  h.clock.advance(121_000);
  await runSchedulerTick(h.services);
  const on = await h.req('GET', `/events/${eventId}/onsale`, { token: tenant.viewer });
  expect(on.body.room.releasing).toBe(true);
}

describe('admission bound to a device key', () => {
  it('an onsale that requires binding refuses a join without jkt; the admission token of one that sent it carries cnf.jkt', async ({
    h,
    tenant,
  }) => {
    const { eventId } = await scheduledEvent(h, tenant.manager, {
      opensInMs: 0,
      onsaleInMs: 120_000,
      maxReleaseRate: 4,
    });
    await setDoor(h, eventId, { powDifficulty: 0, requireDeviceBinding: true });
    const buyer = await h.buyer('bound-0');
    const refused = await join(h, eventId, buyer);
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('validation_failed');
    expect(refused.body.error.details.issues[0].path).toBe('jkt');

    const device = await createDeviceKey();
    expect((await join(h, eventId, buyer, { jkt: device.jkt })).status).toBe(200);
    await startOnsale(h, tenant, eventId);
    h.clock.advance(1000);
    expect((await releaseStep(h.services, eventId)).released).toEqual(['bound-0']);
    const me = (await h.req('GET', `/events/${eventId}/queue/me`, { token: buyer })).body;
    expect(me.status).toBe('released');
    const claims = AdmissionClaims.parse(decodeJwt(me.admission.token));
    expect(claims.cnf).toEqual({ jkt: device.jkt });
  });

  it('refuses a jkt that is not a thumbprint, naming it', async ({ h, tenant }) => {
    const { eventId } = await scheduledEvent(h, tenant.manager, { opensInMs: 0, onsaleInMs: 120_000 });
    const r = await join(h, eventId, await h.buyer('bound-1'), { jkt: 'not a thumbprint' });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body.error.details)).toContain('jkt');
  });
});
