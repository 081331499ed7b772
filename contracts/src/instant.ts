import { z } from 'zod';

const DATE_PART = /^(\d{4})-(\d{2})-(\d{2})T/;

/** JavaScript's Date rolls 2026-02-30 over into March; a date that does not exist is refused instead. */
function isCalendarDate(s: string) {
  const [, y, m, d] = DATE_PART.exec(s) ?? [];
  const lastDay = new Date(0);
  lastDay.setUTCFullYear(Number(y), Number(m), 0);
  return Number(d) >= 1 && Number(d) <= lastDay.getUTCDate();
}

/** An ISO 8601 instant with an offset, on a day that exists: what every API's date-time input accepts. */
export const Instant = z.string().datetime({ offset: true }).refine(isCalendarDate, { message: 'not a calendar date' });
