/**
 * The scripted attack of issue 42 against one onsale on a local platform (load-tests/local/platform.ts): real
 * buyers (one account and one address each; they solve the proof of work, bind their device key and hold 1-2
 * seats) and bots that share a few accounts and addresses, copy admitted buyers' tokens to other clients, join
 * without the proof of work or with a challenge already spent. Every client goes through the edge router, with
 * its address in X-Forwarded-For (the router and the control plane trust it in this run). `defended: false` is
 * the same onsale with the door off (no proof of work, no device binding): what the defences buy.
 */

import { createHash, randomUUID } from 'node:crypto';
import { createDeviceKey, type DeviceKey, dpopProof, leadingZeroBits, powInput } from '@onsale/contracts/device-proof';
import { call, demoSeatMap, devToken, untilRouted } from '../../scripts/local-platform/demo';
import { inBatches } from '../lib/batches';
import { keepAlivePool } from '../lib/http';
import { percentile, round } from '../lib/stats';
import type { LoadPlatform } from '../local/platform';

/** The platform's own limits (control-plane/src/config.ts), which the load scenarios lift: the attack meets them. */
export const ATTACK_PLATFORM_ENV = {
  TRUST_PROXY: 'true',
  RATE_LIMIT_IP_PER_SECOND: '50',
  RATE_LIMIT_IP_BURST: '100',
  RATE_LIMIT_BUYER_PER_SECOND: '2',
  RATE_LIMIT_BUYER_BURST: '10',
};

export interface AttackOptions {
  defended: boolean;
  buyers: number;
  bots: number;
  /** The accounts and addresses the bots share. */
  botAccounts: number;
  botIps: number;
  powDifficulty: number;
  /** Admissions per second the room releases. */
  releaseRate: number;
  /** Everyone arrives, evenly spread, within this window. */
  arrivalSeconds: number;
  pollMs: number;
  /** Every client stops by then, admitted or not: the run is bounded. */
  maxSeconds: number;
}

/** What a bot does (the shares of `bots` are fixed: 20% copiers, 10% without a proof, 10% re-spenders, 60% sharers). */
type BotKind = 'token_copier' | 'no_pow' | 'spent_challenge' | 'account_sharer';
const botKind = (i: number, bots: number): BotKind =>
  i < bots * 0.2 ? 'token_copier' : i < bots * 0.3 ? 'no_pow' : i < bots * 0.4 ? 'spent_challenge' : 'account_sharer';

/** How a bot's hold that succeeded got its admission. */
type BotHoldVia = 'shared_token' | 'shared_account' | 'own_join';

export interface AttackResult {
  defended: boolean;
  eventId: string;
  seconds: number;
  buyers: {
    total: number;
    admitted: number;
    held: number;
    joinToAdmissionMs: { p50: number; p90: number };
    joinToHoldMs: { p50: number; p90: number };
    refusals: Record<string, number>;
  };
  bots: {
    total: number;
    byKind: Record<BotKind, number>;
    holdsSucceeded: Record<BotHoldVia, number>;
    seatsHeld: number;
    refusals: Record<string, number>;
  };
  botReport: unknown;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const bump = (counts: Record<string, number>, key: string) => {
  counts[key] = (counts[key] ?? 0) + 1;
};

/** "403 admission_invalid/dpop_key_mismatch": status, error code and, where given, the reason. */
function refusal(status: number, body: string): string {
  try {
    const e = (JSON.parse(body) as { error?: { code?: string; details?: { reason?: string } } }).error;
    return `${status} ${e?.code ?? '?'}${e?.details?.reason ? `/${e.details.reason}` : ''}`;
  } catch {
    return `${status}`;
  }
}

/** The jkt an admission token is bound to, if any (its payload read, not verified: the bot's own view). */
function boundKey(token: string): string | undefined {
  const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { cnf?: { jkt?: string } };
  return payload.cnf?.jkt;
}

/**
 * The proof of work solved with node:crypto, synchronously. Every simulated client shares this one process: solved
 * with the page's WebCrypto helper (one await per hash), 2,000 interleaved solves each took longer than a
 * challenge lives (120 s) on this machine, a cost a real buyer on their own device never pays.
 */
function solve(challenge: string, difficulty: number): number {
  for (let counter = 0; ; counter++)
    if (leadingZeroBits(createHash('sha256').update(powInput(challenge, counter)).digest()) >= difficulty)
      return counter;
}

/** A fresh onsale on the platform's cell, open in `opensInMs`, with the door set as the run asks. */
async function createOnsale(tp: LoadPlatform, o: AttackOptions, seats: number, opensInMs: number) {
  const cp = tp.platform.urls.controlPlane;
  const cellId = tp.platform.cells[0]!.id;
  const event = await call<{ id: string }>(cp, 'POST', '/events', tp.demo.promoter, {
    name: `Attack ${o.defended ? 'defended' : 'undefended'} ${randomUUID().slice(0, 6)}`,
    venue: 'Arena attack',
    startsAt: new Date(Date.now() + 30 * 86_400_000).toISOString(),
    cellId,
  });
  await call(cp, 'PUT', `/events/${event.id}/seat-map`, tp.demo.promoter, demoSeatMap(seats));
  const opensAt = new Date(Date.now() + opensInMs).toISOString();
  await call(cp, 'PUT', `/events/${event.id}/onsale`, tp.demo.promoter, {
    roomOpensAt: opensAt,
    onsaleAt: opensAt,
    perBuyerLimit: 4,
    maxReleaseRate: o.releaseRate,
  });
  if (o.defended)
    await call(cp, 'PUT', `/operator/events/${event.id}/door`, tp.demo.operator, {
      powDifficulty: o.powDifficulty,
      powAdaptiveAbovePerSecond: null,
      powMaxDifficulty: o.powDifficulty,
      requireDeviceBinding: true,
    });
  await untilRouted(tp.platform, tp.demo.promoter, [{ eventId: event.id, cellId, name: '', seats }]);
  return event.id;
}

export async function runAttack(tp: LoadPlatform, o: AttackOptions): Promise<AttackResult> {
  const run = randomUUID().slice(0, 6);
  const seats = o.buyers * 2 + o.bots;
  const identity = tp.platform.urls.identity;
  const router = keepAlivePool(tp.platform.urls.router, 128);
  try {
    // Set up before the clock: accounts' tokens and device keys, as a page holds them before the onsale.
    const buyerBearers = await inBatches(o.buyers, 16, (i) =>
      devToken(identity, { kind: 'buyer', sub: `attack-${run}-buyer-${i}` }),
    );
    const botBearers = await inBatches(o.botAccounts, 16, (i) =>
      devToken(identity, { kind: 'buyer', sub: `attack-${run}-bot-${i}` }),
    );
    const buyerKeys = await inBatches(o.buyers, 64, () => createDeviceKey());
    const botKeys = await inBatches(o.bots, 64, () => createDeviceKey());
    // The door's setting reaches joins within 2 s; the onsale opens after it has.
    const eventId = await createOnsale(tp, o, seats, 2_500);
    const opensAt = Date.now() + 2_500;
    const availability = await router.request(`/events/${eventId}/availability`);
    const seatPool = (JSON.parse(availability.body) as { availableSeatIds: string[] }).availableSeatIds;
    await sleep(Math.max(0, opensAt - Date.now()) + 500);

    const started = Date.now();
    const deadline = started + o.maxSeconds * 1000;
    const path = (p: string) => `/events/${eventId}${p}`;
    const holdsUrl = `${tp.platform.urls.router}${path('/holds')}`;
    const headersFor = (bearer: string, ip: string) => ({
      authorization: `Bearer ${bearer}`,
      'x-forwarded-for': ip,
    });

    /** The room's answer to a join (with the door's asks when defended), or the refusal. */
    async function join(bearer: string, ip: string, key: DeviceKey, pow?: { challenge: string; counter: number }) {
      const body = o.defended ? { jkt: key.jkt, ...(pow ? { pow } : {}) } : {};
      return router.request(path('/queue'), {
        method: 'POST',
        headers: { ...headersFor(bearer, ip), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    }
    async function solvedChallenge(bearer: string, ip: string) {
      const res = await router.request(path('/queue/challenge'), { method: 'POST', headers: headersFor(bearer, ip) });
      if (res.status !== 200) return { refused: refusal(res.status, res.body) };
      const c = JSON.parse(res.body) as { challenge: string; difficulty: number };
      return { pow: { challenge: c.challenge, counter: solve(c.challenge, c.difficulty) } };
    }
    /** Polls until admitted; null when the run ends first or the place is gone. */
    async function admission(bearer: string, ip: string): Promise<string | null> {
      while (Date.now() < deadline) {
        const me = await router.request(path('/queue/me'), { headers: headersFor(bearer, ip) });
        if (me.status === 200) {
          const s = JSON.parse(me.body) as { status: string; admission: { token: string } | null };
          if (s.admission) return s.admission.token;
          if (s.status !== 'waiting') return null;
        }
        await sleep(o.pollMs * (0.75 + Math.random() * 0.5));
      }
      return null;
    }
    async function hold(bearer: string, ip: string, token: string, key: DeviceKey | null, seatIds: string[]) {
      return router.request(path('/holds'), {
        method: 'POST',
        headers: {
          ...headersFor(bearer, ip),
          'x-admission-token': token,
          ...(key ? { dpop: await dpopProof(key, { method: 'POST', url: holdsUrl, accessToken: token }) } : {}),
          'idempotency-key': randomUUID(),
          'content-type': 'application/json',
        },
        body: JSON.stringify({ seatIds }),
      });
    }
    /** Arrival i of n: evenly spread over the window, buyers and bots interleaved. */
    const arrive = (i: number, n: number) => sleep((i / n) * o.arrivalSeconds * 1000 + Math.random() * 50);

    // Real buyers. Each has its own seats (2 each) so that only bots, not other buyers, compete for them.
    const buyerRefusals: Record<string, number> = {};
    const toAdmission: number[] = [];
    const toHold: number[] = [];
    /** Admitted buyers' bearer and admission token, as a bot that stole both (a session cookie and the token) has them. */
    const stolen: { bearer: string; token: string }[] = [];
    const stolenWaiters: (() => void)[] = [];
    const buyer = async (i: number) => {
      await arrive(i, o.buyers);
      const bearer = buyerBearers[i]!;
      const key = buyerKeys[i]!;
      const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
      const t0 = Date.now();
      let pow: { challenge: string; counter: number } | undefined;
      if (o.defended) {
        const c = await solvedChallenge(bearer, ip);
        if (!c.pow) return bump(buyerRefusals, `challenge ${c.refused}`);
        pow = c.pow;
      }
      const joined = await join(bearer, ip, key, pow);
      if (joined.status !== 200) return bump(buyerRefusals, `join ${refusal(joined.status, joined.body)}`);
      const token = await admission(bearer, ip);
      if (!token) return bump(buyerRefusals, 'not admitted in time');
      toAdmission.push(Date.now() - t0);
      stolen.push({ bearer, token });
      for (const wake of stolenWaiters.splice(0)) wake();
      const mine = [seatPool[2 * i]!, seatPool[2 * i + 1]!].slice(0, 1 + (i % 2));
      const res = await hold(bearer, ip, token, o.defended ? key : null, mine);
      if (res.status === 202) toHold.push(Date.now() - t0);
      else bump(buyerRefusals, `hold ${refusal(res.status, res.body)}`);
    };

    // Bots: 2 seats each, picked at random from everything on sale (the buyers' seats too).
    const botRefusals: Record<string, number> = {};
    const holdsSucceeded: Record<BotHoldVia, number> = { shared_token: 0, shared_account: 0, own_join: 0 };
    const byKind = { token_copier: 0, no_pow: 0, spent_challenge: 0, account_sharer: 0 } as Record<BotKind, number>;
    let botSeats = 0;
    /** Per account with unbound tokens: whether a bot already held with the account's one place. */
    const accountHeld = new Set<number>();
    const randomSeats = () => {
      const a = Math.floor(Math.random() * seatPool.length);
      return [seatPool[a]!, seatPool[(a + 1) % seatPool.length]!];
    };
    const botHold = async (
      kind: BotKind,
      via: () => BotHoldVia,
      bearer: string,
      ip: string,
      token: string,
      key: DeviceKey,
    ) => {
      const res = await hold(bearer, ip, token, o.defended ? key : null, randomSeats());
      if (res.status !== 202) return bump(botRefusals, `${kind} hold ${refusal(res.status, res.body)}`);
      holdsSucceeded[via()]++;
      botSeats += 2;
    };
    const bot = async (i: number) => {
      const kind = botKind(i, o.bots);
      byKind[kind]++;
      await arrive(i, o.bots);
      const key = botKeys[i]!;
      const ip = `203.0.113.${i % o.botIps}`;
      if (kind === 'token_copier') {
        // Waits for an admitted buyer's token, copies it to this client (another key) and holds with it.
        const k = i + 1;
        while (stolen.length < k && Date.now() < deadline)
          await new Promise<void>((wake) => {
            stolenWaiters.push(wake);
            setTimeout(wake, 1000);
          });
        const victim = stolen[(k - 1) % Math.max(1, stolen.length)];
        if (!victim) return bump(botRefusals, `${kind} no token to copy in time`);
        return botHold(kind, () => 'shared_token', victim.bearer, ip, victim.token, key);
      }
      const account = i % o.botAccounts;
      const bearer = botBearers[account]!;
      let pow: { challenge: string; counter: number } | undefined;
      if (o.defended && kind !== 'no_pow') {
        const c = await solvedChallenge(bearer, ip);
        if (!c.pow) return bump(botRefusals, `${kind} challenge ${c.refused}`);
        pow = c.pow;
      }
      const joined = await join(bearer, ip, key, pow);
      if (joined.status !== 200) return bump(botRefusals, `${kind} join ${refusal(joined.status, joined.body)}`);
      if (kind === 'spent_challenge') {
        // Joins again with the proof it has just spent, as a bot sharing one solved challenge among its clients would.
        const again = await join(bearer, ip, key, pow);
        bump(botRefusals, `${kind} rejoin ${again.status === 200 ? 'accepted' : refusal(again.status, again.body)}`);
      }
      const token = await admission(bearer, ip);
      if (!token) return bump(botRefusals, `${kind} not admitted in time`);
      const via = (): BotHoldVia => {
        const bound = boundKey(token);
        if (bound) return bound === key.jkt ? 'own_join' : 'shared_account';
        // Unbound: the account's one place; the first bot to hold with it used its own join, the rest share it.
        if (accountHeld.has(account)) return 'shared_account';
        accountHeld.add(account);
        return 'own_join';
      };
      return botHold(kind, via, bearer, ip, token, key);
    };

    await Promise.all([
      ...Array.from({ length: o.buyers }, (_, i) => buyer(i)),
      ...Array.from({ length: o.bots }, (_, i) => bot(i)),
    ]);
    const seconds = round((Date.now() - started) / 1000);

    const report = await fetch(`${tp.platform.urls.controlPlane}${path('/bot-report')}`, {
      headers: { authorization: `Bearer ${tp.demo.promoter}` },
    });
    const botReport = report.ok ? await report.json() : { status: report.status, body: await report.text() };
    return {
      defended: o.defended,
      eventId,
      seconds,
      buyers: {
        total: o.buyers,
        admitted: toAdmission.length,
        held: toHold.length,
        joinToAdmissionMs: { p50: percentile(toAdmission, 50), p90: percentile(toAdmission, 90) },
        joinToHoldMs: { p50: percentile(toHold, 50), p90: percentile(toHold, 90) },
        refusals: buyerRefusals,
      },
      bots: { total: o.bots, byKind, holdsSucceeded, seatsHeld: botSeats, refusals: botRefusals },
      botReport,
    };
  } finally {
    await router.close();
  }
}
