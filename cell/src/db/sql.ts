import { type SQL, sql } from 'drizzle-orm';

/**
 * A uuid[] bind parameter. Drizzle spreads a bare array into a parenthesised list; `= ANY`
 * needs the array as one parameter so the plan is the same for 1 or 8 seats.
 */
export const uuids = (ids: readonly string[]): SQL => sql`${sql.param(ids)}::uuid[]`;
