/** Wall-clock times in a venue's time zone, for showing and typing onsale times as the promoter thinks of them. */

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

/** The instant a datetime-local value names in `timeZone`; null when it is not such a value. */
export function fromZonedInput(value: string, timeZone: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value.trim());
  if (!m) return null;
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
  if (!same) return null;
  // Two passes settle the offset across a daylight-saving change.
  let t = wall - offsetMs(new Date(wall), timeZone);
  t = wall - offsetMs(new Date(t), timeZone);
  return new Date(t);
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
