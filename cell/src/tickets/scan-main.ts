import { resolve } from 'node:path';
import { parseEnv } from '@onsale/contracts';
import { z } from 'zod';
import { placeText } from './pdf';
import { loadState, REFUSALS, ScanSetupError, scanInput, syncScanner } from './scanner';

const USAGE = `usage:
  scan-ticket --sync --url <router or cell base URL> --event <eventId>   download keys and the void list
  scan-ticket [--json] <QR payload | ticket.png | ticket.svg>            check one ticket offline
exit codes: 0 admit, ${Object.entries(REFUSALS)
  .map(([r, c]) => `${c} ${r}`)
  .join(', ')}, 64 usage or not synced`;

/** Where the scanner keeps what it synced; one event per state directory. */
const ScannerConfig = z.object({ SCANNER_STATE_DIR: z.string().min(1).default('.data/scanner') });

async function main(argv: string[]): Promise<number> {
  const config = parseEnv(ScannerConfig);
  // Under `pnpm --filter` the command runs in cell/: paths the operator typed are relative to where they typed them.
  const here = (path: string) => resolve(process.env.INIT_CWD ?? process.cwd(), path);
  const stateDir = here(config.SCANNER_STATE_DIR);
  const flag = (name: string) => {
    const i = argv.indexOf(name);
    return i === -1 ? undefined : argv[i + 1];
  };
  if (argv.includes('--sync')) {
    const baseUrl = flag('--url');
    const eventId = flag('--event');
    if (!baseUrl || !eventId || !z.string().uuid().safeParse(eventId).success || !URL.canParse(baseUrl)) {
      process.stderr.write(`--sync needs --url <base URL> and --event <event uuid>\n${USAGE}\n`);
      return 64;
    }
    const r = await syncScanner({ baseUrl, eventId, stateDir });
    process.stdout.write(
      `synced event ${eventId}: ${r.keys} key(s), ${r.voided} voided ticket(s), list issued ${r.listIssuedAt.toISOString()}\n`,
    );
    return 0;
  }
  const json = argv.includes('--json');
  const input = argv.filter((a) => a !== '--json')[0];
  if (!input || input.startsWith('--')) {
    process.stderr.write(`${USAGE}\n`);
    return 64;
  }
  const result = await scanInput(/\.(png|svg)$/i.test(input) ? here(input) : input, await loadState(stateDir));
  if (json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else if (result.admit)
    process.stdout.write(
      `ADMIT ${result.claims.tid} ${result.claims.seat ? placeText({ kind: 'seat', ...result.claims.seat }) : ''} (void list ${result.voidListAgeSeconds}s old)\n`,
    );
  else process.stdout.write(`REFUSE ${result.reason}: ${result.message}\n`);
  return result.admit ? 0 : REFUSALS[result.reason];
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    const known = err instanceof ScanSetupError || (err as Error).name === 'ConfigError';
    process.stderr.write(`scan-ticket: ${(err as Error).message}\n`);
    process.exit(known ? 64 : 1);
  },
);
