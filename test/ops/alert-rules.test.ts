import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/services';

const dir = resolve(repoRoot, 'ops/prometheus');
const names = (file: string, pattern: RegExp) =>
  new Set([...readFileSync(resolve(dir, file), 'utf8').matchAll(pattern)].map((m) => m[1]!));

describe('the alert rules', () => {
  it('pass their promtool unit tests, firing and not firing', () => {
    const out = execFileSync('promtool', ['test', 'rules', 'alerts.test.yml'], { cwd: dir, encoding: 'utf8' });
    expect(out).toContain('SUCCESS');
  });

  it('every alert has a unit test, and every alert links a runbook that exists', () => {
    const alerts = names('alerts.yml', /- alert: (\w+)/g);
    const tested = names('alerts.test.yml', /alertname: (\w+)/g);
    expect(alerts.size).toBeGreaterThanOrEqual(10);
    expect([...alerts].filter((a) => !tested.has(a))).toEqual([]);
    for (const link of names('alerts.yml', /runbook_url: (\S+)/g)) {
      const [file, anchor] = link.split('#');
      const text = readFileSync(resolve(repoRoot, file!), 'utf8');
      if (anchor) expect(text.toLowerCase()).toContain(`## ${anchor}`);
    }
  });
});
