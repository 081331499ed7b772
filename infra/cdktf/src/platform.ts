import type { App } from 'cdktf';
import type { Manifest } from './manifest';
import { CellDrStack } from './stacks/cell-dr-stack';
import { CellStack } from './stacks/cell-stack';
import { ControlPlaneStack } from './stacks/control-plane-stack';
import { EdgeStack } from './stacks/edge-stack';

export interface Platform {
  readonly controlPlane: ControlPlaneStack;
  readonly edge: EdgeStack;
  readonly cells: readonly CellStack[];
  readonly dr: readonly CellDrStack[];
}

/** Every stack the manifest describes: the control plane, the edge, one stack per cell, one per DR standby. */
export function buildPlatform(app: App, manifest: Manifest): Platform {
  const controlPlane = new ControlPlaneStack(app, manifest);
  const edge = new EdgeStack(app, manifest, controlPlane);
  const cells = manifest.cells.map((cell) => new CellStack(app, manifest, cell, controlPlane));
  const dr = cells.filter((stack) => stack.cell.dr).map((stack) => new CellDrStack(app, manifest, stack, controlPlane));
  return { controlPlane, edge, cells, dr };
}
