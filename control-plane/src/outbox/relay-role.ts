import { createPool, kafkaSecurity } from '@onsale/aws-auth';
import { CONTROL_PLANE_FACTS_TOPIC, loopHealth } from '@onsale/contracts';
import { createKafkaBroker, provisionTopics } from '@onsale/messaging/kafka-broker';
import type { CONTROL_PLANE_ROLES } from '../runtime/roles';
import type { StartRole } from '../runtime/start';
import { createFactRelay } from './relay';

/** The fact relay: its topic made if missing, then the control plane's outbox published to it. */
export const startFactRelay: StartRole<typeof CONTROL_PLANE_ROLES.factRelay> = async ({
  config,
  log,
  onShutdown,
  readiness,
}) => {
  const kafka = { brokers: config.KAFKA_BROKERS.split(','), log, security: kafkaSecurity(config) };
  await provisionTopics(kafka, [
    {
      topic: CONTROL_PLANE_FACTS_TOPIC,
      partitions: config.FACT_TOPIC_PARTITIONS,
      replicationFactor: config.FACT_TOPIC_REPLICATION,
    },
  ]);
  const pool = createPool(config.DATABASE_URL_CONTROL_PLANE, config, { max: 2 });
  onShutdown(() => pool.end());
  const broker = createKafkaBroker({ ...kafka, clientId: 'control-plane-fact-relay' });
  onShutdown(() => broker.close());
  // An idle relay passes every 100 ms; one whose broker or database is away backs off to 5 s and goes unready.
  const health = loopHealth(15_000);
  readiness('relay', health.probe);
  const loop = createFactRelay(pool, broker, log, {
    batchSize: 500,
    leaseMs: 10_000,
    idleMs: 100,
    onPass: health.succeeded,
  }).start();
  onShutdown(() => loop.stop());
  log.info('fact relay started', { topic: CONTROL_PLANE_FACTS_TOPIC });
};
