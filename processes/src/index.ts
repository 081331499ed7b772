import {
  CellApiConfig,
  CellMigrateConfig,
  CellProvisionConfig,
  CellReplayDeadLettersConfig,
} from '@onsale/cell/config';
import { CELL_ROLES, type CellRoleName } from '@onsale/cell/runtime/roles';
import { ConfigSchema, MigrateConfig, ResealKeysConfig } from '@onsale/control-plane/config';
import { CONTROL_PLANE_ROLES, type ControlPlaneRole } from '@onsale/control-plane/runtime/roles';
import { ReportingConfig } from '@onsale/reporting/config';
import { RouterConfig } from '@onsale/router/config';
import type { z } from 'zod';

/** A cell's worker role as the catalog (cell/src/runtime/roles.ts) defines it. */
const cellWorker = <N extends CellRoleName>(role: N) => ({
  entry: CELL_ROLES[role].entry,
  schema: CELL_ROLES[role].config as (typeof CELL_ROLES)[N]['config'],
});

/** A long-running control-plane role as its catalog (control-plane/src/runtime/roles.ts) defines it. */
const controlPlaneRole = <R extends ControlPlaneRole>(role: R) => ({ entry: role.entry, schema: role.config });

/**
 * Every process the platform runs, with its entry point and the zod schema it parses its environment
 * with. This is the one place where the stacks meet the application: a task definition's command is
 * `node <package>/dist/bin/<name>.mjs` (the bundle scripts/bundle.ts builds from `entry`, the image
 * ships), and its environment and secrets are checked against `schema` when the stack is built.
 */
export const PROCESSES = {
  'cell-api': { entry: 'cell/src/api/main.ts', schema: CellApiConfig },
  'cell-relay': cellWorker('relay'),
  'cell-saga': cellWorker('saga'),
  'cell-payments': cellWorker('payments'),
  'cell-expiry': cellWorker('expiry'),
  'cell-tickets': cellWorker('tickets'),
  'cell-reconciler': cellWorker('reconciler'),
  'cell-notifications': cellWorker('notifications'),
  'cell-migrate': { entry: 'cell/src/db/migrate-main.ts', schema: CellMigrateConfig },
  'cell-provision-topics': { entry: 'cell/src/messaging/provision-main.ts', schema: CellProvisionConfig },
  // Operator tasks, run from a runbook; `run-task --overrides` sets the variables or the arguments of one run.
  'cell-replay-dead-letters': { entry: 'cell/src/ops/replay-dlq.ts', schema: CellReplayDeadLettersConfig },
  'control-plane-api': controlPlaneRole(CONTROL_PLANE_ROLES.api),
  'control-plane-worker': controlPlaneRole(CONTROL_PLANE_ROLES.worker),
  'control-plane-fact-relay': controlPlaneRole(CONTROL_PLANE_ROLES.factRelay),
  'control-plane-migrate': { entry: 'control-plane/src/db/migrate.ts', schema: MigrateConfig },
  'control-plane-reseal-keys': { entry: 'control-plane/src/admission/reseal-main.ts', schema: ResealKeysConfig },
  'control-plane-evacuate-event': { entry: 'control-plane/src/evacuation/cli.ts', schema: ConfigSchema },
  reporting: { entry: 'reporting/src/main.ts', schema: ReportingConfig },
  router: { entry: 'router/src/main.ts', schema: RouterConfig },
} as const satisfies Record<string, { entry: string; schema: z.ZodObject }>;

export type ProcessName = keyof typeof PROCESSES;
export const PROCESS_NAMES = Object.keys(PROCESSES) as ProcessName[];

/**
 * A process's bundle, relative to the repository root and the image's working directory. Two levels
 * under its package, as its entry is, so paths the code resolves from its own file (the migrations in
 * `<package>/drizzle`, the console's assets) resolve the same from the bundle.
 */
export function bundlePath(name: ProcessName): string {
  const [pkg] = PROCESSES[name].entry.split('/');
  return `${pkg}/dist/bin/${name}.mjs`;
}

export function processCommand(name: ProcessName): string[] {
  return ['node', bundlePath(name)];
}

/** The variables a process cannot start without: no default, not optional. */
export function requiredVariables(name: ProcessName): string[] {
  const { shape } = PROCESSES[name].schema;
  return Object.entries(shape as Record<string, z.ZodType>)
    .filter(([, field]) => !field.safeParse(undefined).success)
    .map(([variable]) => variable);
}

/**
 * What is wrong between a task's variables (environment and secrets) and its process's schema: a name the
 * process never reads (a typo, a renamed variable) or a required one the task does not set.
 */
export function environmentProblems(name: ProcessName, variables: readonly string[]): string[] {
  const known = new Set(Object.keys(PROCESSES[name].schema.shape));
  const given = new Set(variables);
  return [
    ...variables.filter((v) => !known.has(v)).map((v) => `${v} is set but ${name} does not read it`),
    ...requiredVariables(name)
      .filter((v) => !given.has(v))
      .map((v) => `${v} is required by ${name} but not set`),
  ];
}

export class ProcessContractError extends Error {
  override name = 'ProcessContractError';
}
