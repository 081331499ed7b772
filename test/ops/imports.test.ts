import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importProblems } from '../../scripts/check-imports';
import { repoRoot } from '../support/services';

describe('imports between packages', () => {
  it('the repository has no relative import into another package and no import cycle', () => {
    expect(importProblems(repoRoot)).toEqual({ intoOtherSrc: [], cycles: [] });
  });

  const scratch = mkdtempSync(join(tmpdir(), 'imports-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  const write = (files: Record<string, string>) => {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(scratch, path)), { recursive: true });
      writeFileSync(join(scratch, path), text);
    }
  };

  it("names a relative import into another package's src/ and a run-time cycle, not a type-only one", () => {
    write({
      'pnpm-workspace.yaml': 'packages:\n  - orders\n  - seats\n',
      'orders/src/place.ts': "import { take } from '../../seats/src/take';\nexport const place = take;\n",
      // Into the package's own src from its tests, and into another package's tests: neither is a src/ reach.
      'orders/test/place.test.ts': "import { place } from '../src/place';\nimport '../../seats/test/fixtures';\n",
      'seats/test/fixtures.ts': 'export {};\n',
      'seats/src/take.ts': "import { release } from './release';\nexport const take = () => release;\n",
      'seats/src/release.ts': "import { take } from './take';\nexport const release = () => take;\n",
      'seats/src/kind.ts': "import type { Shape } from './shape';\nexport type Kind = Shape;\n",
      'seats/src/shape.ts': "import { type Kind } from './kind';\nexport type Shape = Kind;\n",
    });
    expect(importProblems(scratch)).toEqual({
      intoOtherSrc: ["orders/src/place.ts: '../../seats/src/take'"],
      cycles: [['seats/src/release.ts', 'seats/src/take.ts', 'seats/src/release.ts']],
    });
  });
});
