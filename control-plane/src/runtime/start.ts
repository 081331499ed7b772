import {
  configOrExit,
  createLogger,
  type Logger,
  labelProcessMetrics,
  onShutdown,
  type ReadinessProbe,
  serveHealth,
  serveInProcesses,
} from '@onsale/contracts';
import type { z } from 'zod';
import type { Config } from '../config';
import { closeServices, connectServices, createServices, reportSigningKey, type Services } from '../context';
import type { ControlPlaneRole, ControlPlaneRoleSpec, RoleSchema } from './roles';

export type RoleConfig<R extends ControlPlaneRole> = z.infer<R['config']>;

/** A control-plane process running a role, as the role's start sees it. */
export interface RunningRole<C> {
  config: C;
  /** Bound to the control plane and the role's process name. */
  log: Logger;
  /** Registers what to stop on SIGTERM; the stops run last registered first, so what started last stops first. */
  onShutdown(stop: () => Promise<void> | void): void;
  /** Adds a part to /readyz (for a role with a health listener): the process is ready only while every part is. */
  readiness(name: string, probe: ReadinessProbe): void;
}

/** How a role starts: what it runs, its readiness and its stops (the role's `*-role.ts`). */
export type StartRole<R extends ControlPlaneRole> = (role: RunningRole<RoleConfig<R>>) => Promise<void>;

/**
 * The start of every long-running control-plane process, as a cell's roles start: configuration parsed once
 * (failing fast, naming the variable), metrics labelled with the process name, the health listener when the
 * role has one, the role started, and a SIGTERM that runs the role's stops within its drain deadline. An API
 * role with several processes forks here; each of them starts the role on its own.
 */
export async function runRole<S extends RoleSchema>(
  spec: ControlPlaneRoleSpec<S>,
  start: (role: RunningRole<z.infer<S>>) => Promise<void>,
): Promise<void> {
  const config = configOrExit(spec.process, spec.config);
  const log = createLogger({ service: 'control-plane', role: spec.process }, config.LOG_LEVEL);
  await serveInProcesses(spec.processes?.(config) ?? 1, log, async () => {
    labelProcessMetrics({ role: spec.process });
    const stops: (() => Promise<void> | void)[] = [];
    const probes = new Map<string, ReadinessProbe>();
    const listener = spec.healthListener?.(config);
    const health = listener ? serveHealth(listener.host, listener.port, probes) : null;
    onShutdown(
      log,
      async () => {
        for (const stop of stops.reverse()) {
          await Promise.resolve(stop()).catch((err) => log.warn('stop failed', { err }));
        }
        health?.close();
      },
      spec.drainMs,
    );
    // Not ready until the role has started (its services connected, its loops running).
    let started = false;
    probes.set('start', () => ({ ready: started }));
    await start({
      config,
      log,
      onShutdown: (stop) => stops.push(stop),
      readiness: (name, probe) => probes.set(name, probe),
    });
    started = true;
  });
}

/**
 * The services of a role that works on the control plane's own stores (the API, the worker): connected, the
 * admission signing key made if there is none, and whether it opens said in the log; closed when the process stops.
 */
export async function openServices(role: RunningRole<Config>): Promise<Services> {
  const services = createServices(role.config, { log: role.log });
  role.onShutdown(() => closeServices(services));
  await connectServices(services);
  await services.keys.ensureKey();
  await reportSigningKey(services);
  return services;
}
