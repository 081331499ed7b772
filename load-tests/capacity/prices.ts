/**
 * The AWS prices the capacity plan multiplies by: on-demand, Linux, us-east-1 / us-east-2 (the same list price in
 * both; eu-west-1 is about 5-12 % higher, service by service). Every price the model uses is here and nowhere else.
 *
 * Source: the public pricing pages named beside each block, as their list prices stood when this file was written
 * (2026-12-04). This machine cannot reach aws.amazon.com, so they were not re-read on that day: they are
 * assumptions to check at the source (or with the AWS Pricing Calculator) before a plan's cost is quoted to anyone.
 */
export const PRICES = {
  asOf: '2026-12-04',
  region: 'us-east-1 / us-east-2',
  /** https://aws.amazon.com/fargate/pricing/ (Linux/ARM, Graviton: the images are built for arm64 and x86). */
  fargate: { vcpuHour: 0.03238, gbHour: 0.00356 },
  /**
   * https://aws.amazon.com/rds/aurora/pricing/ (Aurora PostgreSQL, Standard configuration, r7g instances); storage
   * $0.10 per GB-month and I/O $0.20 per million requests are not counted (small beside instances at these rates).
   */
  auroraPostgres: {
    'db.r7g.large': { vcpu: 2, memoryGiB: 16, hour: 0.276 },
    'db.r7g.xlarge': { vcpu: 4, memoryGiB: 32, hour: 0.552 },
    'db.r7g.2xlarge': { vcpu: 8, memoryGiB: 64, hour: 1.104 },
    'db.r7g.4xlarge': { vcpu: 16, memoryGiB: 128, hour: 2.208 },
    'db.r7g.8xlarge': { vcpu: 32, memoryGiB: 256, hour: 4.416 },
    'db.r7g.12xlarge': { vcpu: 48, memoryGiB: 384, hour: 6.624 },
    'db.r7g.16xlarge': { vcpu: 64, memoryGiB: 512, hour: 8.832 },
  },
  /** https://aws.amazon.com/elasticache/pricing/ (Redis OSS / Valkey node-based, r7g). */
  elasticache: {
    'cache.r7g.large': { vcpu: 2, memoryGiB: 13.07, hour: 0.219 },
    'cache.r7g.xlarge': { vcpu: 4, memoryGiB: 26.32, hour: 0.437 },
    'cache.r7g.2xlarge': { vcpu: 8, memoryGiB: 52.82, hour: 0.873 },
    'cache.r7g.4xlarge': { vcpu: 16, memoryGiB: 105.81, hour: 1.745 },
  },
  /** https://aws.amazon.com/msk/pricing/ (provisioned brokers, m7g); storage $0.10 per GB-month. */
  msk: {
    brokers: {
      'kafka.m7g.large': { vcpu: 2, hour: 0.204 },
      'kafka.m7g.xlarge': { vcpu: 4, hour: 0.408 },
      'kafka.m7g.2xlarge': { vcpu: 8, hour: 0.816 },
      'kafka.m7g.4xlarge': { vcpu: 16, hour: 1.632 },
    },
    storageGbMonth: 0.1,
  },
  /** https://aws.amazon.com/cloudfront/pricing/ (HTTPS requests, United States and Europe). */
  cloudfront: { httpsPer10k: 0.01 },
  /** https://aws.amazon.com/elasticloadbalancing/pricing/ (Application Load Balancer; one LCU is 1,000 rule evaluations/s among others). */
  alb: { hour: 0.0225, lcuHour: 0.008, requestsPerSecondPerLcu: 1_000 },
  hoursPerMonth: 730,
} as const;

export type Prices = typeof PRICES;
export type DatabaseClass = keyof Prices['auroraPostgres'];
export type CacheNode = keyof Prices['elasticache'];
export type BrokerType = keyof Prices['msk']['brokers'];
