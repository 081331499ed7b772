import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { scheduledEvent } from '../../test/support/control-plane';
import { controlPlaneTest } from '../../test/support/fixtures';
import { onsales } from '../src/db/schema';

// A buyer may make two waiting-room requests before their bucket refuses (the clock stands still between them).
const it = controlPlaneTest({
  cellId: 'cell-bots',
  env: { RATE_LIMIT_BUYER_PER_SECOND: '0.001', RATE_LIMIT_BUYER_BURST: '2' },
});

const MIN = 60_000;

describe('the bot report of an onsale', () => {
  it('counts the joins refused by the rate limits and the presale door, revoked tokens and refused registrations', async ({
    h,
    tenant,
  }) => {
    h.clock.set(new Date());
    const { eventId } = await scheduledEvent(h, tenant.manager, { opensInMs: 12 * MIN, onsaleInMs: 15 * MIN });
    const { eventId: otherEvent } = await scheduledEvent(h, tenant.manager, {
      opensInMs: 12 * MIN,
      onsaleInMs: 15 * MIN,
    });
    const report = async (id = eventId) => {
      const r = await h.req('GET', `/events/${id}/bot-report`, { token: tenant.viewer });
      expect(r.status).toBe(200);
      return r.body;
    };
    const empty = await report();
    expect(empty).toMatchObject({
      challenges: { issued: 0, solved: 0 },
      joinsRefused: { rateLimited: 0, withoutPresaleCode: 0 },
      tokensRevoked: 0,
      registrationsRefused: { duplicate: 0, overIpLimit: 0, overDeviceLimit: 0 },
      lottery: null,
    });
    const [o] = await h.services.db.select().from(onsales).where(eq(onsales.eventId, eventId));
    expect(empty.fairness).toEqual({
      commitment: createHash('sha256').update(Buffer.from(o!.fairnessSeed, 'hex')).digest('hex'),
      revealed: false,
      record: `/events/${eventId}/queue/fairness`,
    });

    // A bot joining in a loop: two joins pass (the burst), the next three are refused.
    const bot = await h.buyer('bot-1');
    const joins = [];
    for (let i = 0; i < 5; i++) joins.push((await h.req('POST', `/events/${eventId}/queue`, { token: bot })).status);
    expect(joins).toEqual([200, 200, 429, 429, 429]);

    // An operator revokes two admissions for this onsale and one for another.
    const revocationKeys: string[] = [];
    for (const [body, n] of [
      [{ sub: 'bot-1', reason: 'shared account', eventId }, 201],
      [{ jti: 'jti-of-a-copied-token', reason: 'copied token', eventId }, 201],
      [{ sub: 'bot-2', reason: 'elsewhere', eventId: otherEvent }, 201],
    ] as const) {
      const r = await h.req('POST', '/operator/admissions/revocations', { token: h.operatorToken, body });
      expect(r.status).toBe(n);
      revocationKeys.push(r.body.key);
    }
    await h.services.redis.del(...revocationKeys);

    // A presale: registrations from one device and one account twice; then joins without codes.
    const at = (ms: number) => new Date(h.clock.now().getTime() + ms).toISOString();
    const opened = await h.req('PUT', `/events/${eventId}/presale`, {
      token: tenant.manager,
      body: {
        registrationOpensAt: at(0),
        registrationClosesAt: at(10 * MIN),
        presaleStartsAt: at(12 * MIN),
        presaleEndsAt: at(40 * MIN),
        invitations: 2,
      },
    });
    expect(opened.status).toBe(200);
    const registerAs = async (sub: string, deviceId: string) =>
      (
        await h.req('POST', `/events/${eventId}/presale/registrations`, {
          token: await h.buyer(sub),
          body: { deviceId },
          headers: { 'x-forwarded-for': `10.2.0.${sub.length}` },
        })
      ).status;
    expect(await registerAs('farm-1', 'farm-device-1')).toBe(201);
    expect(await registerAs('farm-1', 'farm-device-2')).toBe(409); // the same account again
    expect(await registerAs('farm-22', 'farm-device-1')).toBe(201);
    expect(await registerAs('farm-333', 'farm-device-1')).toBe(409); // a third account on the device
    h.clock.advance(12 * MIN);
    for (const sub of ['late-1', 'late-2']) {
      const r = await h.req('POST', `/events/${eventId}/queue`, { token: await h.buyer(sub) });
      expect(r.status).toBe(403);
    }

    const after = await report();
    expect(after).toMatchObject({
      challenges: { issued: 0, solved: 0 },
      joinsRefused: { rateLimited: 3, withoutPresaleCode: 2 },
      tokensRevoked: 2,
      registrationsRefused: { duplicate: 1, overIpLimit: 0, overDeviceLimit: 1 },
      lottery: {
        commitment: opened.body.lotteryCommitment,
        drawn: false,
        record: `/events/${eventId}/presale/lottery`,
      },
    });
    // Counted per onsale: the other event's report has only its own revocation.
    expect(await report(otherEvent)).toMatchObject({ joinsRefused: { rateLimited: 0 }, tokensRevoked: 1 });
    // A promoter of another tenant cannot read it.
    const other = await h.tenant('Other');
    expect((await h.req('GET', `/events/${eventId}/bot-report`, { token: other.viewer })).status).toBe(404);
  });
});
