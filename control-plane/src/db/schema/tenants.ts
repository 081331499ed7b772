import type { InferSelectModel } from 'drizzle-orm';
import { pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamps } from './columns';

/** A promoter organisation. Promoter users belong to one tenant; their role travels in their identity token. */
export const tenants = pgTable('tenants', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  ...timestamps,
});
export type Tenant = InferSelectModel<typeof tenants>;
