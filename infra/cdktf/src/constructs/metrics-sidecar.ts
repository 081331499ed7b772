import { METRIC_DIMENSION_SETS } from '../metrics';
import type { Statement } from './iam';

/** The container name of the collector (metrics and traces); every other container of a task is the application's. */
export const METRICS_SIDECAR_NAME = 'metrics';

/** Where the collector takes the process's spans, OTLP over HTTP inside the task (the tasks share localhost). */
export const OTLP_HTTP_PORT = 4318;

/**
 * The share of traces kept, decided once at the root (the router's request, a polling loop's batch) and followed by
 * every later hop through the traceparent, so a kept purchase is whole. 5 % of a stadium onsale's holds is still
 * thousands of complete traces, and stays inside X-Ray's free tier between onsales.
 */
export const TRACE_SAMPLE_RATIO = 0.05;

/** The process's variables that send its spans to the collector beside it (contracts/src/runtime/tracing-config.ts). */
export function tracingEnvironment(serviceName: string): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${OTLP_HTTP_PORT}`,
    OTEL_SERVICE_NAME: serviceName,
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: String(TRACE_SAMPLE_RATIO),
  };
}

/**
 * AWS Distro for OpenTelemetry's collector, pinned. It reads its configuration from AOT_CONFIG_CONTENT.
 * Pin a digest when the image is mirrored into the account's ECR.
 */
export const METRICS_SIDECAR_IMAGE = 'public.ecr.aws/aws-observability/aws-otel-collector:v0.40.0';

export interface MetricsSidecarProps {
  /** The CloudWatch namespace the stack's metrics land in. */
  readonly namespace: string;
  /** Where the process answers GET /metrics inside the task (its health port, else its HTTP port). */
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
 * CloudWatch's metric count per cell bounded. And take the process's spans over OTLP/HTTP on localhost and
 * send them to X-Ray, where the router's, the cells' and the workers' spans of one purchase join by trace id.
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
      otlp: { protocols: { http: { endpoint: `127.0.0.1:${OTLP_HTTP_PORT}` } } },
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
      // W3C trace ids as the processes make them: X-Ray accepts ids without its epoch prefix.
      awsxray: { region: props.region, index_all_attributes: false },
    },
    service: {
      pipelines: {
        metrics: { receivers: ['prometheus'], processors: ['batch'], exporters: ['awsemf'] },
        traces: { receivers: ['otlp'], processors: ['batch'], exporters: ['awsxray'] },
      },
    },
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

/**
 * The task role writes the embedded-metric-format records to its own log group and nowhere else, and the spans to
 * X-Ray, whose segment and sampling actions have no resource to scope to.
 */
export function metricsSidecarStatements(props: MetricsSidecarProps): Statement[] {
  return [
    {
      sid: 'EmbeddedMetrics',
      actions: ['logs:CreateLogStream', 'logs:PutLogEvents', 'logs:DescribeLogStreams'],
      resources: [props.logGroupArn, `${props.logGroupArn}:log-stream:*`],
    },
    {
      sid: 'Traces',
      actions: [
        'xray:PutTraceSegments',
        'xray:PutTelemetryRecords',
        'xray:GetSamplingRules',
        'xray:GetSamplingTargets',
      ],
      resources: ['*'],
    },
  ];
}
