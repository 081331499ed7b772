import { TerraformOutput } from 'cdktf';
import type { Construct } from 'constructs';
import type { CellRuntime } from '../constructs/cell-runtime';

/**
 * What `aws ecs run-task` needs for a cell's one-off tasks (the deploy steps and the runbooks' operator tasks): the
 * cluster, the private subnets, and per operator task its family, security group and container. A standby has no
 * operator task until it is promoted (its runtime defines none), so its `operator_tasks` is empty.
 */
export function cellRunTaskOutputs(stack: Construct, runtime: CellRuntime): void {
  new TerraformOutput(stack, 'operator_tasks', { value: runtime.operatorTasks });
  new TerraformOutput(stack, 'ecs_cluster', { value: runtime.cluster.name });
  new TerraformOutput(stack, 'private_subnet_ids', { value: runtime.network.privateSubnetIds });
}
