import type { JsonWebKey } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { checkRevealedLog, load, shuffleKey, takeFlag } from './fairness-verify';

/**
 * Checks a presale lottery's published record (GET /events/{eventId}/presale/lottery) with this file, its sibling
 * fairness-verify.ts and Node: the seed against the commitment published when registration opened, the draw's
 * signature against the JWKS, every registration's rank recomputed from the seed and its pseudonym, and each
 * outcome from its rank (invitations first, then the waitlist). The scheme: control-plane/README.md, "Presale
 * registration and lottery".
 *
 *   pnpm lottery:verify https://tickets.example/events/<eventId>/presale/lottery [--pseudonym <yours>]
 *   pnpm lottery:verify record.json --jwks jwks.json
 *
 * Exit status 0 when every check passed.
 */

export interface LotteryRecordDoc {
  scheme: string;
  eventId: string;
  commitment: string;
  drawn: boolean;
  seed: string | null;
  log: string | null;
}

export interface LotteryEntry {
  pseudonym: string;
  rank: number;
  outcome: 'invited' | 'waitlisted' | 'not_selected';
}

const SCHEME = 'onsale-presale-lottery/1';
const LOG_TYP = 'onsale-lottery-log+json';

export function verifyLotteryRecord(record: LotteryRecordDoc, jwks: { keys: JsonWebKey[] }) {
  const problems: string[] = [];
  const fail = () => ({ ok: false, problems, entries: [] as LotteryEntry[] });
  const log = checkRevealedLog(
    record,
    record.drawn,
    jwks,
    {
      scheme: SCHEME,
      typ: LOG_TYP,
      noun: 'draw',
      notRevealed: 'the lottery has not been drawn yet: only the commitment can be recorded now',
    },
    problems,
  ) as { invitations?: number; waitlistSize?: number; entries?: LotteryEntry[] } | null;
  if (!log) return fail();
  if (!Array.isArray(log.entries) || typeof log.invitations !== 'number' || typeof log.waitlistSize !== 'number') {
    problems.push('the signed draw has no entries or sizes');
    return fail();
  }
  const { invitations, waitlistSize } = log as { invitations: number; waitlistSize: number };
  const seed = record.seed!;
  const recomputed = [...log.entries].sort(
    (a, b) =>
      shuffleKey(seed, a.pseudonym) - shuffleKey(seed, b.pseudonym) ||
      (a.pseudonym < b.pseudonym ? -1 : a.pseudonym > b.pseudonym ? 1 : 0),
  );
  recomputed.forEach((e, i) => {
    const rank = i + 1;
    if (e.rank !== rank) problems.push(`pseudonym ${e.pseudonym} is drawn at ${e.rank}; the seed puts it at ${rank}`);
    const outcome =
      rank <= invitations ? 'invited' : rank <= invitations + waitlistSize ? 'waitlisted' : 'not_selected';
    if (e.outcome !== outcome) problems.push(`place ${rank} is logged ${e.outcome}; its rank makes it ${outcome}`);
  });
  return { ok: problems.length === 0, problems, entries: recomputed };
}

async function main(argv: string[]) {
  const flag = (name: string) => takeFlag(argv, name);
  const jwksSource = flag('--jwks');
  const pseudonym = flag('--pseudonym');
  const source = argv[0];
  const jwksFrom =
    jwksSource ?? (source && /^https?:\/\//.test(source) ? new URL('/.well-known/jwks.json', source).href : null);
  if (!source || !jwksFrom) {
    console.error('usage: lottery-verify <record url, or file with --jwks <url or file>> [--pseudonym <yours>]');
    return 2;
  }
  const record = (await load(source)) as LotteryRecordDoc;
  const verdict = verifyLotteryRecord(record, (await load(jwksFrom)) as { keys: JsonWebKey[] });
  const mine = pseudonym ? verdict.entries.find((e) => e.pseudonym === pseudonym) : undefined;
  const result = {
    ok: verdict.ok,
    eventId: record.eventId,
    registrations: verdict.entries.length,
    invited: verdict.entries.filter((e) => e.outcome === 'invited').length,
    ...(pseudonym ? { yours: mine ?? 'not among the registrations' } : {}),
    problems: verdict.problems,
  };
  console.log(JSON.stringify(result, null, 2));
  return verdict.ok ? 0 : 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1])
  process.exitCode = await main(process.argv.slice(2));
