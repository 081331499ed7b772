/**
 * `pnpm capacity [onsale.json] [--example eras|stararena|small] [--report bench.json] [--json]`: the capacity plan
 * for an onsale, from the CPU per request the last `pnpm bench:all` measured here (see README "Capacity planning").
 * `pnpm capacity --check` runs the small example through the local platform and prints prediction and measurement
 * side by side (check.ts).
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { lastReportFile, MissingFigures, readFigures } from './figures';
import { manifestFragment, plan } from './model';
import { EXAMPLES_DIR, loadOnsale } from './onsale';
import { printPlan } from './print';

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      example: { type: 'string' },
      report: { type: 'string' },
      json: { type: 'boolean', default: false },
      check: { type: 'boolean', default: false },
    },
  });
  if (values.check) {
    const { runCheck } = await import('./check');
    process.exitCode = await runCheck({ report: values.report });
    return;
  }
  const file = values.example ? resolve(EXAMPLES_DIR, `${values.example}.json`) : positionals[0];
  if (!file) throw new Error('give an onsale file, or --example eras|stararena|small');
  const onsale = loadOnsale(file);
  const figures = readFigures(values.report ?? lastReportFile());
  const p = plan(onsale, figures);
  process.stdout.write(
    values.json
      ? `${JSON.stringify({ plan: p, manifest: manifestFragment(p, onsale.region) }, null, 2)}\n`
      : `${printPlan(p, onsale.region)}\n`,
  );
}

main().catch((err) => {
  console.error(`[capacity] ${err instanceof MissingFigures ? '' : 'error: '}${(err as Error).message}`);
  process.exit(1);
});
