import { createLogger, parseEnv } from '@onsale/contracts';
import { z } from 'zod';
import { provisionTopics } from './kafka-broker';
import { cellTopicSpecs } from './topology';

const config = parseEnv(
  z.object({
    CELL_ID: z.string().min(1),
    KAFKA_BROKERS: z.string().min(1),
    KAFKA_PARTITIONS: z.coerce.number().int().min(1).max(256).default(6),
    KAFKA_REPLICATION_FACTOR: z.coerce.number().int().min(1).max(5).default(1),
  }),
);
const log = createLogger({ role: 'provision-topics', cellId: config.CELL_ID });
const created = await provisionTopics(
  { brokers: config.KAFKA_BROKERS.split(','), log },
  cellTopicSpecs(config.CELL_ID, config.KAFKA_PARTITIONS, config.KAFKA_REPLICATION_FACTOR),
);
log.info('topics provisioned', { created });
