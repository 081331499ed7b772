import type { LogLevel } from '@onsale/contracts';
import type { z } from 'zod';
import { ConfigSchema, FactRelayConfig } from '../config';

/** A role's environment schema: an object (the stacks check its variables) with at least a log level. */
export type RoleSchema = z.ZodObject & z.ZodType<{ LOG_LEVEL: LogLevel }>;

export interface ControlPlaneRoleSpec<S extends RoleSchema> {
  /** The name it logs, labels its metrics and traces with, and the stacks run it as. */
  process: string;
  entry: string;
  config: S;
  /** How many processes share its listening port (node:cluster); one when absent. */
  processes?(config: z.infer<S>): number;
  /** Where it answers /healthz, /readyz and /metrics on a port of its own, when it does. */
  healthListener?(config: z.infer<S>): { host: string; port: number } | undefined;
  /** How long SIGTERM waits for its stops before the process exits anyway. */
  drainMs?: number;
}

const role = <S extends RoleSchema>(spec: ControlPlaneRoleSpec<S>) => spec;

/**
 * The long-running processes of the control plane, named once: read by the entry files, the stacks
 * (processes/src/index.ts) and the start (runtime/start.ts). How each one starts is its `*-role.ts`.
 * The one-off tasks (migrate, reseal-keys) run to completion and are not roles.
 */
export const CONTROL_PLANE_ROLES = {
  api: role({
    process: 'control-plane-api',
    entry: 'control-plane/src/main.ts',
    config: ConfigSchema,
    processes: (c) => c.API_PROCESSES,
    // Its /healthz is on its HTTP port (the app answers it); in-flight requests get 10 s to finish.
    drainMs: 10_000,
  }),
  worker: role({
    process: 'control-plane-worker',
    entry: 'control-plane/src/worker.ts',
    config: ConfigSchema,
    healthListener: (c) => (c.HEALTH_PORT === undefined ? undefined : { host: c.HOST, port: c.HEALTH_PORT }),
  }),
  factRelay: role({
    process: 'control-plane-fact-relay',
    entry: 'control-plane/src/outbox/relay-main.ts',
    config: FactRelayConfig,
    healthListener: (c) => (c.HEALTH_PORT === undefined ? undefined : { host: c.HEALTH_HOST, port: c.HEALTH_PORT }),
  }),
};

export type ControlPlaneRole = (typeof CONTROL_PLANE_ROLES)[keyof typeof CONTROL_PLANE_ROLES];
