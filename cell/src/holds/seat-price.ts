import { sql } from 'drizzle-orm';

/**
 * What the buyer pays for a seat (`s` seats, `t` its price tier, left-joined): the tier's price,
 * plus its fee when fees are added; a seat loaded without a declared tier keeps its own price.
 * The order's amount is the sum, computed here and never taken from the request.
 */
export const seatPrice = sql.raw('coalesce(t.price + CASE WHEN t.fees_included THEN 0 ELSE t.fee END, s.price)');
