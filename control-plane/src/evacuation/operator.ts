import type { Services } from '../context';
import type { EventMove } from '../db/schema';
import { abortMove, listMoves, type MoverDeps, runMoves, startEvacuation } from './move';
import { type EvacuationPlan, planEvacuation, refuse } from './plan';

/**
 * The operator API's verbs (control-plane/src/http/routes/operator-evacuations.ts), the same steps
 * as the CLI. A run is recorded first (the move rows), then carried forward in this process in the
 * background: the answer is 202 with the moves, their progress is read with status, and if this
 * process dies `resume` (here or from the CLI) takes them up from their recorded step.
 */

export interface EvacuationInput {
  eventId?: string;
  cellId?: string;
  to?: string[];
  drainSeconds?: number;
  confirmSourceDead?: string;
}

export function moverDeps(s: Services): MoverDeps {
  return {
    db: s.db,
    redis: s.redis,
    prefix: s.prefix,
    config: s.config,
    log: s.log,
    clock: s.clock,
    cells: s.cells,
  };
}

/** Moves this process is carrying forward now (a second request for one of them does not start a second runner). */
const running = new Set<string>();

function carryForward(ctx: Services, moveIds: string[]) {
  const mine = moveIds.filter((id) => !running.has(id));
  for (const id of mine) running.add(id);
  if (!mine.length) return;
  runMoves(moverDeps(ctx), mine)
    .catch((err) =>
      ctx.log.warn('evacuation stopped; resume takes it up', {
        moveIds: mine,
        error: err instanceof Error ? err.message : String(err),
      }),
    )
    .finally(() => {
      for (const id of mine) running.delete(id);
    });
}

const withDrain = (input: EvacuationInput) => ({ ...input, drainSeconds: input.drainSeconds ?? 5 });

export async function planOperatorEvacuation({ ctx, input }: { ctx: Services; input: EvacuationInput }) {
  return planEvacuation(moverDeps(ctx), withDrain(input));
}

export async function runOperatorEvacuation({
  ctx,
  input,
}: {
  ctx: Services;
  input: EvacuationInput;
}): Promise<{ plan: EvacuationPlan; moves: EventMove[] }> {
  const deps = moverDeps(ctx);
  const plan = await planEvacuation(deps, withDrain(input));
  const moves = await startEvacuation(deps, plan);
  carryForward(
    ctx,
    moves.map((m) => m.id),
  );
  return { plan, moves };
}

export async function operatorMoves({ ctx, by }: { ctx: Services; by: { eventId?: string; cellId?: string } }) {
  return listMoves(ctx.db, by);
}

export async function operatorMove({ ctx, moveId }: { ctx: Services; moveId: string }): Promise<EventMove> {
  const [m] = await listMoves(ctx.db, { moveId });
  if (!m) throw refuse('not_found', `unknown move ${moveId}`, 'unknown_move', 'moveId');
  return m;
}

export async function resumeOperatorMove({ ctx, moveId }: { ctx: Services; moveId: string }): Promise<EventMove> {
  const m = await operatorMove({ ctx, moveId });
  if (m.step === 'done' || m.step === 'aborted')
    throw refuse('conflict', `the move is ${m.step}; nothing to resume`, 'move_closed', 'moveId');
  carryForward(ctx, [m.id]);
  return m;
}

export async function abortOperatorMove({ ctx, moveId }: { ctx: Services; moveId: string }): Promise<EventMove> {
  await operatorMove({ ctx, moveId });
  if (running.has(moveId))
    throw refuse(
      'conflict',
      'the move is running in this process; wait for it to stop or let it finish',
      'move_running',
      'moveId',
    );
  return abortMove(moverDeps(ctx), moveId);
}
