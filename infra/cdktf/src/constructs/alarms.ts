import { CloudwatchMetricAlarm } from '@cdktf/provider-aws/lib/cloudwatch-metric-alarm';
import { SnsTopic } from '@cdktf/provider-aws/lib/sns-topic';
import { Construct } from 'constructs';
import { checkovSkip } from '../checkov';

export interface MetricAlarm {
  readonly description: string;
  readonly namespace: string;
  readonly metricName: string;
  readonly dimensions: Record<string, string>;
  /** 'Maximum', 'Sum', 'Average', or a percentile such as 'p99'. */
  readonly statistic: string;
  readonly threshold: number;
  readonly periodSeconds?: number;
  /** Breaching datapoints out of as many consecutive periods. */
  readonly periods?: number;
}

export interface RatioAlarm {
  readonly description: string;
  readonly namespace: string;
  readonly dimensions: Record<string, string>;
  readonly numerator: { readonly metricName: string; readonly statistic: string };
  readonly denominator: { readonly metricName: string; readonly statistic: string };
  readonly threshold: number;
  readonly periodSeconds?: number;
  readonly periods?: number;
}

const PERIOD = 60;

/**
 * A stack's alarms and the topic they page through. Every alarm is "value above threshold"; a signal that
 * stops arriving is not treated as an incident (a quiet cell between onsales has no hold latency).
 */
export class Alarms extends Construct {
  readonly topic: SnsTopic;

  constructor(
    scope: Construct,
    id: string,
    private readonly prefix: string,
  ) {
    super(scope, id);
    // Unencrypted on purpose: alarm notices carry no customer data, and CloudWatch cannot publish to a
    // topic under the AWS-managed SNS key.
    this.topic = new SnsTopic(this, 'topic', { name: `${prefix}-alarms` });
    checkovSkip(this.topic, {
      CKV_AWS_26:
        'CloudWatch cannot publish to a topic under the AWS-managed SNS key, and alarm notices carry no customer data',
    });
  }

  metric(id: string, alarm: MetricAlarm): CloudwatchMetricAlarm {
    const periods = alarm.periods ?? 3;
    const percentile = /^p\d+(\.\d+)?$/.test(alarm.statistic);
    return new CloudwatchMetricAlarm(this, id, {
      ...this.common(id, alarm.description, alarm.threshold, periods),
      namespace: alarm.namespace,
      metricName: alarm.metricName,
      dimensions: alarm.dimensions,
      period: alarm.periodSeconds ?? PERIOD,
      statistic: percentile ? undefined : alarm.statistic,
      extendedStatistic: percentile ? alarm.statistic : undefined,
    });
  }

  ratio(id: string, alarm: RatioAlarm): CloudwatchMetricAlarm {
    const period = alarm.periodSeconds ?? PERIOD;
    const query = (queryId: string, m: { metricName: string; statistic: string }) => ({
      id: queryId,
      returnData: false,
      metric: {
        namespace: alarm.namespace,
        metricName: m.metricName,
        dimensions: alarm.dimensions,
        period,
        stat: m.statistic,
      },
    });
    return new CloudwatchMetricAlarm(this, id, {
      ...this.common(id, alarm.description, alarm.threshold, alarm.periods ?? 3),
      metricQuery: [
        query('numerator', alarm.numerator),
        query('denominator', alarm.denominator),
        // No traffic means no ratio, not a zero-division alarm.
        { id: 'ratio', expression: 'IF(denominator > 0, numerator / denominator, 0)', label: id, returnData: true },
      ],
    });
  }

  private common(id: string, description: string, threshold: number, periods: number) {
    return {
      alarmName: `${this.prefix}-${id}`,
      alarmDescription: description,
      comparisonOperator: 'GreaterThanThreshold',
      threshold,
      evaluationPeriods: periods,
      datapointsToAlarm: periods,
      treatMissingData: 'notBreaching',
      alarmActions: [this.topic.arn],
      okActions: [this.topic.arn],
    };
  }
}
