import { AppautoscalingPolicy } from '@cdktf/provider-aws/lib/appautoscaling-policy';
import { AppautoscalingTarget } from '@cdktf/provider-aws/lib/appautoscaling-target';
import { CloudwatchLogGroup } from '@cdktf/provider-aws/lib/cloudwatch-log-group';
import type { EcsCluster } from '@cdktf/provider-aws/lib/ecs-cluster';
import { EcsService } from '@cdktf/provider-aws/lib/ecs-service';
import { EcsTaskDefinition } from '@cdktf/provider-aws/lib/ecs-task-definition';
import { SecurityGroup } from '@cdktf/provider-aws/lib/security-group';
import { environmentProblems, ProcessContractError, type ProcessName, processCommand } from '@onsale/processes';
import { Construct } from 'constructs';
import { type AwsContext, arn } from '../aws-context';
import { checkovSkip, SkipReason } from '../checkov';
import { type ImageSpec, imageIn } from '../manifest';
import { ecsServiceResourceId } from '../naming';
import { PREWARM_TAG } from '../prewarm';
import type { ServiceSizing } from '../roles';
import { allowEgress } from './firewall';
import { ServiceRole, type Statement, sameAccountTrust } from './iam';
import {
  METRICS_SIDECAR_NAME,
  metricsSidecarContainer,
  metricsSidecarStatements,
  tracingEnvironment,
} from './metrics-sidecar';
import type { Network } from './network';

/** One key of a JSON secret (the database master secret's `password`). */
export interface SecretKey {
  readonly arn: string;
  readonly jsonKey: string;
}

const secretArn = (s: string | SecretKey) => (typeof s === 'string' ? s : s.arn);
const secretValueFrom = (s: string | SecretKey) => (typeof s === 'string' ? s : `${s.arn}:${s.jsonKey}::`);

export interface MetricTarget {
  readonly namespace: string;
  readonly metricName: string;
  readonly dimensions: Record<string, string>;
  readonly target: number;
}

export type ServiceScaling =
  | { readonly kind: 'requests'; readonly resourceLabel: string; readonly requestsPerTaskPerMinute: number }
  | { readonly kind: 'metric'; readonly metric: MetricTarget }
  | { readonly kind: 'fixed' };

export interface FargateServiceProps {
  readonly ctx: AwsContext;
  /** Prefix shared by the stack's resources, e.g. onsale-c1. */
  readonly prefix: string;
  readonly role: string;
  /** What the container runs; its environment and secrets must match this process's schema. */
  readonly process: ProcessName;
  readonly cluster: EcsCluster;
  readonly network: Network;
  readonly image: ImageSpec;
  readonly sizing: ServiceSizing;
  readonly environment: Record<string, string>;
  /** Environment variable name to a secret only this role may read: its ARN, or one JSON key of it. */
  readonly secrets: Record<string, string | SecretKey>;
  /** The customer-managed key the secrets are encrypted with, if any. */
  readonly secretsKeyArn?: string;
  readonly taskStatements: Statement[];
  readonly http?: { readonly port: number; readonly targetGroupArn: string };
  readonly scaling: ServiceScaling;
  /** A warm standby: defined, scaled to zero, no autoscaling until failover. */
  readonly standby: boolean;
  /** The control plane raises it before an onsale (src/prewarm.ts): its scalable target carries PREWARM_TAG. */
  readonly prewarmed?: boolean;
  /** A task run to completion by a deploy step (migrations, topics): a task definition and no service. */
  readonly oneOff?: boolean;
  /**
   * Where the process answers /healthz, /readyz and /metrics on the task's loopback (HEALTH_PORT): a worker's only
   * listener, probed by the container health check; beside an HTTP port (the router's), where its metrics are
   * scraped, the HTTP port staying the one probed.
   */
  readonly healthPort?: number;
  /**
   * The CloudWatch namespace for the process's Prometheus metrics: a collector beside it scrapes /metrics
   * on its health port (else its HTTP port). Unset for one-off tasks and processes with no listener.
   */
  readonly metricsNamespace?: string;
}

/**
 * A service as the deploy command rolls it (scripts/deploy): the task definition Terraform registered and the
 * count it raises the service to once the deploy tasks have succeeded.
 */
export interface DeployService {
  readonly name: string;
  readonly process: ProcessName;
  readonly taskDefinition: string;
  /** The running count the deploy raises the service to (0 for a standby: a failover starts it). */
  readonly min: number;
  readonly max: number;
  /** Whether a scalable target owns the count: the deploy then registers `min` there, not only on the service. */
  readonly autoscaled: boolean;
}

/** A one-off deploy task as `ecs run-task` needs it: its definition and its security group. */
export interface DeployTask {
  readonly name: string;
  readonly process: ProcessName;
  readonly taskDefinition: string;
  readonly securityGroups: readonly string[];
}

/**
 * A stack's output `deploy`: what `aws ecs run-task` needs for each deploy task (cluster, private subnets, the
 * task's own security group), in the order they run, and each service's task definition and count.
 */
export interface DeployPlan {
  readonly cluster: string;
  readonly subnets: readonly string[];
  readonly tasks: readonly DeployTask[];
  readonly services: readonly DeployService[];
}

/** The plan of a stack's roles: tasks in the order given (migrations before topics), then every service. */
export function deployPlan(cluster: EcsCluster, network: Network, roles: readonly FargateService[]): DeployPlan {
  return {
    cluster: cluster.name,
    subnets: network.privateSubnetIds,
    tasks: roles.flatMap((r) => ('task' in r.deploy ? [r.deploy.task] : [])),
    services: roles.flatMap((r) => ('service' in r.deploy ? [r.deploy.service] : [])),
  };
}

const LOG_RETENTION_DAYS = 30;
// Fargate's ceiling; the processes drain in-flight work on SIGTERM within it.
const STOP_TIMEOUT_SECONDS = 120;

/**
 * One process role as an ECS Fargate service in the private subnets: its own log group, its own
 * execution and task roles, its own security group, no public IP.
 */
export class FargateService extends Construct {
  readonly securityGroup: SecurityGroup;
  readonly taskDefinition: EcsTaskDefinition;
  /** What the deploy command needs of this role: a service to roll, or a one-off task to run first. */
  readonly deploy: { readonly service: DeployService } | { readonly task: DeployTask };
  /** The process's container (the role's name); a collector beside it has its own. */
  readonly containerName: string;
  /** The task definition's family, `<prefix>-<role>`, as a runbook names it. */
  readonly family: string;

  constructor(scope: Construct, id: string, props: FargateServiceProps) {
    super(scope, id);
    const { ctx, role, network } = props;
    const name = `${props.prefix}-${role}`;
    // Pulled from the task's own region, never across regions (manifest.ts imageIn).
    const image = imageIn(props.image, ctx.region);
    this.containerName = role;
    this.family = name;

    const logGroup = new CloudwatchLogGroup(this, 'logs', {
      name: `/${props.prefix}/${role}`,
      retentionInDays: LOG_RETENTION_DAYS,
    });
    checkovSkip(logGroup, { CKV_AWS_158: SkipReason.logGroupKms, CKV_AWS_338: SkipReason.logRetention });

    this.securityGroup = new SecurityGroup(this, 'sg', {
      name: `${name}-tasks`,
      description: `${role} tasks of ${props.prefix}`,
      vpcId: network.vpc.id,
    });
    if (props.oneOff) {
      checkovSkip(this.securityGroup, {
        CKV2_AWS_5:
          'a one-off task runs with this group by `aws ecs run-task` (deploy_tasks, operator_tasks outputs), not from a service',
      });
    }
    // AWS APIs through the NAT gateways, Stripe, and the peered control plane all speak HTTPS.
    allowEgress(this, 'https-out', this.securityGroup, 443, ['0.0.0.0/0'], 'HTTPS to AWS APIs and partners');

    const secretArns = Object.values(props.secrets).map(secretArn);
    const execution = new ServiceRole(this, 'execution-role', {
      ctx,
      name: `${name}-exec`,
      service: 'ecs-tasks.amazonaws.com',
      trustConditions: sameAccountTrust(ctx),
      statements: [
        // GetAuthorizationToken has no resource to scope to; pulling layers is scoped to the repository.
        { sid: 'EcrLogin', actions: ['ecr:GetAuthorizationToken'], resources: ['*'] },
        {
          sid: 'EcrPull',
          actions: ['ecr:BatchCheckLayerAvailability', 'ecr:BatchGetImage', 'ecr:GetDownloadUrlForLayer'],
          resources: [image.repositoryArn],
        },
        {
          sid: 'OwnLogGroup',
          actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          resources: [`${logGroup.arn}:log-stream:*`],
        },
        ...(secretArns.length > 0
          ? [{ sid: 'OwnSecrets', actions: ['secretsmanager:GetSecretValue'], resources: secretArns }]
          : []),
        ...(secretArns.length > 0 && props.secretsKeyArn
          ? [
              {
                sid: 'DecryptOwnSecrets',
                actions: ['kms:Decrypt'],
                resources: [props.secretsKeyArn],
                conditions: [
                  {
                    test: 'StringEquals',
                    variable: 'kms:ViaService',
                    values: [`secretsmanager.${ctx.region}.amazonaws.com`],
                  },
                ],
              },
            ]
          : []),
      ],
    });

    const metricsPort = props.healthPort ?? props.http?.port;
    const sidecar =
      props.metricsNamespace !== undefined && metricsPort !== undefined && !props.oneOff
        ? {
            namespace: props.metricsNamespace,
            port: metricsPort,
            region: ctx.region,
            logGroupName: logGroup.name,
            logGroupArn: logGroup.arn,
          }
        : undefined;

    const task = new ServiceRole(this, 'task-role', {
      ctx,
      name: `${name}-task`,
      service: 'ecs-tasks.amazonaws.com',
      trustConditions: sameAccountTrust(ctx, arn(ctx, 'ecs', '*')),
      statements: sidecar ? [...props.taskStatements, ...metricsSidecarStatements(sidecar)] : props.taskStatements,
    });

    // With a collector beside it, the process sends it its spans (every long-running service has one).
    const variables = sidecar ? { ...props.environment, ...tracingEnvironment(name) } : props.environment;
    const problems = environmentProblems(props.process, [...Object.keys(variables), ...Object.keys(props.secrets)]);
    if (problems.length > 0) {
      throw new ProcessContractError(`${name} (${props.process}):\n  ${problems.join('\n  ')}`);
    }
    const probePort = props.oneOff ? undefined : (props.http?.port ?? props.healthPort);
    const environment = Object.entries(variables)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([envName, value]) => ({ name: envName, value }));
    const secrets = Object.entries(props.secrets)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([envName, secret]) => ({ name: envName, valueFrom: secretValueFrom(secret) }));

    this.taskDefinition = new EcsTaskDefinition(this, 'task', {
      family: this.family,
      requiresCompatibilities: ['FARGATE'],
      networkMode: 'awsvpc',
      cpu: String(props.sizing.cpu),
      memory: String(props.sizing.memory),
      runtimePlatform: { operatingSystemFamily: 'LINUX', cpuArchitecture: 'X86_64' },
      executionRoleArn: execution.role.arn,
      taskRoleArn: task.role.arn,
      volume: [{ name: 'tmp' }],
      containerDefinitions: JSON.stringify([
        {
          name: role,
          image: image.uri,
          command: processCommand(props.process),
          essential: true,
          environment,
          secrets,
          portMappings: props.http ? [{ containerPort: props.http.port, protocol: 'tcp' }] : [],
          readonlyRootFilesystem: true,
          mountPoints: [{ sourceVolume: 'tmp', containerPath: '/tmp' }],
          // An init process forwards SIGTERM to node, so the drain-on-shutdown path actually runs.
          linuxParameters: { initProcessEnabled: true },
          stopTimeout: STOP_TIMEOUT_SECONDS,
          // Liveness only: a worker whose broker is away is not ready, but restarting it would not help. A service
          // with an HTTP port is probed there too, beside its load balancer's readiness check.
          healthCheck:
            probePort === undefined
              ? undefined
              : {
                  command: ['CMD', 'node', '-e', healthProbe(probePort)],
                  interval: 15,
                  timeout: 5,
                  retries: 3,
                  startPeriod: 60,
                },
          logConfiguration: {
            logDriver: 'awslogs',
            options: {
              'awslogs-group': logGroup.name,
              'awslogs-region': ctx.region,
              'awslogs-stream-prefix': role,
              // A stalled log pipeline must not stall the purchase path.
              mode: 'non-blocking',
              'max-buffer-size': '25m',
            },
          },
        },
        ...(sidecar ? [metricsSidecarContainer(sidecar, `${role}-${METRICS_SIDECAR_NAME}`)] : []),
      ]),
    });

    if (props.oneOff) {
      this.deploy = {
        task: {
          name: role,
          process: props.process,
          taskDefinition: this.taskDefinition.arn,
          securityGroups: [this.securityGroup.id],
        },
      };
      return;
    }
    const autoscaled = !props.standby && props.scaling.kind !== 'fixed';
    this.deploy = {
      service: {
        name: role,
        process: props.process,
        taskDefinition: this.taskDefinition.arn,
        min: props.standby ? 0 : props.sizing.min,
        max: props.standby ? 0 : props.sizing.max,
        autoscaled,
      },
    };

    // No task starts at the apply: on a fresh account the migrations and topics do not exist yet, the API would
    // never turn ready and the circuit breaker would roll back. The deploy command (scripts/deploy,
    // runbooks/deploy-cell.md) runs the deploy tasks, then moves the service to its task definition and count.
    const service = new EcsService(this, 'service', {
      name: role,
      cluster: props.cluster.arn,
      taskDefinition: this.taskDefinition.arn,
      desiredCount: 0,
      launchType: 'FARGATE',
      platformVersion: 'LATEST',
      networkConfiguration: {
        subnets: network.privateSubnetIds,
        securityGroups: [this.securityGroup.id],
        assignPublicIp: false,
      },
      // With subnets in three AZs ECS spreads tasks across them, and moves them back after an AZ recovers.
      availabilityZoneRebalancing: 'ENABLED',
      deploymentMinimumHealthyPercent: 100,
      deploymentMaximumPercent: 200,
      deploymentCircuitBreaker: { enable: true, rollback: true },
      loadBalancer: props.http
        ? [{ targetGroupArn: props.http.targetGroupArn, containerName: role, containerPort: props.http.port }]
        : undefined,
      healthCheckGracePeriodSeconds: props.http ? 60 : undefined,
      enableEcsManagedTags: true,
      propagateTags: 'SERVICE',
      // The deploy command, then autoscaling (or, on a standby, the failover runbook), own the count; the deploy
      // command moves the service to a new task definition only after that revision's deploy tasks succeeded.
      lifecycle: { ignoreChanges: ['desired_count', 'task_definition'] },
    });

    if (props.standby || props.scaling.kind === 'fixed') return;

    // Registering a scalable target raises the service into [min, max] at once, which would start tasks before the
    // deploy tasks ran: it is registered at 0 and the deploy command raises `min` after them.
    const target = new AppautoscalingTarget(this, 'scaling-target', {
      serviceNamespace: 'ecs',
      scalableDimension: 'ecs:service:DesiredCount',
      resourceId: ecsServiceResourceId(props.cluster.name, service.name),
      minCapacity: 0,
      maxCapacity: props.sizing.max,
      tags: props.prewarmed ? { [PREWARM_TAG]: 'true' } : undefined,
      lifecycle: { ignoreChanges: ['min_capacity'] },
    });
    const { scaling } = props;
    new AppautoscalingPolicy(this, 'scaling-policy', {
      name: `${name}-target-tracking`,
      policyType: 'TargetTrackingScaling',
      serviceNamespace: target.serviceNamespace,
      scalableDimension: target.scalableDimension,
      resourceId: target.resourceId,
      targetTrackingScalingPolicyConfiguration: {
        // Scale out within a minute of a surge; scale in slowly, an onsale comes in waves.
        scaleOutCooldown: 60,
        scaleInCooldown: 300,
        ...(scaling.kind === 'requests'
          ? {
              targetValue: scaling.requestsPerTaskPerMinute,
              predefinedMetricSpecification: {
                predefinedMetricType: 'ALBRequestCountPerTarget',
                resourceLabel: scaling.resourceLabel,
              },
            }
          : {
              targetValue: scaling.metric.target,
              customizedMetricSpecification: {
                namespace: scaling.metric.namespace,
                metricName: scaling.metric.metricName,
                statistic: 'Maximum',
                dimensions: Object.entries(scaling.metric.dimensions).map(([dimension, value]) => ({
                  name: dimension,
                  value,
                })),
              },
            }),
      },
    });
  }
}

/**
 * The tasks an operator runs by hand from a runbook (`aws ecs run-task`), by role: each task definition's family is
 * `<stack prefix>-<role>` (onsale-<cell>-replay-dead-letters, onsale-cp-evacuate-event).
 */
export const OperatorTaskRole = {
  replayDeadLetters: 'replay-dead-letters',
  evacuateEvent: 'evacuate-event',
} as const;

/** What `aws ecs run-task` needs of a one-off task beyond the cluster and the subnets (the stacks' outputs). */
export interface OperatorTask {
  readonly family: string;
  readonly taskDefinition: string;
  readonly securityGroup: string;
  /** The container to name in `--overrides` (its command or environment). */
  readonly container: string;
}

export function operatorTask(task: FargateService): OperatorTask {
  return {
    family: task.family,
    taskDefinition: task.taskDefinition.arn,
    securityGroup: task.securityGroup.id,
    container: task.containerName,
  };
}

/** The image has node and nothing else to probe with. */
function healthProbe(port: number): string {
  return `fetch('http://127.0.0.1:${port}/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))`;
}
