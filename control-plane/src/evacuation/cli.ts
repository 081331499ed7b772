import { configOrExit, DomainError } from '@onsale/contracts';
import { listCells, updateCell } from '../cells/cells';
import { ConfigSchema } from '../config';
import { closeServices, connectServices, createServices } from '../context';
import type { EventMove } from '../db/schema';
import { abortMove, listMoves, type MoveProgress, type MoverDeps, runMoves, startEvacuation } from './move';
import { moverDeps } from './operator';
import { type EvacuationPlan, planEvacuation, refuse } from './plan';

const USAGE = `usage:
  evacuate plan     (--event <eventId> | --cell <cellId>) [--to <cellId>[,<cellId>...]] [--drain-seconds 5]
  evacuate run      (--event <eventId> | --cell <cellId>) [--to ...] [--drain-seconds 5] [--settle-wait-seconds 900] [--dry-run]
                    [--confirm-source-dead <source cellId>]   (the source is dead: runbooks/cell-dead-source.md)
  evacuate resume   (--move <moveId> | --event <eventId> | --cell <cellId>) [--settle-wait-seconds 900]
  evacuate status   (--move <moveId> | --event <eventId> | --cell <cellId>) [--json]
  evacuate abort    (--move <moveId> | --event <eventId>)
  evacuate reinstate --cell <cellId>        (a cell back into service: ready, nothing moving, then active)`;

type Opts = Record<string, string | true>;

function args(argv: string[]) {
  const [cmd, ...rest] = argv;
  const o: Opts = {};
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}\n${USAGE}`);
    const next = rest[i + 1];
    if (next === undefined || next.startsWith('--')) o[a.slice(2)] = true;
    else {
      o[a.slice(2)] = next;
      i++;
    }
  }
  return { cmd, o };
}

const str = (o: Opts, k: string) => (typeof o[k] === 'string' ? (o[k] as string) : undefined);
const num = (o: Opts, k: string, dflt: number) => {
  const v = o[k];
  if (v === undefined) return dflt;
  const n = Number(v);
  if (typeof v !== 'string' || !Number.isFinite(n) || n < 0) throw new Error(`--${k} must be a number of seconds`);
  return n;
};

const out = (s: string) => process.stdout.write(`${s}\n`);

function printPlan(plan: EvacuationPlan) {
  out(
    `plan: evacuate ${plan.moves.length} event(s) from ${plan.source}${
      plan.sourceDead ? ' (DEAD: confirmed by the operator)' : ` (drain ≤ ${plan.drainSeconds} s each)`
    }`,
  );
  for (const m of plan.moves)
    out(
      `  ${m.eventId}  ${m.name}  ${m.fromCell} → ${m.toCell}${m.openMoveId ? `  (resumes move ${m.openMoveId})` : ''}`,
    );
  for (const n of plan.notMoved) out(`  stays: ${n.eventId} (${n.status}): ${n.why}`);
  for (const t of plan.targets)
    out(`  target ${t.cellId}: ${t.eventsBefore} → ${t.eventsAfter} events of capacity ${t.capacity}`);
  out('  steps per event:');
  for (const s of plan.steps) out(`    ${s}`);
}

/** One line per move, redrawn in place on a terminal, otherwise printed at most once a second per move. */
function progressPrinter() {
  const last = new Map<string, number>();
  const tty = process.stdout.isTTY;
  return (p: MoveProgress) => {
    const now = Date.now();
    if (!tty && now - (last.get(p.moveId) ?? 0) < 1000) return;
    last.set(p.moveId, now);
    const frac = Math.min(1, p.elapsedMs / Math.max(1, p.limitMs));
    const bar = `${'#'.repeat(Math.round(frac * 20))}${'.'.repeat(20 - Math.round(frac * 20))}`;
    const line = `[${p.eventId.slice(0, 8)}] ${p.step.padEnd(8)} [${bar}] ${(p.elapsedMs / 1000).toFixed(1)}/${(
      p.limitMs / 1000
    ).toFixed(
      0,
    )} s  holds ${p.activeHolds}  orders ${p.openOrders}${p.blocked === undefined ? '' : `  blocked ${p.blocked}`}`;
    process.stdout.write(tty ? `\r${line}` : `${line}\n`);
  };
}

const summary = (m: EventMove) =>
  `${m.id}  event ${m.eventId}  ${m.fromCell} → ${m.toCell}  step ${m.step}${m.lastError ? `  last error: ${m.lastError}` : ''}`;

const config = configOrExit('evacuate', ConfigSchema);
const services = createServices(config);
await connectServices(services);
const deps: MoverDeps = {
  ...moverDeps(services),
  onStep: (m) => out(`step ${m.step}  event ${m.eventId}  (move ${m.id})`),
  onProgress: progressPrinter(),
};

async function selected(o: Opts, openOnly: boolean): Promise<EventMove[]> {
  const by = { moveId: str(o, 'move'), eventId: str(o, 'event'), cellId: str(o, 'cell') };
  if (!by.moveId && !by.eventId && !by.cellId) throw new Error(`name --move, --event or --cell\n${USAGE}`);
  return listMoves(services.db, by, { openOnly });
}

/**
 * The emptied cell stays active: buyers still read the orders and tickets they bought there (the
 * router serves only active cells), and Stripe's webhooks for them still land. The operator decides
 * what comes next (runbooks/evacuate-a-cell.md).
 */
const cellEmptied = (cellId: string) =>
  out(`cell ${cellId} holds no on-sale event now; it stays active for its orders' reads and webhooks`);

let code = 0;
try {
  const { cmd, o } = args(process.argv.slice(2));
  const settleWaitMs = num(o, 'settle-wait-seconds', 900) * 1000;
  const planInput = () => ({
    eventId: str(o, 'event'),
    cellId: str(o, 'cell'),
    to: str(o, 'to')?.split(',').filter(Boolean),
    drainSeconds: num(o, 'drain-seconds', 5),
    confirmSourceDead: o['confirm-source-dead'] === true ? '' : str(o, 'confirm-source-dead'),
  });
  switch (cmd) {
    case 'plan':
      printPlan(await planEvacuation(deps, planInput()));
      break;
    case 'run': {
      const plan = await planEvacuation(deps, planInput());
      printPlan(plan);
      if (o['dry-run']) {
        out('dry run: nothing changed');
        break;
      }
      const moves = await startEvacuation(deps, plan);
      const done = await runMoves(
        deps,
        moves.map((m) => m.id),
        { settleWaitMs },
      );
      for (const m of done) out(summary(m));
      if (str(o, 'cell') && done.every((m) => m.step === 'done')) cellEmptied(plan.source);
      break;
    }
    case 'resume': {
      const moves = await selected(o, true);
      if (!moves.length) {
        out('nothing to resume: no open move');
        break;
      }
      const done = await runMoves(
        deps,
        moves.map((m) => m.id),
        { settleWaitMs },
      );
      for (const m of done) out(summary(m));
      const cell = str(o, 'cell');
      if (cell && done.every((m) => m.step === 'done')) cellEmptied(cell);
      break;
    }
    case 'status': {
      const moves = await selected(o, false);
      if (o.json) out(JSON.stringify(moves, null, 2));
      else if (!moves.length) out('no move');
      else for (const m of moves) out(summary(m));
      break;
    }
    case 'abort': {
      if (str(o, 'cell')) throw new Error('abort names a --move or an --event (each move is aborted on its own)');
      const moves = await selected(o, true);
      if (!moves.length) throw refuse('not_found', 'no open move to abort', 'no_open_move', 'move');
      for (const m of moves) out(summary(await abortMove(deps, m.id)));
      break;
    }
    case 'reinstate': {
      const cellId = str(o, 'cell');
      if (!cellId) throw new Error(`--cell is required\n${USAGE}`);
      const cell = (await listCells({ ctx: services })).find((c) => c.id === cellId);
      if (!cell) throw refuse('validation_failed', `unknown cell ${cellId}`, 'unknown_cell', 'cell');
      if (!(await deps.cells.ready(cell)))
        throw refuse('conflict', `cell ${cellId} does not answer /readyz: start it first`, 'target_down', 'cell');
      const open = await listMoves(services.db, { cellId }, { openOnly: true });
      if (open.length)
        throw refuse(
          'conflict',
          `${open.length} move(s) still open on ${cellId}: resume or abort them first`,
          'moves_open',
          'cell',
        );
      const row = await updateCell({ ctx: services, cellId, input: { status: 'active' } });
      out(`cell ${row.id} is ${row.status}: it takes new placements and evacuated events can move back`);
      break;
    }
    default:
      throw new Error(USAGE);
  }
} catch (err) {
  if (err instanceof DomainError) {
    const reason = (err.details as { reason?: string } | undefined)?.reason;
    process.stderr.write(`error ${err.code}${reason ? ` (${reason})` : ''}: ${err.message}\n`);
  } else process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
  code = 1;
} finally {
  await closeServices(services);
}
process.exit(code);
