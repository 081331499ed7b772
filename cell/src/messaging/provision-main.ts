import { kafkaSecurity } from '@onsale/aws-auth';
import { createLogger, parseEnv } from '@onsale/contracts';
import { provisionTopics } from '@onsale/messaging/kafka-broker';
import { CellProvisionConfig } from '../config';
import { cellTopicSpecs } from './topology';

const config = parseEnv(CellProvisionConfig);
const log = createLogger({ role: 'provision-topics', cellId: config.CELL_ID });
const created = await provisionTopics(
  { brokers: config.KAFKA_BROKERS.split(','), log, security: kafkaSecurity(config) },
  cellTopicSpecs(config.CELL_ID, config.KAFKA_PARTITIONS, config.KAFKA_REPLICATION_FACTOR),
);
log.info('topics provisioned', { created });
