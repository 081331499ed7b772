/**
 * The scripted attack of issue 42 on this machine (127.0.0.1 only; the services must be up): starts a platform of
 * its own (load-tests/local/platform.ts) with the per-IP and per-buyer limits at the platform's defaults and
 * X-Forwarded-For trusted, runs the attack (load-tests/attack/attack.ts) against one onsale with the door's
 * defences on and against another with them off, prints both side by side with each onsale's bot report, writes
 * the JSON to load-tests/reports/, and stops what it started however it ends. Bounded: every client gives up at
 * --max-seconds.
 *
 *   pnpm attack [--buyers 1000] [--bots 1000] [--bot-accounts 50] [--bot-ips 20] [--difficulty 12]
 *               [--release-rate 100] [--arrival-seconds 10] [--max-seconds 150] [--only on|off]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../../scripts/local-platform/process';
import { type LoadPlatform, startLoadPlatform } from '../local/platform';
import { ATTACK_PLATFORM_ENV, type AttackOptions, type AttackResult, runAttack } from './attack';

function table(results: AttackResult[]): string {
  const rows: [string, (r: AttackResult) => string | number][] = [
    ['run seconds', (r) => r.seconds],
    ['buyers admitted', (r) => `${r.buyers.admitted}/${r.buyers.total}`],
    ['buyers holding', (r) => `${r.buyers.held}/${r.buyers.total}`],
    ['buyer join→admission p50 ms', (r) => r.buyers.joinToAdmissionMs.p50],
    ['buyer join→admission p90 ms', (r) => r.buyers.joinToAdmissionMs.p90],
    ['buyer join→hold p50 ms', (r) => r.buyers.joinToHoldMs.p50],
    ['buyer join→hold p90 ms', (r) => r.buyers.joinToHoldMs.p90],
    ['bot holds via shared token', (r) => r.bots.holdsSucceeded.shared_token],
    ['bot holds via shared account', (r) => r.bots.holdsSucceeded.shared_account],
    ['bot holds via own join', (r) => r.bots.holdsSucceeded.own_join],
    ['bot seats held', (r) => r.bots.seatsHeld],
  ];
  const head = ['', ...results.map((r) => (r.defended ? 'defences on' : 'defences off'))];
  const lines = [head, ...rows.map(([name, f]) => [name, ...results.map((r) => String(f(r)))])];
  const widths = head.map((_, c) => Math.max(...lines.map((l) => l[c]!.length)));
  return lines.map((l) => l.map((cell, c) => cell.padEnd(widths[c]!)).join('  ')).join('\n');
}

async function main() {
  const { values } = parseArgs({
    options: {
      buyers: { type: 'string', default: '1000' },
      bots: { type: 'string', default: '1000' },
      'bot-accounts': { type: 'string', default: '50' },
      'bot-ips': { type: 'string', default: '20' },
      difficulty: { type: 'string', default: '12' },
      'release-rate': { type: 'string', default: '100' },
      'arrival-seconds': { type: 'string', default: '10' },
      'poll-ms': { type: 'string', default: '1000' },
      'max-seconds': { type: 'string', default: '150' },
      only: { type: 'string' },
    },
  });
  const base: Omit<AttackOptions, 'defended'> = {
    buyers: Number(values.buyers),
    bots: Number(values.bots),
    botAccounts: Number(values['bot-accounts']),
    botIps: Number(values['bot-ips']),
    powDifficulty: Number(values.difficulty),
    releaseRate: Number(values['release-rate']),
    arrivalSeconds: Number(values['arrival-seconds']),
    pollMs: Number(values['poll-ms']),
    maxSeconds: Number(values['max-seconds']),
  };
  const modes = values.only === 'on' ? [true] : values.only === 'off' ? [false] : [true, false];

  let platform: LoadPlatform | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= platform?.stop() ?? Promise.resolve());
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      console.error(`${signal}: stopping the platform this run started`);
      void stop().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  try {
    console.error('starting a platform of its own (fresh databases, bundles)…');
    platform = await startLoadPlatform({ env: ATTACK_PLATFORM_ENV });
    const results: AttackResult[] = [];
    for (const defended of modes) {
      console.error(`attack, defences ${defended ? 'on' : 'off'}: ${base.buyers} buyers, ${base.bots} bots…`);
      const r = await runAttack(platform, { ...base, defended });
      results.push(r);
      console.log(`\n== defences ${defended ? 'on' : 'off'} (event ${r.eventId})`);
      console.log('buyer refusals:', JSON.stringify(r.buyers.refusals));
      console.log('bots by kind:', JSON.stringify(r.bots.byKind));
      console.log('bot refusals:', JSON.stringify(r.bots.refusals, null, 1));
      console.log('bot report:', JSON.stringify(r.botReport, null, 1));
    }
    console.log(`\n${table(results)}`);
    const dir = resolve(repoRoot, 'load-tests/reports');
    mkdirSync(dir, { recursive: true });
    const file = resolve(dir, `attack-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify({ options: base, results }, null, 2));
    console.log(`\n${file}`);
  } finally {
    await stop();
  }
  process.exit(0);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
