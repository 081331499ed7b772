import { kafkaSecurity, pgConnection, tolerateConnectionLoss } from '@onsale/aws-auth';
import { CONTROL_PLANE_FACTS_TOPIC, configOrExit, createLogger, onShutdown } from '@onsale/contracts';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { FactRelayConfig } from '../config';
import { createFactRelay } from './relay';

const env = configOrExit('fact-relay', FactRelayConfig);
const log = createLogger({ service: 'control-plane', role: 'fact-relay' }, env.LOG_LEVEL);
const kafka = new Kafka({
  ...kafkaSecurity(env),
  clientId: 'control-plane-fact-relay',
  brokers: env.KAFKA_BROKERS.split(','),
  logLevel: logLevel.NOTHING,
});
const admin = kafka.admin();
await admin.connect();
await admin.createTopics({
  topics: [
    {
      topic: CONTROL_PLANE_FACTS_TOPIC,
      numPartitions: env.FACT_TOPIC_PARTITIONS,
      replicationFactor: env.FACT_TOPIC_REPLICATION,
    },
  ],
});
await admin.disconnect();
const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
await producer.connect();
const pool = tolerateConnectionLoss(new pg.Pool({ ...pgConnection(env.DATABASE_URL_CONTROL_PLANE, env), max: 2 }));
const relay = createFactRelay(pool, producer, log, { batchSize: 500, leaseMs: 10_000, idleMs: 100 });
const loop = relay.start();
log.info('fact relay started', { topic: CONTROL_PLANE_FACTS_TOPIC });
onShutdown(log, async () => {
  await loop.stop();
  await producer.disconnect();
  await pool.end();
});
