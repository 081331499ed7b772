import { configOrExit } from '@onsale/contracts';
import { ConfigSchema } from '../config';
import { closeServices, connectServices, createServices } from '../context';
import { createEvacuationCellClient } from './cell-calls';
import { abortMove, type MoverDeps, moveStatus, planMove, runMove } from './move';

const USAGE = `usage:
  evacuate plan   --event <eventId> --to <cellId> [--drain-seconds 5] [--dry-run]
  evacuate run    --event <eventId> --to <cellId> [--drain-seconds 5] [--settle-wait-seconds 900]
  evacuate resume --move <moveId> [--settle-wait-seconds 900]
  evacuate status --event <eventId>
  evacuate abort  --move <moveId>`;

function args(argv: string[]) {
  const [cmd, ...rest] = argv;
  const o: Record<string, string | true> = {};
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const next = rest[i + 1];
    if (next === undefined || next.startsWith('--')) o[a.slice(2)] = true;
    else {
      o[a.slice(2)] = next;
      i++;
    }
  }
  return { cmd, o };
}

const need = (o: Record<string, string | true>, k: string) => {
  const v = o[k];
  if (typeof v !== 'string') throw new Error(`--${k} is required\n${USAGE}`);
  return v;
};

const config = configOrExit('evacuate', ConfigSchema);
const services = createServices(config);
await connectServices(services);
const deps: MoverDeps = {
  db: services.db,
  redis: services.redis,
  prefix: services.prefix,
  log: services.log,
  clock: services.clock,
  cells: services.cells,
  evac: createEvacuationCellClient({ token: config.CELL_INTERNAL_TOKEN, timeoutMs: config.CELL_REQUEST_TIMEOUT_MS }),
  claimWindowSeconds: config.ADMISSION_CLAIM_WINDOW_SECONDS,
  onStep: (m) => process.stdout.write(`step ${m.step} (move ${m.id})\n`),
};
let code = 0;
try {
  const { cmd, o } = args(process.argv.slice(2));
  const settleWaitMs = Number(o['settle-wait-seconds'] ?? 900) * 1000;
  const drainSeconds = Number(o['drain-seconds'] ?? 5);
  switch (cmd) {
    case 'plan':
    case 'run': {
      if (o['dry-run']) {
        process.stdout.write(
          `would move ${need(o, 'event')} to ${need(o, 'to')}: fence, drain (≤ ${drainSeconds} s), copy, flip, resume, settle\n`,
        );
        break;
      }
      const m = await planMove(deps, { eventId: need(o, 'event'), toCell: need(o, 'to'), drainSeconds });
      process.stdout.write(`${JSON.stringify({ moveId: m.id, step: m.step, from: m.fromCell, to: m.toCell })}\n`);
      if (cmd === 'run') process.stdout.write(`${JSON.stringify(await runMove(deps, m.id, { settleWaitMs }))}\n`);
      break;
    }
    case 'resume':
      process.stdout.write(`${JSON.stringify(await runMove(deps, need(o, 'move'), { settleWaitMs }))}\n`);
      break;
    case 'status':
      process.stdout.write(`${JSON.stringify(await moveStatus(services.db, need(o, 'event')), null, 2)}\n`);
      break;
    case 'abort':
      process.stdout.write(`${JSON.stringify(await abortMove(deps, need(o, 'move')))}\n`);
      break;
    default:
      throw new Error(USAGE);
  }
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  code = 1;
} finally {
  await closeServices(services);
}
process.exit(code);
