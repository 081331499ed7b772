import { desc } from 'drizzle-orm';
import type { Services } from '../context';
import { tenants } from '../db/schema';
import { dbOf } from '../db/tx';

export async function createTenant({ ctx, input }: { ctx: Services; input: { name: string } }) {
  const [row] = await dbOf(ctx).insert(tenants).values({ name: input.name }).returning();
  ctx.log.info('tenant created', { tenantId: row?.id });
  return row!;
}

export async function listTenants({ ctx }: { ctx: Services }) {
  return dbOf(ctx).select().from(tenants).orderBy(desc(tenants.createdAt));
}
