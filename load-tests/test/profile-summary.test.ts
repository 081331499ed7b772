import { describe, expect, it } from 'vitest';
import { owner, summarize } from '../../scripts/bench/profile-summary';

describe('profile summary', () => {
  it('names the package under pnpm’s store, the scoped package, and the platform’s own folder', () => {
    expect(owner('node_modules/.pnpm/pg@8.16.3/node_modules/pg/lib/client.js')).toBe('pg');
    expect(owner('node_modules/.pnpm/@hono+node-server@1.19.5/node_modules/@hono/node-server/dist/index.mjs')).toBe(
      '@hono/node-server',
    );
    expect(owner('cell/src/holds/place-hold.ts')).toBe('cell/src/holds');
  });

  it('adds each sample’s time to its own frame’s owner, idle and GC apart', () => {
    const frame = (id: number, functionName: string, url: string, lineNumber = 0) => ({
      id,
      callFrame: { functionName, url, lineNumber },
    });
    const profile = {
      nodes: [
        frame(1, '(idle)', ''),
        frame(2, 'query', 'file:///b.mjs', 10),
        frame(3, 'placeHold', 'file:///b.mjs', 90),
        frame(4, '(garbage collector)', ''),
      ],
      samples: [1, 2, 2, 3, 4],
      timeDeltas: [5_000, 1_000, 2_000, 4_000, 500],
    };
    const moduleOf = (_url: string, line: number) =>
      line < 50 ? 'node_modules/.pnpm/pg@8/node_modules/pg/lib/client.js' : 'cell/src/holds/place-hold.ts';
    const s = summarize(profile, moduleOf);
    expect(s.totalMs).toBe(12.5);
    expect(Object.fromEntries(s.groups.map((g) => [g.name, g.ms]))).toEqual({
      '(idle)': 5,
      'cell/src/holds': 4,
      pg: 3,
      '(garbage collector)': 0.5,
    });
    expect(s.functions[1]).toMatchObject({ name: 'placeHold  [cell/src/holds]', ms: 4 });
  });
});
