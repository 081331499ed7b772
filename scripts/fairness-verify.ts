import { createHash, createHmac, createPublicKey, type JsonWebKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Checks a waiting room's published fairness record (GET /events/{eventId}/queue/fairness) on its own, with
 * nothing of the platform but this file and Node: the seed against its commitment, the admission log's
 * signature against the published JWKS, the early arrivals' order recomputed from the seed and the
 * pseudonyms against the log's positions, and admissions in that order. The scheme: control-plane/README.md,
 * "Verifiable fairness".
 *
 *   pnpm fairness:verify https://tickets.example/events/<eventId>/queue/fairness [--pseudonym <yours>]
 *   pnpm fairness:verify record.json --jwks jwks.json
 *
 * A URL's JWKS is its origin's /.well-known/jwks.json. Exit status 0 when every check passed.
 */

export interface FairnessRecordDoc {
  scheme: string;
  eventId: string;
  commitment: string;
  revealed: boolean;
  seed: string | null;
  log: string | null;
}

export interface LogEntry {
  pseudonym: string;
  position: number;
  admittedAt: string | null;
  skippedAt: string | null;
}

export interface Verdict {
  ok: boolean;
  /** Each failed check, in words; empty when ok. */
  problems: string[];
  /** The signed log's entries in the recomputed order (empty when the record is not revealed or unsigned). */
  entries: LogEntry[];
}

const SCHEME = 'onsale-fairness/1';
const LOG_TYP = 'onsale-fairness-log+json';

export const sha256Hex = (hex: string) => createHash('sha256').update(Buffer.from(hex, 'hex')).digest('hex');

/** The first 52 bits of HMAC-SHA256(seed, pseudonym) as an integer: an early arrival's place (ascending). */
export const shuffleKey = (seed: string, pseudonym: string) =>
  Number.parseInt(
    createHmac('sha256', Buffer.from(seed, 'hex')).update(pseudonym, 'utf8').digest('hex').slice(0, 13),
    16,
  );

const fromB64url = (s: string) => Buffer.from(s, 'base64url');

/** Verifies a compact JWS against a JWKS (RS256, PS256 or ES256); answers its payload, or why not. */
export function verifyJws(
  jws: string,
  jwks: { keys: JsonWebKey[] },
): { payload: unknown; typ: unknown } | { error: string } {
  const parts = jws.split('.');
  if (parts.length !== 3) return { error: 'the log is not a compact JWS' };
  const [h, p, s] = parts as [string, string, string];
  let header: { alg?: string; kid?: string; typ?: string };
  try {
    header = JSON.parse(fromB64url(h).toString('utf8'));
  } catch {
    return { error: "the log's JWS header is not JSON" };
  }
  const jwk = jwks.keys.find((k) => (k as { kid?: string }).kid === header.kid);
  if (!jwk) return { error: `the log is signed with key ${header.kid}, which the JWKS does not publish` };
  const key = createPublicKey({ key: jwk, format: 'jwk' });
  const data = Buffer.from(`${h}.${p}`);
  const sig = fromB64url(s);
  let good: boolean;
  if (header.alg === 'RS256') good = verify('sha256', data, key, sig);
  else if (header.alg === 'PS256')
    good = verify('sha256', data, { key, padding: 6 /* RSA_PKCS1_PSS_PADDING */, saltLength: 32 }, sig);
  else if (header.alg === 'ES256') good = verify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, sig);
  else return { error: `the log's signature algorithm ${header.alg} is not one this tool checks` };
  if (!good) return { error: "the log's signature does not verify: the log was altered or not signed by this key" };
  try {
    return { payload: JSON.parse(fromB64url(p).toString('utf8')), typ: header.typ };
  } catch {
    return { error: "the log's payload is not JSON" };
  }
}

/**
 * The checks a fairness record and a lottery record share: the scheme, the seed revealed and matching the commitment
 * published before, the signed log's signature, type, event, commitment and seed. Problems go to `problems`; the
 * log's payload is returned, or null when nothing further can be checked.
 */
export function checkRevealedLog(
  record: { scheme: string; eventId: string; commitment: string; seed: string | null; log: string | null },
  revealed: boolean,
  jwks: { keys: JsonWebKey[] },
  expect: { scheme: string; typ: string; noun: string; notRevealed: string },
  problems: string[],
): Record<string, unknown> | null {
  if (record.scheme !== expect.scheme)
    problems.push(`unknown scheme ${record.scheme}; this tool checks ${expect.scheme}`);
  if (!/^[0-9a-f]{64}$/.test(record.commitment ?? '')) problems.push('the commitment is not 32 bytes of hex');
  if (!revealed || !record.seed || !record.log) {
    problems.push(expect.notRevealed);
    return null;
  }
  if (sha256Hex(record.seed) !== record.commitment)
    problems.push('the seed does not match the commitment: SHA-256(seed) differs from what was published before');
  const signed = verifyJws(record.log, jwks);
  if ('error' in signed) {
    problems.push(signed.error);
    return null;
  }
  if (signed.typ !== expect.typ) problems.push(`the JWS typ is ${String(signed.typ)}, not ${expect.typ}`);
  const log = signed.payload as { eventId?: string; commitment?: string; seed?: string };
  if (log.eventId !== record.eventId) problems.push(`the signed ${expect.noun} names another event`);
  if (log.commitment !== record.commitment) problems.push(`the signed ${expect.noun} names another commitment`);
  if (log.seed !== record.seed) problems.push(`the signed ${expect.noun} names another seed`);
  return log;
}

/** Every check of a fairness record, given the JWKS to trust. */
export function verifyFairnessRecord(record: FairnessRecordDoc, jwks: { keys: JsonWebKey[] }): Verdict {
  const problems: string[] = [];
  const fail = (): Verdict => ({ ok: false, problems, entries: [] });
  const log = checkRevealedLog(
    record,
    record.revealed,
    jwks,
    {
      scheme: SCHEME,
      typ: LOG_TYP,
      noun: 'log',
      notRevealed: 'the seed is not revealed yet (the room has not opened): only the commitment can be recorded now',
    },
    problems,
  ) as { seed?: string; entries?: LogEntry[] } | null;
  if (!log) return fail();
  if (!Array.isArray(log.entries)) {
    problems.push('the signed log has no entries');
    return fail();
  }
  const seed = log.seed ?? record.seed!;
  const entries = log.entries;
  const positions = entries.map((e) => e.position).sort((a, b) => a - b);
  if (positions.some((p, i) => p !== i + 1)) problems.push('the positions are not 1..n, each once');

  // The order the seed dictates: ascending shuffle key; a tie (two equal 52-bit keys) may stand either way.
  const keyed = entries.map((e) => ({ e, key: shuffleKey(seed, e.pseudonym) }));
  const recomputed = [...keyed].sort((a, b) => a.key - b.key || a.e.position - b.e.position);
  recomputed.forEach(({ e }, i) => {
    if (e.position !== i + 1)
      problems.push(`pseudonym ${e.pseudonym} is logged at position ${e.position}; the seed puts it at ${i + 1}`);
  });

  // Admission in that order: each place taken (admitted or passed over) no earlier than the place before it,
  // and none taken after a place still waiting.
  let lastTaken = Number.NEGATIVE_INFINITY;
  let waitingAt: number | null = null;
  for (const { e } of [...keyed].sort((a, b) => a.e.position - b.e.position)) {
    const at = e.admittedAt ?? e.skippedAt;
    if (at === null) {
      waitingAt ??= e.position;
      continue;
    }
    const ms = Date.parse(at);
    if (waitingAt !== null)
      problems.push(`position ${e.position} was taken while position ${waitingAt}, ahead of it, still waits`);
    if (ms < lastTaken) problems.push(`position ${e.position} was taken before the position ahead of it`);
    lastTaken = Math.max(lastTaken, ms);
  }
  return { ok: problems.length === 0, problems, entries: recomputed.map(({ e }) => e) };
}

/** A published record or key set, from its URL or a saved copy. */
export async function load(source: string): Promise<unknown> {
  if (/^https?:\/\//.test(source)) {
    const res = await fetch(source);
    if (!res.ok) throw new Error(`${source}: HTTP ${res.status}`);
    return res.json();
  }
  return JSON.parse(readFileSync(source, 'utf8'));
}

/** Takes `name <value>` out of argv and answers the value. */
export function takeFlag(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv.splice(i, 2)[1] : undefined;
}

async function main(argv: string[]) {
  const flag = (name: string) => takeFlag(argv, name);
  const jwksSource = flag('--jwks');
  const pseudonym = flag('--pseudonym');
  const source = argv[0];
  if (!source) {
    console.error('usage: fairness-verify <record url or file> [--jwks <url or file>] [--pseudonym <yours>]');
    return 2;
  }
  const jwksFrom = jwksSource ?? (/^https?:\/\//.test(source) ? new URL('/.well-known/jwks.json', source).href : null);
  if (!jwksFrom) {
    console.error('a record read from a file needs --jwks <url or file>');
    return 2;
  }
  const record = (await load(source)) as FairnessRecordDoc;
  const verdict = verifyFairnessRecord(record, (await load(jwksFrom)) as { keys: JsonWebKey[] });
  const mine = pseudonym ? verdict.entries.find((e) => e.pseudonym === pseudonym) : undefined;
  console.log(
    JSON.stringify(
      {
        ok: verdict.ok,
        eventId: record.eventId,
        earlyArrivals: verdict.entries.length,
        admitted: verdict.entries.filter((e) => e.admittedAt).length,
        ...(pseudonym ? { yours: mine ?? 'not among the early arrivals' } : {}),
        problems: verdict.problems,
      },
      null,
      2,
    ),
  );
  return verdict.ok ? 0 : 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1])
  process.exitCode = await main(process.argv.slice(2));
