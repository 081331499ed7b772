import { sql } from 'drizzle-orm';

/**
 * What the buyer pays for a seat (`s` seats, `t` its price tier, left-joined): seat_price
 * (sql/functions/seat_price.sql), the tier's price plus its fee when fees are added; a seat loaded without a
 * declared tier keeps its own price. The order's amount is the sum, computed in the database and never taken
 * from the request.
 */
export const seatPrice = sql.raw('seat_price(t.price, t.fee, t.fees_included, s.price)');

/** What the buyer pays for a general-admission place (`t` its area's tier, joined): the same function, no own price. */
export const areaPrice = sql.raw('seat_price(t.price, t.fee, t.fees_included, NULL)');
