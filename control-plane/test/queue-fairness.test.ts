import { execFile } from 'node:child_process';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { eq } from 'drizzle-orm';
import { CompactSign, exportJWK, generateKeyPair } from 'jose';
import { describe, expect } from 'vitest';
import { type FairnessRecordDoc, type LogEntry, verifyFairnessRecord } from '../../scripts/fairness-verify';
import { type Harness, scheduledEvent } from '../../test/support/control-plane';
import { controlPlaneTest, type TestTenant } from '../../test/support/fixtures';
import { onsales } from '../src/db/schema';
import { runSchedulerTick } from '../src/onsale/scheduler';
import { releaseStep } from '../src/waiting-room/release';

const it = controlPlaneTest({ cellId: 'cell-fair', env: { WAITING_ROOM_ABANDON_SECONDS: '100' } });

const TOOL = fileURLToPath(new URL('../../scripts/fairness-verify.ts', import.meta.url));
const join = (h: Harness, eventId: string, token: string) => h.req('POST', `/events/${eventId}/queue`, { token });
const me = (h: Harness, eventId: string, token: string) => h.req('GET', `/events/${eventId}/queue/me`, { token });
const fairness = (h: Harness, eventId: string) => h.req('GET', `/events/${eventId}/queue/fairness`);
const jwksOf = async (h: Harness) => (await h.req('GET', '/.well-known/jwks.json')).body;
const secretsOf = async (h: Harness, eventId: string) => {
  const [row] = await h.services.db
    .select({ seed: onsales.fairnessSeed, salt: onsales.fairnessSalt })
    .from(onsales)
    .where(eq(onsales.eventId, eventId));
  return row!;
};
const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const payloadOf = (jws: string) => JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString('utf8'));

/** The published tool run as a buyer would: its own process, the record and the JWKS as files. */
async function runTool(record: unknown, jwks: unknown, ...extra: string[]) {
  const dir = mkdtempSync(joinPath(tmpdir(), 'fairness-'));
  writeFileSync(joinPath(dir, 'record.json'), JSON.stringify(record));
  writeFileSync(joinPath(dir, 'jwks.json'), JSON.stringify(jwks));
  const args = ['--import', 'tsx', TOOL, joinPath(dir, 'record.json'), '--jwks', joinPath(dir, 'jwks.json'), ...extra];
  try {
    const { stdout } = await promisify(execFile)(process.execPath, args, { timeout: 30_000 });
    return { code: 0, out: JSON.parse(stdout) };
  } catch (err) {
    const e = err as { code: number; stdout: string };
    return { code: e.code, out: JSON.parse(e.stdout) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A room with 24 early arrivals and 4 late ones, opened and releasing, the early arrival second in the queue
 * silent since the opening (so passed over): answers the buyers' tokens and pseudonyms, the queue's order as
 * /queue/me reports it once the room opened, the silent one, and who the release steps admitted, in order.
 */
async function releasedRoom(h: Harness, tenant: TestTenant) {
  const { eventId } = await scheduledEvent(h, tenant.manager, {
    opensInMs: 60_000,
    onsaleInMs: 120_000,
    maxReleaseRate: 20,
  });
  const early = await Promise.all(Array.from({ length: 24 }, (_, i) => h.buyer(`fair-early-${i}`)));
  for (const t of early) expect((await join(h, eventId, t)).body).toMatchObject({ roomOpen: false, position: null });
  const before = await fairness(h, eventId);
  h.clock.advance(60_000);
  await runSchedulerTick(h.services); // opens the room: from now on no arrival is early
  const late = await Promise.all(Array.from({ length: 4 }, (_, i) => h.buyer(`fair-late-${i}`)));
  for (const t of late) await join(h, eventId, t);
  const pseudonyms = new Map<string, string>();
  const queueOrder: string[] = [];
  for (const t of early) {
    const s = (await me(h, eventId, t)).body;
    pseudonyms.set(t, s.pseudonym);
    queueOrder[s.position - 1] = s.pseudonym;
  }
  h.clock.advance(61_000);
  expect((await runSchedulerTick(h.services)).started).toBe(1);
  h.clock.advance(49_000);
  const silent = queueOrder[1]!;
  for (const t of [...early, ...late]) if (pseudonyms.get(t) !== silent) await me(h, eventId, t);
  const admitted: string[] = [];
  for (let step = 0; step < 3; step++) {
    h.clock.advance(1000);
    admitted.push(...(await releaseStep(h.services, eventId)).released);
  }
  return { eventId, early, late, before, pseudonyms, queueOrder, silent, admitted };
}

describe('verifiable fairness of the pre-opening shuffle', () => {
  it('publishes the commitment from scheduling on, without the seed, and the seed only once the room opens', async ({
    h,
    tenant,
  }) => {
    const { eventId } = await scheduledEvent(h, tenant.manager, { opensInMs: 60_000, onsaleInMs: 120_000 });
    const { seed } = await secretsOf(h, eventId);
    expect(seed).toMatch(/^[0-9a-f]{64}$/);
    const committed = await fairness(h, eventId);
    expect(committed.status).toBe(200);
    expect(committed.body).toMatchObject({ eventId, revealed: false, seed: null, log: null });
    expect(committed.body.commitment).toBe(createHash('sha256').update(Buffer.from(seed, 'hex')).digest('hex'));
    // Nothing public before the opening carries the seed: not the record, not the onsale's own API.
    expect(JSON.stringify(committed.body)).not.toContain(seed);
    const onsale = await h.req('GET', `/events/${eventId}/onsale`, { token: tenant.viewer });
    expect(JSON.stringify(onsale.body)).not.toContain(seed);

    // A reschedule before the opening keeps the committed seed.
    const again = await h.req('PUT', `/events/${eventId}/onsale`, {
      token: tenant.manager,
      body: {
        roomOpensAt: new Date(h.clock.now().getTime() + 90_000).toISOString(),
        onsaleAt: new Date(h.clock.now().getTime() + 150_000).toISOString(),
        perBuyerLimit: 4,
        maxReleaseRate: 100,
      },
    });
    expect(again.status).toBe(200);
    expect((await fairness(h, eventId)).body.commitment).toBe(committed.body.commitment);
    const t = await h.buyer('fair-commit-1');
    await join(h, eventId, t);
    h.clock.advance(60_000);
    await runSchedulerTick(h.services);
    expect((await fairness(h, eventId)).body.revealed).toBe(false); // still before the rescheduled opening
    h.clock.advance(30_000);
    await runSchedulerTick(h.services);
    const opened = (await fairness(h, eventId)).body;
    expect(opened).toMatchObject({ revealed: true, seed, commitment: committed.body.commitment });
    expect(payloadOf(opened.log).entries).toHaveLength(1);

    expect((await fairness(h, '0b9f6a52-8f5e-4f55-9d4c-1f3c8c1c2b11')).status).toBe(404);
  });

  it("the published tool reproduces a real room's admission order from the published seed and log", async ({
    h,
    tenant,
  }) => {
    const room = await releasedRoom(h, tenant);
    expect(room.before.body.revealed).toBe(false);
    const record = (await fairness(h, room.eventId)).body as FairnessRecordDoc;
    expect(record.commitment).toBe(room.before.body.commitment);
    const jwks = await jwksOf(h);

    const verdict = verifyFairnessRecord(record, jwks);
    expect(verdict.problems).toEqual([]);
    expect(verdict.ok).toBe(true);
    // Exactly the early arrivals, in the order the queue itself gave them; late arrivals are first come, first served.
    const order = verdict.entries.map((e) => e.pseudonym);
    expect(order).toEqual(room.queueOrder);
    expect(new Set(order)).toEqual(new Set(room.pseudonyms.values()));
    // The release steps took the head of that order, in that order, passing over the silent buyer; the log says when.
    expect(room.admitted.length).toBeGreaterThan(3);
    const { salt } = await secretsOf(h, room.eventId);
    const pseudonymOf = (sub: string) => createHmac('sha256', Buffer.from(salt, 'hex')).update(sub).digest('hex');
    const head = order.slice(0, room.admitted.length + 1).filter((p) => p !== room.silent);
    expect(room.admitted.map(pseudonymOf)).toEqual(head);
    expect(verdict.entries.filter((e) => e.admittedAt).map((e) => e.pseudonym)).toEqual(head);
    expect(verdict.entries.filter((e) => e.skippedAt)).toEqual([
      expect.objectContaining({ pseudonym: room.silent, position: 2, admittedAt: null }),
    ]);
    // The order is not arrival order: the arrivals were fair-early-0, 1, 2, ... (1 in 24! to be identical).
    expect(order).not.toEqual(room.early.map((t) => room.pseudonyms.get(t)));

    // The same, by the tool as published, in its own process; a buyer finds their own place.
    const mine = room.pseudonyms.get(room.early[5]!)!;
    const run = await runTool(record, jwks, '--pseudonym', mine);
    expect(run.code).toBe(0);
    expect(run.out).toMatchObject({ ok: true, earlyArrivals: 24, admitted: room.admitted.length, problems: [] });
    expect(run.out.yours.position).toBe(order.indexOf(mine) + 1);
  });

  it('detects a wrong seed, a tampered log, a log signed by another key, and a signed log out of the seed order', async ({
    h,
    tenant,
  }) => {
    const room = await releasedRoom(h, tenant);
    const record = (await fairness(h, room.eventId)).body as FairnessRecordDoc;
    const jwks = await jwksOf(h);
    expect(verifyFairnessRecord(record, jwks).ok).toBe(true);
    const [header, , signature] = record.log!.split('.');
    const signed = payloadOf(record.log!) as { seed: string; entries: LogEntry[] };

    // A seed other than the committed one.
    const otherSeed = randomBytes(32).toString('hex');
    const wrongSeed = verifyFairnessRecord({ ...record, seed: otherSeed }, jwks);
    expect(wrongSeed.ok).toBe(false);
    expect(wrongSeed.problems).toContain(
      'the seed does not match the commitment: SHA-256(seed) differs from what was published before',
    );
    expect((await runTool({ ...record, seed: otherSeed }, jwks)).code).toBe(1);

    // Two early arrivals' places swapped in the log, the signature kept.
    const swapped = signed.entries.map((e) =>
      e.position === 1 ? { ...e, position: 2 } : e.position === 2 ? { ...e, position: 1 } : e,
    );
    const tampered = { ...record, log: `${header}.${b64url({ ...signed, entries: swapped })}.${signature}` };
    const t = verifyFairnessRecord(tampered, jwks);
    expect(t.ok).toBe(false);
    expect(t.problems).toContain("the log's signature does not verify: the log was altered or not signed by this key");
    const tamperedRun = await runTool(tampered, jwks);
    expect(tamperedRun.code).toBe(1);
    expect(tamperedRun.out.ok).toBe(false);

    // The same altered log signed again by a key the platform does not publish.
    const forger = await generateKeyPair('RS256', { extractable: true });
    const forged = await new CompactSign(Buffer.from(JSON.stringify({ ...signed, entries: swapped })))
      .setProtectedHeader({ alg: 'RS256', kid: 'forged', typ: 'onsale-fairness-log+json' })
      .sign(forger.privateKey);
    expect(verifyFairnessRecord({ ...record, log: forged }, jwks).problems).toContain(
      'the log is signed with key forged, which the JWKS does not publish',
    );
    // ...and with a JWKS that does publish the forger's key, the signature checks but the order does not.
    const forgerJwk = { ...(await exportJWK(forger.publicKey)), kid: 'forged', alg: 'RS256' };
    const outOfOrder = verifyFairnessRecord({ ...record, log: forged }, { keys: [...jwks.keys, forgerJwk] });
    expect(outOfOrder.ok).toBe(false);
    const first = signed.entries.find((e) => e.position === 1)!;
    expect(outOfOrder.problems).toContain(
      `pseudonym ${first.pseudonym} is logged at position 2; the seed puts it at 1`,
    );

    // A log whose admission times contradict its order (a later place admitted before an earlier one).
    const [, second] = signed.entries.filter((e) => e.admittedAt).sort((x, y) => x.position - y.position);
    const admittedEarly = signed.entries.map((e) =>
      e === second ? { ...e, admittedAt: new Date(Date.parse(e.admittedAt!) - 60_000).toISOString() } : e,
    );
    const resigned = await new CompactSign(Buffer.from(JSON.stringify({ ...signed, entries: admittedEarly })))
      .setProtectedHeader({ alg: 'RS256', kid: 'forged', typ: 'onsale-fairness-log+json' })
      .sign(forger.privateKey);
    expect(verifyFairnessRecord({ ...record, log: resigned }, { keys: [...jwks.keys, forgerJwk] }).problems).toContain(
      `position ${second!.position} was taken before the position ahead of it`,
    );
  });

  it('tells each buyer their own pseudonym: stable across devices, distinct per buyer and per onsale, not their id', async ({
    h,
    tenant,
  }) => {
    const a = await scheduledEvent(h, tenant.manager, { opensInMs: 60_000, onsaleInMs: 120_000 });
    const b = await scheduledEvent(h, tenant.manager, { opensInMs: 60_000, onsaleInMs: 120_000 });
    const ana = await h.buyer('fair-ana');
    const ben = await h.buyer('fair-ben');
    expect((await me(h, a.eventId, ana)).body).toMatchObject({ status: 'not_in_queue', pseudonym: null });
    const joined = (await join(h, a.eventId, ana)).body;
    await join(h, a.eventId, ben);
    await join(h, b.eventId, ana);
    const { salt } = await secretsOf(h, a.eventId);
    expect(joined.pseudonym).toBe(createHmac('sha256', Buffer.from(salt, 'hex')).update('fair-ana').digest('hex'));
    expect(joined.pseudonym).not.toContain('fair-ana');
    const secondDevice = await h.buyer('fair-ana');
    expect((await me(h, a.eventId, secondDevice)).body.pseudonym).toBe(joined.pseudonym);
    expect((await me(h, a.eventId, ben)).body.pseudonym).not.toBe(joined.pseudonym);
    expect((await me(h, b.eventId, ana)).body.pseudonym).not.toBe(joined.pseudonym);
    // ...and finds it in the published log once the room opens.
    h.clock.advance(60_000);
    await runSchedulerTick(h.services);
    const log = payloadOf((await fairness(h, a.eventId)).body.log) as { entries: LogEntry[] };
    expect(log.entries.map((e) => e.pseudonym)).toContain(joined.pseudonym);
  });
});
