/** Resource-name prefixes. IAM names are account-wide, so a DR region's resources carry their own prefix. */
export function cellPrefix(cellId: string): string {
  return `onsale-${cellId}`;
}

export function drPrefix(cellId: string): string {
  return `onsale-${cellId}-dr`;
}

export const CONTROL_PLANE_PREFIX = 'onsale-cp';

/** Stack names, which are also the directories under cdktf.out/stacks. */
export const StackName = {
  controlPlane: 'control-plane',
  edge: 'edge',
  cell: (cellId: string) => `cell-${cellId}`,
  dr: (cellId: string) => `cell-${cellId}-dr`,
} as const;

/** `ENV_NAME` → `env-name`, for the last segment of a secret's name. */
export function secretSegment(envName: string): string {
  return envName.toLowerCase().replaceAll('_', '-');
}

/**
 * The names the processes reach one another by, in the platform's private hosted zone (the manifest's
 * `controlPlane.internalDomain`, associated with every VPC): the control plane's API, each cell's API and each
 * DR standby's. One wildcard certificate per region (`*.<internalDomain>`) covers them all.
 */
export const InternalName = {
  controlPlaneApi: (domain: string) => `control-plane.${domain}`,
  cellApi: (domain: string, cellId: string) => `${cellId}.${domain}`,
  standbyCellApi: (domain: string, cellId: string) => `${cellId}-dr.${domain}`,
} as const;

/** The Secrets Manager name of a cell role's secret; a DR region's replica has the same name. */
export function cellSecretName(cellId: string, role: string, envName: string): string {
  return `onsale/${cellId}/${role}/${secretSegment(envName)}`;
}

/** The break-glass master secret of a global database's primary, replicated to its DR region. */
export function masterSecretName(databaseName: string): string {
  return `onsale/${databaseName}/master`;
}

/**
 * Application Auto Scaling's resource id of an ECS service: what its scalable target and policies name, and what the
 * control plane's pre-warm schedules actions on (src/prewarm.ts hands it these ids).
 */
export function ecsServiceResourceId(cluster: string, service: string): string {
  return `service/${cluster}/${service}`;
}
