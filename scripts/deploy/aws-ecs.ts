import { ApplicationAutoScalingClient, RegisterScalableTargetCommand } from '@aws-sdk/client-application-auto-scaling';
import {
  DescribeServicesCommand,
  DescribeTasksCommand,
  ECSClient,
  RunTaskCommand,
  UpdateServiceCommand,
  waitUntilServicesStable,
  waitUntilTasksStopped,
} from '@aws-sdk/client-ecs';
import type { DeployPlan, DeployService, DeploySteps, DeployTask, TaskOutcome } from './plan';

export interface AwsEcsOptions {
  region: string;
  plan: DeployPlan;
  /** The log-group prefix of the stack's tasks (`/onsale-c1/<role>`), for the logs line of a failed task. */
  logPrefix: string;
  /** How long a deploy task or a service roll may take. Migrations on a large ledger take minutes. */
  waitSeconds?: number;
  /** Another endpoint for both clients (a local stand-in for ECS in tests). */
  endpoint?: string;
}

/** The deploy steps on ECS: `RunTask` and wait for it to stop, then `UpdateService` and wait for it to be stable. */
export class AwsEcsSteps implements DeploySteps {
  private readonly ecs: ECSClient;
  private readonly scaling: ApplicationAutoScalingClient;
  private readonly waitSeconds: number;

  constructor(private readonly options: AwsEcsOptions) {
    this.ecs = new ECSClient({ region: options.region, endpoint: options.endpoint });
    this.scaling = new ApplicationAutoScalingClient({ region: options.region, endpoint: options.endpoint });
    this.waitSeconds = options.waitSeconds ?? 1_800;
  }

  async runTask(task: DeployTask): Promise<TaskOutcome> {
    const { cluster, subnets } = this.options.plan;
    const started = await this.ecs.send(
      new RunTaskCommand({
        cluster,
        taskDefinition: task.taskDefinition,
        launchType: 'FARGATE',
        count: 1,
        startedBy: 'onsale-deploy',
        networkConfiguration: {
          awsvpcConfiguration: { subnets, securityGroups: [...task.securityGroups], assignPublicIp: 'DISABLED' },
        },
      }),
    );
    const taskArn = started.tasks?.[0]?.taskArn;
    if (!taskArn) {
      const failures = (started.failures ?? []).map((f) => `${f.arn ?? ''} ${f.reason ?? ''} ${f.detail ?? ''}`.trim());
      return { exitCode: null, reason: `ECS did not start it: ${failures.join('; ') || 'no task'}`, logs: '' };
    }
    await waitUntilTasksStopped(
      { client: this.ecs, maxWaitTime: this.waitSeconds, minDelay: 6, maxDelay: 30 },
      { cluster, tasks: [taskArn] },
    );
    const described = await this.ecs.send(new DescribeTasksCommand({ cluster, tasks: [taskArn] }));
    const stopped = described.tasks?.[0];
    // The process is the container named as the role; the metrics collector is not in a deploy task.
    const container = stopped?.containers?.find((c) => c.name === task.name);
    const taskId = taskArn.split('/').pop() ?? taskArn;
    return {
      exitCode: container?.exitCode ?? null,
      reason: [stopped?.stoppedReason, container?.reason].filter(Boolean).join(': ') || 'stopped',
      logs: `aws logs tail ${this.options.logPrefix}/${task.name} --log-stream-names ${task.name}/${task.name}/${taskId} --region ${this.options.region}`,
    };
  }

  async rollService(service: DeployService): Promise<void> {
    const { cluster } = this.options.plan;
    const current = await this.ecs.send(new DescribeServicesCommand({ cluster, services: [service.name] }));
    const running = current.services?.[0]?.desiredCount ?? 0;
    await this.ecs.send(
      new UpdateServiceCommand({
        cluster,
        service: service.name,
        taskDefinition: service.taskDefinition,
        // Never fewer than autoscaling asked for; at least the minimum (a standby's is 0: the failover starts it).
        desiredCount: Math.max(running, service.min),
      }),
    );
    if (service.autoscaled) {
      // The stack registers the target at 0 so the apply starts nothing; from the first deploy on, the minimum holds.
      await this.scaling.send(
        new RegisterScalableTargetCommand({
          ServiceNamespace: 'ecs',
          ScalableDimension: 'ecs:service:DesiredCount',
          ResourceId: `service/${clusterName(cluster)}/${service.name}`,
          MinCapacity: service.min,
          MaxCapacity: service.max,
        }),
      );
    }
    await waitUntilServicesStable(
      { client: this.ecs, maxWaitTime: this.waitSeconds, minDelay: 10, maxDelay: 30 },
      { cluster, services: [service.name] },
    );
  }
}

/** The cluster's name from its name or ARN (`arn:aws:ecs:<region>:<account>:cluster/<name>`). */
function clusterName(cluster: string): string {
  return cluster.split('/').pop() ?? cluster;
}
