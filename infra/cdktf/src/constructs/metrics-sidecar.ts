import { METRIC_DIMENSION_SETS } from '../metrics';
import type { Statement } from './iam';

/** The container name of the collector; every other container of a task is the application's. */
export const METRICS_SIDECAR_NAME = 'metrics';

/**
 * AWS Distro for OpenTelemetry's collector, pinned. It reads its configuration from AOT_CONFIG_CONTENT.
 * Pin a digest when the image is mirrored into the account's ECR.
 */
export const METRICS_SIDECAR_IMAGE = 'public.ecr.aws/aws-observability/aws-otel-collector:v0.40.0';

export interface MetricsSidecarProps {
  /** The CloudWatch namespace the stack's metrics land in. */
  readonly namespace: string;
  /** Where the process answers GET /metrics inside the task (its HTTP or health port). */
  readonly port: number;
  readonly region: string;
  /** The service's own log group: the embedded-metric-format records go to a `metrics/` stream in it. */
  readonly logGroupName: string;
  readonly logGroupArn: string;
}

/**
 * The collector's configuration: scrape the process's own /metrics every 15 s and write every `onsale_`
 * series as CloudWatch embedded metric format, names unchanged, the `cell` label (and `group` or `outcome`
 * where a series has it) as dimensions. Event, route and reason labels are not dimensions, which keeps
 * CloudWatch's metric count per cell bounded.
 */
export function metricsSidecarConfig(props: MetricsSidecarProps): string {
  return JSON.stringify({
    receivers: {
      prometheus: {
        config: {
          global: { scrape_interval: '15s', scrape_timeout: '10s' },
          scrape_configs: [
            {
              job_name: 'onsale',
              metrics_path: '/metrics',
              static_configs: [{ targets: [`127.0.0.1:${props.port}`] }],
            },
          ],
        },
      },
    },
    processors: { batch: { timeout: '10s' } },
    exporters: {
      awsemf: {
        namespace: props.namespace,
        region: props.region,
        log_group_name: props.logGroupName,
        log_stream_name: 'metrics/{TaskId}',
        dimension_rollup_option: 'NoDimensionRollup',
        metric_declarations: [{ dimensions: METRIC_DIMENSION_SETS, metric_name_selectors: ['^onsale_'] }],
      },
    },
    service: { pipelines: { metrics: { receivers: ['prometheus'], processors: ['batch'], exporters: ['awsemf'] } } },
  });
}

/** The collector's container; not essential, so a collector failure never stops the process. */
export function metricsSidecarContainer(props: MetricsSidecarProps, logStreamPrefix: string) {
  return {
    name: METRICS_SIDECAR_NAME,
    image: METRICS_SIDECAR_IMAGE,
    essential: false,
    environment: [{ name: 'AOT_CONFIG_CONTENT', value: metricsSidecarConfig(props) }],
    readonlyRootFilesystem: true,
    logConfiguration: {
      logDriver: 'awslogs',
      options: {
        'awslogs-group': props.logGroupName,
        'awslogs-region': props.region,
        'awslogs-stream-prefix': logStreamPrefix,
        mode: 'non-blocking',
      },
    },
  };
}

/** The task role writes the embedded-metric-format records to its own log group and nowhere else. */
export function metricsSidecarStatement(props: MetricsSidecarProps): Statement {
  return {
    sid: 'EmbeddedMetrics',
    actions: ['logs:CreateLogStream', 'logs:PutLogEvents', 'logs:DescribeLogStreams'],
    resources: [props.logGroupArn, `${props.logGroupArn}:log-stream:*`],
  };
}
