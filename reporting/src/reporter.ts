import { kafkaSecurity, pgConnection } from '@onsale/aws-auth';
import { CONTROL_PLANE_FACTS_TOPIC, cellTopics, type Logger } from '@onsale/contracts';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import type { ReportingConfig } from './config';
import { migrateReporting } from './db/migrate';
import { CONTROL_PLANE_SOURCE } from './facts';
import { objectStoreFromConfig } from './s3';
import { createSourceConsumer, type SourceConsumer } from './source-consumer';

/**
 * The reporting consumer: one source consumer (its own consumer group) per registered cell's
 * purchase topic and one for the control plane's facts. The registry is polled, so a cell
 * registered while this runs is picked up; each source starts and runs on its own, so a cell
 * whose topic cannot be read (down, not provisioned yet) is retried without holding up the rest.
 */
export async function startReporter(
  config: ReportingConfig,
  log: Logger,
  hooks: { beforeCommit?: (source: string) => void } = {},
) {
  const pool = new pg.Pool({ ...pgConnection(config.DATABASE_URL_CONTROL_PLANE, config), max: 6 });
  await migrateReporting(pool);
  const store = objectStoreFromConfig(config);
  const kafka = new Kafka({
    ...kafkaSecurity(config),
    clientId: 'reporting',
    brokers: config.KAFKA_BROKERS.split(','),
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3_000,
    retry: { retries: 3, initialRetryTime: 300, maxRetryTime: 3_000 },
  });
  const running = new Map<string, SourceConsumer>();
  const starting = new Set<string>();
  let stopped = false;

  const launch = (source: string, topic: string) => {
    if (running.has(source) || starting.has(source)) return;
    starting.add(source);
    const c = createSourceConsumer({
      kafka,
      source,
      topic,
      groupId: `${config.REPORTING_GROUP_PREFIX}.${source}`,
      store,
      root: config.REPORTING_PREFIX,
      pool,
      policy: { maxMessages: config.FLUSH_MAX_MESSAGES, maxAgeMs: config.FLUSH_MAX_AGE_MS },
      log,
      beforeCommit: hooks.beforeCommit,
    });
    c.start()
      .then(async () => {
        if (stopped) return c.stop();
        running.set(source, c);
        log.info('reporting source started', { source, topic });
      })
      .catch(async (err) => {
        log.warn('reporting source not readable yet; retrying at the next registry poll', { source, err });
        await c.stop().catch(() => {});
      })
      .finally(() => starting.delete(source));
  };

  const poll = async () => {
    const cells = await pool.query<{ id: string }>('SELECT id FROM cells ORDER BY id');
    for (const { id } of cells.rows) launch(id, cellTopics(id).purchase);
  };

  launch(CONTROL_PLANE_SOURCE, CONTROL_PLANE_FACTS_TOPIC);
  await poll();
  const timer = setInterval(() => {
    poll().catch((err) => log.warn('cell registry poll failed', { err }));
  }, config.REGISTRY_POLL_MS);

  return {
    pool,
    store,
    sources: () => [...running.keys()],
    async stop() {
      stopped = true;
      clearInterval(timer);
      await Promise.all([...running.values()].map((c) => c.stop()));
      running.clear();
      await pool.end();
    },
  };
}
