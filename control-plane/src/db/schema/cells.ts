import type { KafkaAuthConfig } from '@onsale/aws-auth';
import type { InferSelectModel } from 'drizzle-orm';
import { sql } from 'drizzle-orm';
import { check, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamps } from './columns';

export const CELL_STATUSES = ['active', 'draining', 'down', 'evacuated'] as const;
/** How a client authenticates to a cell's brokers: the modes @onsale/aws-auth's kafkaSecurity speaks. */
export const CELL_KAFKA_AUTH_MODES = [
  'plaintext',
  'aws-msk-iam',
] as const satisfies readonly KafkaAuthConfig['KAFKA_AUTH'][];

export const cells = pgTable(
  'cells',
  {
    id: text('id').primaryKey(),
    baseUrl: text('base_url').notNull(),
    region: text('region').notNull(),
    status: text('status', { enum: CELL_STATUSES }).notNull().default('active'),
    /** How many concurrent onsales (events not ended) the cell is sized for; placement divides by it. */
    capacity: integer('capacity').notNull().default(10),
    /** A cell dedicated to one (headline) event takes no other placements. */
    dedicatedEventId: uuid('dedicated_event_id'),
    /**
     * The cell's own Kafka bootstrap brokers (comma-separated host:port), which cross-cell readers such as
     * reporting connect to; null for a cell registered before the registry carried them.
     */
    kafkaBrokers: text('kafka_brokers'),
    kafkaAuth: text('kafka_auth', { enum: CELL_KAFKA_AUTH_MODES }).notNull().default('plaintext'),
    ...timestamps,
  },
  (t) => [
    check('cells_status_check', sql`${t.status} in ('active','draining','down','evacuated')`),
    check('cells_capacity_check', sql`${t.capacity} > 0`),
    check('cells_kafka_auth_check', sql`${t.kafkaAuth} in ('plaintext','aws-msk-iam')`),
  ],
);
export type Cell = InferSelectModel<typeof cells>;
