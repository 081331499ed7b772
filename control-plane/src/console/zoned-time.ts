/** Wall-clock times in a venue's time zone, for showing and typing onsale times as the promoter thinks of them. */

import type { FieldIssue } from '@onsale/contracts';

const parts = (d: Date, timeZone: string) => {
  const f = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  const p = Object.fromEntries(f.formatToParts(d).map((x) => [x.type, x.value]));
  return p as Record<'year' | 'month' | 'day' | 'hour' | 'minute' | 'second', string>;
};

/** How far the zone's wall clock is ahead of UTC at instant `d`, in ms. */
function offsetMs(d: Date, timeZone: string) {
  const p = parts(d, timeZone);
  const asUtc = Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute, +p.second);
  return asUtc - Math.floor(d.getTime() / 1000) * 1000;
}

/** `YYYY-MM-DDTHH:mm` (a datetime-local input's value) as the zone's wall clock at `d`. */
export function toZonedInput(d: Date, timeZone: string): string {
  const p = parts(d, timeZone);
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}`;
}

const HALF_DAY_MS = 12 * 3_600_000;

/**
 * The instant a datetime-local value names in `timeZone`, or why it names none: not such a value, or a wall-clock
 * time the zone skips when its clocks go forward (02:30 on a spring-forward night in Paris). A time the zone shows
 * twice, when its clocks go back, is the first of the two, as calendars take it. Throws a RangeError for an unknown
 * zone.
 */
export function fromZonedInput(value: string, timeZone: string): { at: Date } | { problem: string } {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value.trim());
  if (!m) return { problem: value.trim() ? 'not a date and time' : 'a date and time is required' };
  const fields = m.slice(1, 7).map((x) => Number(x ?? 0)) as [number, number, number, number, number, number];
  const [year, month, day, hour, minute, second] = fields;
  const wall = Date.UTC(year, month - 1, day, hour, minute, second);
  // Date.UTC rolls an impossible field over (30 February is 2 March, hour 25 the next day): that is not a value typed.
  const back = new Date(wall);
  const same = [
    back.getUTCFullYear(),
    back.getUTCMonth() + 1,
    back.getUTCDate(),
    back.getUTCHours(),
    back.getUTCMinutes(),
    back.getUTCSeconds(),
  ].every((v, i) => v === fields[i]);
  if (!same) return { problem: 'not a date and time' };
  // The zone's offsets half a day either side: the instants they give that show this wall clock in the zone (none in
  // a skipped hour, two in a repeated one).
  const offsets = new Set([
    offsetMs(new Date(wall - HALF_DAY_MS), timeZone),
    offsetMs(new Date(wall + HALF_DAY_MS), timeZone),
  ]);
  const instants = [...offsets].map((o) => wall - o).filter((t) => t + offsetMs(new Date(t), timeZone) === wall);
  if (!instants.length)
    return { problem: `${value.trim().replace('T', ' ')} does not exist in ${timeZone}: the clocks go forward then` };
  return { at: new Date(Math.min(...instants)) };
}

/** A form's datetime-local field read in `timeZone`: its instant, or undefined with what is wrong added to `issues`. */
export function zonedField(
  issues: FieldIssue[],
  path: string,
  value: string | undefined,
  timeZone: string,
): Date | undefined {
  const read = fromZonedInput(value ?? '', timeZone);
  if ('at' in read) return read.at;
  issues.push({ path, message: read.problem });
}

export function formatInZone(d: Date | null, timeZone: string): string {
  if (!d) return '—';
  return new Intl.DateTimeFormat('en-GB', {
    timeZone,
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'short',
  }).format(d);
}
