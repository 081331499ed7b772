import { PROCESS_NAMES, type ProcessName as Process } from '@onsale/processes';
import { z } from 'zod';

/**
 * A stack's output `deploy` (infra/cdktf/src/constructs/fargate-service.ts builds it): the one-off tasks a deploy
 * runs to completion, in order, and the services it rolls after them.
 */
const ProcessName = z.enum(PROCESS_NAMES as [Process, ...Process[]]);
export const DeployPlan = z.object({
  cluster: z.string().min(1),
  subnets: z.array(z.string().min(1)),
  tasks: z.array(
    z.object({
      name: z.string().min(1),
      process: ProcessName,
      taskDefinition: z.string().min(1),
      securityGroups: z.array(z.string().min(1)).min(1),
    }),
  ),
  services: z.array(
    z.object({
      name: z.string().min(1),
      process: ProcessName,
      taskDefinition: z.string().min(1),
      min: z.number().int().min(0),
      max: z.number().int().min(0),
      autoscaled: z.boolean(),
    }),
  ),
});
export type DeployPlan = z.infer<typeof DeployPlan>;
export type DeployTask = DeployPlan['tasks'][number];
export type DeployService = DeployPlan['services'][number];

/** `terraform output -json` of a stack (every output as `{ value, type, sensitive }`), or the `deploy` value alone. */
export function planFromOutputs(outputs: unknown): DeployPlan {
  const wrapped = z.object({ deploy: z.object({ value: z.unknown() }) }).safeParse(outputs);
  const parsed = DeployPlan.safeParse(wrapped.success ? wrapped.data.deploy.value : outputs);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `deploy.${i.path.join('.')}: ${i.message}`);
    throw new Error(`not a stack's deploy output:\n  ${problems.join('\n  ')}`);
  }
  return parsed.data;
}

/** How a one-off task ended: exit 0 is success, anything else stops the deploy. */
export interface TaskOutcome {
  exitCode: number | null;
  /** Why it stopped, as the platform says it (ECS's stop reason, the process's last output lines). */
  reason: string;
  /** Where its whole output is. */
  logs: string;
}

/**
 * The steps of a deploy on one platform: ECS (aws-ecs.ts) or this machine's processes (local.ts). The order and
 * the rule that a failed task stops everything are `deploy()`'s, the same for both.
 */
export interface DeploySteps {
  /** Runs one deploy task to its end. */
  runTask(task: DeployTask): Promise<TaskOutcome>;
  /** Moves one service to its task definition with at least its minimum running; resolves once it is stable. */
  rollService(service: DeployService): Promise<void>;
}

export interface StepRecord {
  kind: 'task' | 'service';
  name: string;
  startedAt: number;
  finishedAt: number;
}

export class DeployTaskFailed extends Error {
  override name = 'DeployTaskFailed';
  constructor(
    readonly task: string,
    readonly outcome: TaskOutcome,
  ) {
    super(
      `deploy task ${task} failed (exit code ${outcome.exitCode ?? 'none'}); no service was changed.\n${outcome.reason}\nlogs: ${outcome.logs}`,
    );
  }
}

/**
 * Runs the plan's tasks one after the other, each to a zero exit, and only then rolls every service. A task that
 * fails stops the deploy with its reason, before any service is touched: the running revision keeps serving.
 */
export async function deploy(
  plan: DeployPlan,
  steps: DeploySteps,
  report: (line: string) => void = () => {},
): Promise<StepRecord[]> {
  const record: StepRecord[] = [];
  for (const task of plan.tasks) {
    const startedAt = Date.now();
    report(`task ${task.name} (${task.process}): running`);
    const outcome = await steps.runTask(task);
    record.push({ kind: 'task', name: task.name, startedAt, finishedAt: Date.now() });
    if (outcome.exitCode !== 0) throw new DeployTaskFailed(task.name, outcome);
    report(`task ${task.name}: exit 0`);
  }
  await Promise.all(
    plan.services.map(async (service) => {
      const startedAt = Date.now();
      report(`service ${service.name} (${service.process}): rolling to ${service.taskDefinition}`);
      await steps.rollService(service);
      record.push({ kind: 'service', name: service.name, startedAt, finishedAt: Date.now() });
      report(`service ${service.name}: stable`);
    }),
  );
  return record;
}
