import { createPool, type KafkaAuthConfig, kafkaSecurity } from '@onsale/aws-auth';
import { CONTROL_PLANE_FACTS_TOPIC, cellTopics, type Logger } from '@onsale/contracts';
import type { Broker } from '@onsale/messaging/broker';
import { createKafkaBroker } from '@onsale/messaging/kafka-broker';
import type { ReportingConfig } from './config';
import { migrateReporting } from './db/migrate';
import { CONTROL_PLANE_SOURCE } from './facts';
import { objectStoreFromConfig } from './s3';
import { createSourceConsumer, type SourceConsumer } from './source-consumer';

/** What the cell registry says a reader needs to reach a cell's brokers. */
interface RegisteredCell {
  id: string;
  region: string;
  kafka_brokers: string | null;
  kafka_auth: KafkaAuthConfig['KAFKA_AUTH'];
}

interface Source {
  /** The broker list and sign-in it reads through; a different one in the registry moves it. */
  cluster: string;
  consumer: SourceConsumer;
  running: boolean;
}

/**
 * The reporting consumer: one source consumer (its own consumer group) per registered cell's
 * purchase topic and one for the control plane's facts. Cells share no broker with the control
 * plane or each other, so each cell's topic is read through the brokers its registry entry names
 * (one Broker per broker list and sign-in), and the facts through this process's own
 * KAFKA_BROKERS. The registry is polled, so a cell registered while this runs, or one whose broker
 * list changed (a failover), is picked up; each source starts and runs on its own, so a cell whose
 * topic cannot be read (down, not provisioned yet) is retried without holding up the rest.
 */
export async function startReporter(
  config: ReportingConfig,
  log: Logger,
  hooks: { beforeCommit?: (source: string) => void; onRegistryPoll?: () => void } = {},
) {
  const pool = createPool(config.DATABASE_URL_CONTROL_PLANE, config, { max: 6 });
  await migrateReporting(pool);
  const store = objectStoreFromConfig(config);
  const brokers = new Map<string, Broker>();
  const clientFor = (list: string, auth: KafkaAuthConfig) => {
    const signIn = auth.KAFKA_AUTH === 'aws-msk-iam' ? `${auth.KAFKA_AUTH}@${auth.AWS_REGION}` : auth.KAFKA_AUTH;
    const cluster = `${list} (${signIn})`;
    let broker = brokers.get(cluster);
    if (!broker) {
      broker = createKafkaBroker({
        brokers: list.split(','),
        clientId: 'reporting',
        log,
        security: kafkaSecurity(auth),
      });
      brokers.set(cluster, broker);
    }
    return { cluster, broker };
  };
  /** Started or starting, by source. */
  const sources = new Map<string, Source>();
  /** Cells already warned about for having no brokers in the registry (once each, not every poll). */
  const unreachable = new Set<string>();
  let stopped = false;

  const launch = (source: string, topic: string, client: { cluster: string; broker: Broker }) => {
    const consumer = createSourceConsumer({
      broker: client.broker,
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
    const entry: Source = { cluster: client.cluster, consumer, running: false };
    sources.set(source, entry);
    consumer
      .start()
      .then(async () => {
        if (stopped || sources.get(source) !== entry) return consumer.stop();
        entry.running = true;
        log.info('reporting source started', { source, topic, cluster: client.cluster });
      })
      .catch(async (err) => {
        log.warn('reporting source not readable yet; retrying at the next registry poll', {
          source,
          cluster: client.cluster,
          err,
        });
        await consumer.stop().catch(() => {});
        // Only once it has left: the next poll may start the source again in the same group.
        if (sources.get(source) === entry) sources.delete(source);
      });
  };

  /** Reads the source through `client`, moving it there from another cluster once its start has settled. */
  const ensure = async (source: string, topic: string, client: { cluster: string; broker: Broker }) => {
    const current = sources.get(source);
    if (current?.cluster === client.cluster) return;
    if (current) {
      if (!current.running) return;
      sources.delete(source);
      log.info('reporting source moves to the broker list in the registry', {
        source,
        from: current.cluster,
        to: client.cluster,
      });
      await current.consumer.stop();
    }
    launch(source, topic, client);
  };

  const poll = async () => {
    const cells = await pool.query<RegisteredCell>(
      'SELECT id, region, kafka_brokers, kafka_auth FROM cells ORDER BY id',
    );
    for (const cell of cells.rows) {
      if (!cell.kafka_brokers) {
        // Never the control plane's brokers instead: no cell topic is there, and reading nothing looks like no sales.
        if (!unreachable.has(cell.id)) {
          log.warn('cell has no broker list in the registry; not reading its sales until it has one', {
            cellId: cell.id,
          });
          unreachable.add(cell.id);
        }
        continue;
      }
      unreachable.delete(cell.id);
      // A cell's MSK cluster lives in the cell's region, so its IAM token is signed for that region.
      const client = clientFor(cell.kafka_brokers, { KAFKA_AUTH: cell.kafka_auth, AWS_REGION: cell.region });
      await ensure(cell.id, cellTopics(cell.id).purchase, client);
    }
    hooks.onRegistryPoll?.();
  };
  let polling: Promise<void> | null = null;
  const pollOnce = () => {
    polling ??= poll().finally(() => {
      polling = null;
    });
    return polling;
  };

  launch(CONTROL_PLANE_SOURCE, CONTROL_PLANE_FACTS_TOPIC, clientFor(config.KAFKA_BROKERS, config));
  await pollOnce();
  const timer = setInterval(() => {
    pollOnce().catch((err) => log.warn('cell registry poll failed', { err }));
  }, config.REGISTRY_POLL_MS);

  return {
    pool,
    store,
    sources: () => [...sources].filter(([, s]) => s.running).map(([source]) => source),
    async stop() {
      stopped = true;
      clearInterval(timer);
      await polling?.catch(() => {});
      await Promise.all([...sources.values()].filter((s) => s.running).map((s) => s.consumer.stop()));
      sources.clear();
      await Promise.all([...brokers.values()].map((b) => b.close()));
      await pool.end();
    },
  };
}
