import { createHash, createHmac } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { compactVerify, createLocalJWKSet } from 'jose';
import { describe, expect } from 'vitest';
import { type LotteryRecordDoc, verifyLotteryRecord } from '../../scripts/lottery-verify';
import { consoleSession, type Harness, scheduledEvent } from '../../test/support/control-plane';
import { controlPlaneTest, type TestTenant } from '../../test/support/fixtures';
import { onsales, presales } from '../src/db/schema';
import { presaleTick } from '../src/presale/tick';

const it = controlPlaneTest({ cellId: 'cell-presale' });

const MIN = 60_000;

/**
 * An onsale whose room opens in 12 min and sale starts in 15, and its presale: registration open now for 10 min,
 * the presale itself from 12 min to 40 min, invitations open for 5 min. (The identity tokens live an hour, by the
 * real clock: each test starts the manual clock from real time again.)
 */
async function presaleEvent(h: Harness, tenant: TestTenant, o: { invitations: number; waitlistSize?: number }) {
  h.clock.set(new Date());
  const { eventId } = await scheduledEvent(h, tenant.manager, { opensInMs: 12 * MIN, onsaleInMs: 15 * MIN });
  const at = (ms: number) => new Date(h.clock.now().getTime() + ms).toISOString();
  const opened = await h.req('PUT', `/events/${eventId}/presale`, {
    token: tenant.manager,
    body: {
      registrationOpensAt: at(0),
      registrationClosesAt: at(10 * MIN),
      presaleStartsAt: at(12 * MIN),
      presaleEndsAt: at(40 * MIN),
      invitations: o.invitations,
      waitlistSize: o.waitlistSize ?? 0,
      invitationTtlSeconds: 300,
    },
  });
  expect(opened.status).toBe(200);
  return { eventId, presale: opened.body, start: h.clock.now().getTime() };
}

let ips = 0;
/** A buyer account registered from an IP and a device of its own (unless given). */
async function register(h: Harness, eventId: string, sub: string, o: { ip?: string; device?: string } = {}) {
  const token = await h.buyer(sub);
  ips++;
  const res = await h.req('POST', `/events/${eventId}/presale/registrations`, {
    token,
    body: { deviceId: o.device ?? `device-${sub}` },
    headers: { 'x-forwarded-for': o.ip ?? `10.1.${Math.floor(ips / 250)}.${ips % 250}` },
  });
  return { token, res };
}

const outcomeOf = async (h: Harness, eventId: string, token: string) =>
  (await h.req('GET', `/events/${eventId}/presale/me`, { token })).body;
const joinWith = (h: Harness, eventId: string, token: string, code?: string) =>
  h.req('POST', `/events/${eventId}/queue`, { token, headers: code ? { 'x-presale-code': code } : {} });
const toTime = (h: Harness, start: number, ms: number) => h.clock.set(new Date(start + ms));

describe('presale registration and lottery', () => {
  it('draws exactly the configured number of invitations and waitlist places, verifiably, once registration closes', async ({
    h,
    tenant,
  }) => {
    const { eventId, presale, start } = await presaleEvent(h, tenant, { invitations: 5, waitlistSize: 3 });
    const buyers = new Map<string, string>();
    for (let i = 0; i < 12; i++) {
      const { token, res } = await register(h, eventId, `lot-${i}`);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ registered: true, outcome: 'registered', drawn: false, invitation: null });
      buyers.set(`lot-${i}`, token);
    }
    const before = (await h.req('GET', `/events/${eventId}/presale/lottery`)).body;
    expect(before).toMatchObject({ drawn: false, seed: null, log: null, commitment: presale.lotteryCommitment });

    // Not before the close: neither the button nor the worker.
    const early = await h.req('POST', `/events/${eventId}/presale/draw`, { token: tenant.manager });
    expect(early.status).toBe(409);
    expect(early.body.error.details.reason).toBe('registration_open');
    expect((await presaleTick(h.services)).drawn).toBe(0);

    toTime(h, start, 10 * MIN);
    const late = await register(h, eventId, 'lot-late');
    expect(late.res.status).toBe(409);
    expect(late.res.body.error.details.reason).toBe('registration_closed');
    expect((await presaleTick(h.services)).drawn).toBe(1);
    const again = await h.req('POST', `/events/${eventId}/presale/draw`, { token: tenant.manager });
    expect(again.status).toBe(409);
    expect(again.body.error.details.reason).toBe('already_drawn');

    const outcomes = new Map<
      string,
      { outcome: string; drawRank: number; invitation: { accessCode: string } | null }
    >();
    for (const [sub, token] of buyers) outcomes.set(sub, await outcomeOf(h, eventId, token));
    const all = [...outcomes.values()];
    expect(all.filter((o) => o.outcome === 'invited')).toHaveLength(5);
    expect(all.filter((o) => o.outcome === 'waitlisted')).toHaveLength(3);
    expect(all.filter((o) => o.outcome === 'not_selected')).toHaveLength(4);
    expect(all.map((o) => o.drawRank).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    for (const o of all) {
      expect(Boolean(o.invitation)).toBe(o.outcome === 'invited');
      expect(o.outcome).toBe(o.drawRank <= 5 ? 'invited' : o.drawRank <= 8 ? 'waitlisted' : 'not_selected');
    }
    const codes = all.flatMap((o) => (o.invitation ? [o.invitation.accessCode] : []));
    expect(new Set(codes).size).toBe(5);

    const view = (await h.req('GET', `/events/${eventId}/presale`, { token: tenant.viewer })).body;
    expect(view.counts).toMatchObject({ registrations: 12, invited: 5, waitlisted: 3, notSelected: 4 });
    expect(view.conversion).toMatchObject({ offered: 5, open: 5, used: 0 });

    // The record: the seed matches the commitment published at the opening, the log is signed with the admission
    // key, and the order is HMAC-SHA256(seed, pseudonym) recomputed here, the pseudonyms those the buyers are told.
    const record = (await h.req('GET', `/events/${eventId}/presale/lottery`)).body;
    expect(record.drawn).toBe(true);
    expect(createHash('sha256').update(Buffer.from(record.seed, 'hex')).digest('hex')).toBe(presale.lotteryCommitment);
    const jwks = createLocalJWKSet((await h.req('GET', '/.well-known/jwks.json')).body);
    const { payload, protectedHeader } = await compactVerify(record.log, jwks);
    expect(protectedHeader.typ).toBe('onsale-lottery-log+json');
    const log = JSON.parse(new TextDecoder().decode(payload)) as {
      seed: string;
      entries: { pseudonym: string; rank: number; outcome: string }[];
    };
    expect(log.seed).toBe(record.seed);
    const key = (p: string) =>
      Number.parseInt(createHmac('sha256', Buffer.from(record.seed, 'hex')).update(p).digest('hex').slice(0, 13), 16);
    const recomputed = log.entries
      .map((e) => e.pseudonym)
      .sort((a, b) => key(a) - key(b) || (a < b ? -1 : 1))
      .map((p, i) => ({ p, rank: i + 1 }));
    expect(log.entries.map((e) => ({ p: e.pseudonym, rank: e.rank }))).toEqual(recomputed);
    for (const [sub, token] of buyers) {
      const mine = (await outcomeOf(h, eventId, token)) as { pseudonym: string; drawRank: number; outcome: string };
      expect(log.entries.find((e) => e.pseudonym === mine.pseudonym)).toEqual({
        pseudonym: mine.pseudonym,
        rank: mine.drawRank,
        outcome: outcomes.get(sub)!.outcome,
      });
    }
    // The published tool agrees, and catches a record whose seed is not the committed one or whose draw was altered.
    const rawJwks = (await h.req('GET', '/.well-known/jwks.json')).body;
    expect(verifyLotteryRecord(record as LotteryRecordDoc, rawJwks)).toMatchObject({ ok: true, problems: [] });
    const otherSeed = 'ab'.repeat(32);
    expect(verifyLotteryRecord({ ...record, seed: otherSeed }, rawJwks).problems).toContain(
      'the seed does not match the commitment: SHA-256(seed) differs from what was published before',
    );
    const [head, , sig] = (record.log as string).split('.');
    const swapped = log.entries.map((e) => (e.rank === 1 ? { ...e, rank: 6 } : e.rank === 6 ? { ...e, rank: 1 } : e));
    const altered = Buffer.from(JSON.stringify({ ...log, entries: swapped })).toString('base64url');
    expect(verifyLotteryRecord({ ...record, log: `${head}.${altered}.${sig}` }, rawJwks).ok).toBe(false);
    // The seed was committed when registration opened, before anyone registered, and never changed.
    const [row] = await h.services.db.select().from(presales).where(eq(presales.eventId, eventId));
    expect(row!.lotterySeed).toBe(record.seed);
  });

  it('an access code lets only its own account into the waiting room, and only within its window', async ({
    h,
    tenant,
  }) => {
    const { eventId, start } = await presaleEvent(h, tenant, { invitations: 2 });
    const registered = [];
    for (const sub of ['code-a', 'code-b', 'code-c']) registered.push(await register(h, eventId, sub));
    toTime(h, start, 10 * MIN);
    await presaleTick(h.services);
    // Two invited (Ana and Ben, in the draw's order), one not selected (Cleo).
    const drawn = [];
    for (const r of registered) drawn.push({ token: r.token, ...(await outcomeOf(h, eventId, r.token)) });
    drawn.sort((a, b) => a.drawRank - b.drawRank);
    const [ana, ben, cleo] = drawn as [(typeof drawn)[0], (typeof drawn)[0], (typeof drawn)[0]];
    expect([ana.outcome, ben.outcome, cleo.outcome]).toEqual(['invited', 'invited', 'not_selected']);
    const anaCode = ana.invitation.accessCode as string;
    const benCode = ben.invitation.accessCode as string;

    // Before the presale starts, nobody queues, code or not.
    const tooEarly = await joinWith(h, eventId, ana.token, anaCode);
    expect(tooEarly.status).toBe(403);
    expect(tooEarly.body.error.details.reason).toBe('presale_not_started');

    toTime(h, start, 13 * MIN);
    const none = await joinWith(h, eventId, cleo.token);
    expect(none.status).toBe(403);
    expect(none.body.error.details.reason).toBe('presale_access_code_required');
    // Ana's code in Cleo's hands (or Ben's) is refused: a code is bound to its account.
    for (const t of [cleo.token, ben.token]) {
      const stolen = await joinWith(h, eventId, t, anaCode);
      expect(stolen.status).toBe(403);
      expect(stolen.body.error.details.reason).toBe('presale_access_code_invalid');
    }
    const ok = await joinWith(h, eventId, ana.token, anaCode.toLowerCase());
    expect(ok.status).toBe(200);
    expect(ok.body.joined).toBe(true);
    expect((await outcomeOf(h, eventId, ana.token)).invitation.status).toBe('used');
    // A used code keeps working for its account (a refresh) after the invitation's own window.
    toTime(h, start, 18 * MIN);
    expect((await joinWith(h, eventId, ana.token, anaCode)).status).toBe(200);
    // Ben let his invitation's 5 minutes pass (the presale started at 12 min): refused before the worker lapses it.
    const lapsed = await joinWith(h, eventId, ben.token, benCode);
    expect(lapsed.status).toBe(403);
    expect(lapsed.body.error.details.reason).toBe('presale_access_code_invalid');

    // After the presale, the general sale: anybody joins without a code (the gate keeps a window for 5 s).
    toTime(h, start, 40 * MIN);
    const general = await joinWith(h, eventId, cleo.token);
    expect(general.status).toBe(200);
    expect(general.body.joined).toBe(true);

    const view = (await h.req('GET', `/events/${eventId}/presale`, { token: tenant.viewer })).body;
    expect(view.conversion).toMatchObject({ offered: 2, used: 1 });
  });

  it('the waitlist moves, in the draw order, as invitations are declined or lapse', async ({ h, tenant }) => {
    const { eventId, start } = await presaleEvent(h, tenant, { invitations: 2, waitlistSize: 2 });
    const tokens: string[] = [];
    for (let i = 0; i < 5; i++) tokens.push((await register(h, eventId, `wait-${i}`)).token);
    toTime(h, start, 10 * MIN);
    await presaleTick(h.services);
    const byRank = [];
    for (const t of tokens) byRank.push({ t, ...(await outcomeOf(h, eventId, t)) });
    byRank.sort((a, b) => a.drawRank - b.drawRank);
    const [first, second, third, fourth, fifth] = byRank;
    expect([first, second, third, fourth, fifth].map((b) => b!.outcome)).toEqual([
      'invited',
      'invited',
      'waitlisted',
      'waitlisted',
      'not_selected',
    ]);
    expect([third!.waitlistAhead, fourth!.waitlistAhead]).toEqual([0, 1]);

    toTime(h, start, 13 * MIN);
    expect((await joinWith(h, eventId, first!.t, first!.invitation.accessCode)).status).toBe(200);
    // The second declines: the first on the waitlist is invited at once, with a window of its own.
    const declined = await h.req('POST', `/events/${eventId}/presale/me/decline`, { token: second!.t });
    expect(declined.status).toBe(200);
    expect(declined.body.invitation.status).toBe('declined');
    const thirdNow = await outcomeOf(h, eventId, third!.t);
    expect(thirdNow.outcome).toBe('invited');
    expect(thirdNow.invitation).toMatchObject({
      status: 'offered',
      expiresAt: new Date(start + 18 * MIN).toISOString(),
    });
    expect((await outcomeOf(h, eventId, fourth!.t)).waitlistAhead).toBe(0);
    expect((await joinWith(h, eventId, second!.t, second!.invitation.accessCode)).status).toBe(403);

    // The third lets theirs lapse: the worker's step passes the place to the fourth.
    toTime(h, start, 18 * MIN);
    expect((await joinWith(h, eventId, third!.t, thirdNow.invitation.accessCode)).status).toBe(403);
    // (The step serves every presale of the file's database; this one's share is checked by its state.)
    expect((await presaleTick(h.services)).lapsed).toBeGreaterThanOrEqual(1);
    expect((await outcomeOf(h, eventId, third!.t)).invitation.status).toBe('lapsed');
    const fourthNow = await outcomeOf(h, eventId, fourth!.t);
    expect(fourthNow.outcome).toBe('invited');
    expect((await joinWith(h, eventId, fourth!.t, fourthNow.invitation.accessCode)).status).toBe(200);

    // A used invitation cannot be declined; the waitlist is exhausted, so the not-selected buyer stays so.
    await h
      .req('POST', `/events/${eventId}/presale/me/decline`, { token: fourth!.t })
      .then((r) => expect(r.status).toBe(404));
    await presaleTick(h.services);
    expect((await outcomeOf(h, eventId, fifth!.t)).outcome).toBe('not_selected');
    const view = (await h.req('GET', `/events/${eventId}/presale`, { token: tenant.viewer })).body;
    expect(view.conversion).toMatchObject({ offered: 4, used: 2, declined: 1, lapsed: 1, open: 0 });
    expect(view.invitations.filter((i: { fromWaitlistRank: number | null }) => i.fromWaitlistRank)).toHaveLength(2);
  });

  it('refuses a second registration of an account and accounts over the per-device and per-IP limits, and shows them', async ({
    h,
    tenant,
  }) => {
    const { eventId } = await presaleEvent(h, tenant, { invitations: 3 });
    const first = await register(h, eventId, 'dup-ana');
    expect(first.res.status).toBe(201);
    const dup = await h.req('POST', `/events/${eventId}/presale/registrations`, {
      token: await h.buyer('dup-ana'),
      body: { deviceId: 'another-device-1' },
      headers: { 'x-forwarded-for': '10.9.9.9' },
    });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toMatchObject({
      code: 'conflict',
      message: 'this account is already registered for the presale',
      details: { reason: 'already_registered' },
    });

    // The device limit is 2 accounts, the IP limit 4 (the defaults).
    for (const sub of ['dev-1', 'dev-2'])
      expect((await register(h, eventId, sub, { device: 'shared-phone-1' })).res.status).toBe(201);
    const third = await register(h, eventId, 'dev-3', { device: 'shared-phone-1' });
    expect(third.res.status).toBe(409);
    expect(third.res.body.error.details).toEqual({ reason: 'accounts_per_device_exceeded', limit: 2 });
    for (const sub of ['ip-1', 'ip-2', 'ip-3', 'ip-4'])
      expect((await register(h, eventId, sub, { ip: '192.0.2.7' })).res.status).toBe(201);
    const fifth = await register(h, eventId, 'ip-5', { ip: '192.0.2.7' });
    expect(fifth.res.status).toBe(409);
    expect(fifth.res.body.error.details).toEqual({ reason: 'accounts_per_ip_exceeded', limit: 4 });
    // Ten accounts racing from one new IP: the conditional UPDATE lets exactly four through.
    const racing = await Promise.all(
      Array.from({ length: 10 }, (_, i) => register(h, eventId, `race-${i}`, { ip: '203.0.113.99' })),
    );
    expect(racing.map((r) => r.res.status).sort()).toEqual([...Array(4).fill(201), ...Array(6).fill(409)]);
    // A refused account can still register from elsewhere: the refusal wrote nothing.
    expect((await register(h, eventId, 'dev-3')).res.status).toBe(201);

    const bad = await h.req('POST', `/events/${eventId}/presale/registrations`, {
      token: await h.buyer('bad-device'),
      body: { deviceId: 'x' },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.error.details)).toContain('deviceId');

    const view = (await h.req('GET', `/events/${eventId}/presale`, { token: tenant.viewer })).body;
    expect(view.counts).toMatchObject({
      registrations: 12,
      refusedDuplicate: 1,
      refusedOverDeviceLimit: 1,
      refusedOverIpLimit: 7,
    });
    expect(view.limits).toEqual({ accountsPerIp: 4, accountsPerDevice: 2 });
    expect(view.sources).toEqual(
      expect.arrayContaining([
        { kind: 'ip', value: '192.0.2.7', accounts: 4, refused: 1 },
        { kind: 'device', value: 'shared-phone-1', accounts: 2, refused: 1 },
        { kind: 'ip', value: '203.0.113.99', accounts: 4, refused: 6 },
      ]),
    );
    const ip1 = view.registrations.find((r: { buyer: string }) => r.buyer === 'ip-1');
    expect(ip1).toMatchObject({ ip: '192.0.2.7', accountsFromIp: 4, accountsFromDevice: 1 });

    // Another tenant's promoter sees nothing of it; a viewer cannot open or draw.
    const other = await h.tenant('Other');
    expect((await h.req('GET', `/events/${eventId}/presale`, { token: other.manager })).status).toBe(404);
    expect((await h.req('POST', `/events/${eventId}/presale/draw`, { token: tenant.viewer })).status).toBe(403);
  });

  it('refuses a presale before the onsale is scheduled and windows out of order, naming the field', async ({
    h,
    tenant,
  }) => {
    // An event without a presale refuses a buyer's presale calls for its state (409), an unknown event is a 404.
    const { eventId: plain } = await scheduledEvent(h, tenant.manager, { opensInMs: 12 * MIN, onsaleInMs: 15 * MIN });
    const buyer = await h.buyer('no-presale');
    const none = await h.req('GET', `/events/${plain}/presale/me`, { token: buyer });
    expect(none.status).toBe(409);
    expect(none.body.error.details.reason).toBe('no_presale');
    const unknown = await h.req('GET', `/events/00000000-0000-4000-8000-000000000000/presale/me`, { token: buyer });
    expect(unknown.status).toBe(404);
    const { eventId, start } = await presaleEvent(h, tenant, { invitations: 1 });
    const at = (ms: number) => new Date(start + ms).toISOString();
    // Registration closing after the presale starts, and a presale over before the onsale (at 15 min) starts.
    const wrong = await h.req('PUT', `/events/${eventId}/presale`, {
      token: tenant.manager,
      body: {
        registrationOpensAt: at(0),
        registrationClosesAt: at(13 * MIN),
        presaleStartsAt: at(12 * MIN),
        presaleEndsAt: at(14 * MIN),
        invitations: 1,
      },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details.issues.map((i: { path: string }) => i.path).sort()).toEqual([
      'presaleEndsAt',
      'presaleStartsAt',
    ]);
    const ev = await h.req('POST', '/events', {
      token: tenant.manager,
      body: { name: 'Draft', venue: 'Hall', startsAt: at(30 * 86_400_000) },
    });
    const draft = await h.req('PUT', `/events/${ev.body.id}/presale`, {
      token: tenant.manager,
      body: {
        registrationOpensAt: at(0),
        registrationClosesAt: at(10 * MIN),
        presaleStartsAt: at(12 * MIN),
        presaleEndsAt: at(40 * MIN),
        invitations: 1,
      },
    });
    expect(draft.status).toBe(409);
    expect(draft.body.error.details.reason).toBe('onsale_not_scheduled');
    // The onsale's own salt names buyers in both the queue's and the lottery's logs.
    const [o] = await h.services.db.select().from(onsales).where(eq(onsales.eventId, eventId));
    expect(o!.fairnessSalt).toMatch(/^[0-9a-f]{64}$/);
  });

  it('the console shows the registrations with accounts per IP and device, draws on the button, and the bot report', async ({
    h,
    tenant,
  }) => {
    const { eventId, start } = await presaleEvent(h, tenant, { invitations: 1, waitlistSize: 1 });
    const con = await consoleSession(h, tenant);
    // An event without a presale yet shows the page with its form, not an error.
    const { eventId: plain } = await scheduledEvent(h, tenant.manager, { opensInMs: 12 * MIN, onsaleInMs: 15 * MIN });
    expect((await con.get(`/console/events/${plain}/presale`)).status).toBe(200);
    for (const sub of ['con-1', 'con-2']) await register(h, eventId, sub, { ip: '198.51.100.4' });
    await register(h, eventId, 'con-1', { ip: '198.51.100.4' });
    const before = await con.get(`/console/events/${eventId}/presale`);
    expect(before.status).toBe(200);
    expect(before.text).toContain('data-testid="presale-registrations"');
    expect(before.text).toMatch(/<code>198\.51\.100\.4<\/code><\/td><td class="num">2<\/td>/);
    expect(before.text).toMatch(/Refused: account already registered<\/th><td class="num">1</);

    // The form names a bad field; the button draws only after the close.
    const bad = await con.post(`/console/events/${eventId}/presale`, { invitations: '0' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('data-field="invitations"');
    expect((await con.post(`/console/events/${eventId}/presale/draw`)).status).toBe(409);
    toTime(h, start, 10 * MIN);
    const drawn = await con.post(`/console/events/${eventId}/presale/draw`);
    expect(drawn).toMatchObject({ status: 303, location: `/console/events/${eventId}/presale?notice=drawn` });
    const after = await con.get(`/console/events/${eventId}/presale?notice=drawn`);
    expect(after.text).toContain('Lottery drawn');
    expect(after.text).toContain('data-testid="presale-invitations"');
    expect(after.text).not.toContain('data-testid="presale-draw"');

    const report = await con.get(`/console/events/${eventId}/bot-report`);
    expect(report.status).toBe(200);
    expect(report.text).toContain('<td class="num" data-testid="bot-registrations-duplicate">1</td>');
    expect(report.text).toContain('<td class="num" data-testid="bot-challenges-issued">0</td>');
  });
});
