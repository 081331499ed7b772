import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoadPlatform, startLoadPlatform } from '../local/platform';
import { writeReport } from '../local/report';
import { REPORTS } from '../local/run';
import { runScenario } from '../local/scenarios';
import { arrivalTimes, SCENARIOS, type ScenarioName, stagesFor, totalArrivals } from '../scenarios/definition';

describe('the one definition of the scenarios', () => {
  it('offers the arrivals its stages integrate to, in time order', () => {
    const stages = [
      { target: 100, seconds: 2 },
      { target: 100, seconds: 3 },
      { target: 0, seconds: 1 },
    ];
    const times = arrivalTimes(stages);
    expect(Math.abs(times.length - totalArrivals(stages))).toBeLessThanOrEqual(1);
    expect(times.every((t, i) => i === 0 || t >= times[i - 1]!)).toBe(true);
    expect(times.at(-1)).toBeLessThan(6_000);
  });

  it('scales the full figures down to this machine and CI in rate and time, keeping the shape', () => {
    for (const scenario of Object.values(SCENARIOS)) {
      const full = stagesFor(scenario, 'full');
      const local = stagesFor(scenario, 'local');
      const short = stagesFor(scenario, 'short');
      expect(local).toHaveLength(full.length);
      expect(short.reduce((s, st) => s + st.seconds, 0)).toBeLessThanOrEqual(scenario.short.maxSeconds + full.length);
      expect(Math.max(...short.map((s) => s.target))).toBeLessThan(Math.max(...full.map((s) => s.target)));
    }
    expect(stagesFor(SCENARIOS.stampede, 'full')[1]!.target).toBe(10_000);
  });
});

describe('each scenario in its short form against a platform of its own', () => {
  let platform: LoadPlatform;
  beforeAll(async () => {
    platform = await startLoadPlatform();
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it.each(Object.keys(SCENARIOS) as ScenarioName[])(
    '%s writes its report with every threshold evaluated',
    async (name) => {
      const report = await runScenario(platform, name, 'short');
      const files = writeReport(report, REPORTS);
      expect(existsSync(files.json)).toBe(true);
      const written = JSON.parse(readFileSync(files.json, 'utf8'));
      expect(written.scenario).toBe(name);
      expect(written.summary.all.requests).toBeGreaterThan(0);
      expect(written.thresholds.map((t: { name: string }) => t.name)).toEqual([
        'p95 latency',
        'p99 latency',
        'unexpected answers',
        'dropped arrivals',
      ]);
      for (const check of [...written.thresholds, ...written.invariants]) expect(typeof check.ok).toBe('boolean');
      // Correctness is not a matter of speed: the ledger's invariants hold even in a slow run.
      for (const check of written.invariants) expect(check, check.name).toMatchObject({ ok: true });
      const html = readFileSync(files.html, 'utf8');
      expect(html).toContain('<svg');
      expect(html).toContain('Latency over time');
      expect(html).toContain('Throughput');
      expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org)/);
    },
  );
});
