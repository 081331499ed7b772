import { describe, expect, it } from 'vitest';
import { fromZonedInput, toZonedInput } from '../src/console/zoned-time';

/** The console's datetime-local fields are the venue's wall clock; these are the instants they name. */
describe('a wall-clock time in the venue’s zone', () => {
  const at = (value: string, timeZone: string) => {
    const read = fromZonedInput(value, timeZone);
    return 'at' in read ? read.at.toISOString() : read.problem;
  };

  it('names the instant the zone shows it, in winter and in summer, east and west of UTC', () => {
    expect(at('2030-01-15T20:00', 'Europe/Paris')).toBe('2030-01-15T19:00:00.000Z');
    expect(at('2030-07-15T20:00', 'Europe/Paris')).toBe('2030-07-15T18:00:00.000Z');
    expect(at('2030-07-15T20:00', 'America/New_York')).toBe('2030-07-16T00:00:00.000Z');
    expect(at('2030-07-15T20:00:30', 'Asia/Kolkata')).toBe('2030-07-15T14:30:30.000Z');
    expect(at('2030-07-15T20:00', 'UTC')).toBe('2030-07-15T20:00:00.000Z');
  });

  it('refuses a time the zone skips when its clocks go forward, naming it', () => {
    expect(at('2030-03-31T02:30', 'Europe/Paris')).toBe(
      '2030-03-31 02:30 does not exist in Europe/Paris: the clocks go forward then',
    );
    expect(at('2030-03-10T02:00', 'America/New_York')).toMatch(/does not exist in America\/New_York/);
    // The minutes either side of the gap exist.
    expect(at('2030-03-31T01:59', 'Europe/Paris')).toBe('2030-03-31T00:59:00.000Z');
    expect(at('2030-03-31T03:00', 'Europe/Paris')).toBe('2030-03-31T01:00:00.000Z');
  });

  it('takes the first of the two instants of a time the zone shows twice when its clocks go back', () => {
    expect(at('2030-10-27T02:30', 'Europe/Paris')).toBe('2030-10-27T00:30:00.000Z');
    expect(at('2030-11-03T01:30', 'America/New_York')).toBe('2030-11-03T05:30:00.000Z');
  });

  it('reads back what toZonedInput shows, for every hour of a year with two clock changes', () => {
    for (let t = Date.UTC(2030, 0, 1); t < Date.UTC(2031, 0, 1); t += 3_600_000) {
      const shown = toZonedInput(new Date(t), 'Europe/Paris');
      const read = fromZonedInput(shown, 'Europe/Paris');
      expect(toZonedInput('at' in read ? read.at : new Date(Number.NaN), 'Europe/Paris'), shown).toBe(shown);
    }
  });

  it('says what is wrong with a value that is no date and time, and throws for an unknown zone', () => {
    expect(at('', 'UTC')).toBe('a date and time is required');
    expect(at('soon', 'UTC')).toBe('not a date and time');
    expect(at('2030-02-30T20:00', 'UTC')).toBe('not a date and time');
    expect(at('2030-01-01T24:00', 'UTC')).toBe('not a date and time');
    expect(() => fromZonedInput('2030-01-01T20:00', 'Mars/Olympus')).toThrow(RangeError);
  });
});
