import { type AwsContext, arn } from './aws-context';
import type { Statement } from './constructs/iam';
import type { Manifest } from './manifest';
import { CONTROL_PLANE_PREFIX, cellPrefix, ecsServiceResourceId } from './naming';
import { CELL_ROLE_NAMES, CELL_ROLES, CONTROL_PLANE_ROLES, type ControlPlaneRole, type ProcessRole } from './roles';

/**
 * The tag on every scalable target a pre-warm may schedule on: the control plane's worker may put and delete
 * scheduled actions only on targets that carry it (their ARNs end in an id AWS draws, unknown to this stack for the
 * cells' targets, which live in the cells' stacks).
 */
export const PREWARM_TAG = 'onsale:prewarm';

/** The pre-warm's roles (control-plane/src/db/schema/prewarm.ts PREWARM_ROLES); the infrastructure does not import application code. */
export type PrewarmRole = 'router' | 'waitingRoom' | 'cellApi' | 'cellWorkers';

/** One entry of the control plane's PREWARM_TARGETS (control-plane/src/prewarm/config.ts PrewarmTargetSchema). */
export interface PrewarmTarget {
  readonly role: PrewarmRole;
  readonly cell?: string;
  readonly region: string;
  readonly resourceId: string;
  readonly min: number;
  readonly max: number;
}

/** Only a service with a scalable target can take scheduled actions: the autoscaled ones (FargateService). */
const autoscaled = (role: ProcessRole) => role.scaling.kind !== 'fixed';

/** The pre-warm role of a control plane service: the edge router, and the API, which serves the waiting room. */
const CONTROL_PLANE_PREWARM: Partial<Record<ControlPlaneRole, PrewarmRole>> = { router: 'router', api: 'waitingRoom' };

/** The role a cell's service plays in a pre-warm, if it has a scalable target: its API or one of its workers. */
export function cellPrewarmRole(role: string): PrewarmRole | undefined {
  const spec = (CELL_ROLES as Record<string, ProcessRole>)[role];
  if (!spec || !autoscaled(spec)) return undefined;
  return role === 'api' ? 'cellApi' : 'cellWorkers';
}

export function controlPlanePrewarmRole(role: ControlPlaneRole): PrewarmRole | undefined {
  return autoscaled(CONTROL_PLANE_ROLES[role]) ? CONTROL_PLANE_PREWARM[role] : undefined;
}

/**
 * Every scalable target of the platform a pre-warm raises, with the sizing a scale-in gives back: the control plane's
 * router and API, and each cell's API and autoscaled workers in the cell's region (the primary's; a failed-over cell's
 * standby is not pre-warmed).
 */
export function prewarmTargets(manifest: Manifest): PrewarmTarget[] {
  const cp = manifest.controlPlane;
  const controlPlane = (Object.keys(CONTROL_PLANE_ROLES) as ControlPlaneRole[]).flatMap((service) => {
    const role = controlPlanePrewarmRole(service);
    if (!role) return [];
    const { min, max } = cp.services[service];
    return [{ role, region: cp.region, resourceId: ecsServiceResourceId(CONTROL_PLANE_PREFIX, service), min, max }];
  });
  const cells = manifest.cells.flatMap((cell) =>
    CELL_ROLE_NAMES.flatMap((service) => {
      const role = cellPrewarmRole(service);
      if (!role) return [];
      const { min, max } = cell.sizing.services[service];
      const resourceId = ecsServiceResourceId(cellPrefix(cell.id), service);
      return [{ role, cell: cell.id, region: cell.region, resourceId, min, max }];
    }),
  );
  return [...controlPlane, ...cells];
}

/**
 * What the control plane's worker may do to the targets: put and delete scheduled actions on the tagged targets of
 * the regions the platform runs in, and list them (Describe* takes no resource: "*").
 */
export function prewarmStatements(ctx: AwsContext, manifest: Manifest): Statement[] {
  const regions = [...new Set([manifest.controlPlane.region, ...manifest.cells.map((c) => c.region)])];
  return [
    {
      sid: 'PrewarmScheduledActions',
      actions: ['application-autoscaling:PutScheduledAction', 'application-autoscaling:DeleteScheduledAction'],
      resources: regions.map((region) => arn(ctx, 'application-autoscaling', 'scalable-target/*', region)),
      conditions: [{ test: 'StringEquals', variable: `aws:ResourceTag/${PREWARM_TAG}`, values: ['true'] }],
    },
    { sid: 'PrewarmListActions', actions: ['application-autoscaling:DescribeScheduledActions'], resources: ['*'] },
  ];
}
