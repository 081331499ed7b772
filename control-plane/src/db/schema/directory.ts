import { bigint, integer, pgTable } from 'drizzle-orm/pg-core';
import { tstz } from './columns';

/** One row (id = 1): the version of the directory feed, bumped in the same transaction as any change to it. */
export const directoryMeta = pgTable('directory_meta', {
  id: integer('id').primaryKey(),
  version: bigint('version', { mode: 'number' }).notNull(),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
});
