/**
 * Schemathesis against every service's OpenAPI document, on the whole platform started as the e2e
 * tests start it (fresh databases; the waiting room's per-IP limit raised, as every request comes
 * from 127.0.0.1). Credentials are real: a promoter of the demo tenant, an operator, a buyer
 * admitted through the waiting room with an admission token, and the event's real seat ids.
 * test/fuzz/hooks.py (SCHEMATHESIS_HOOKS) puts the real seat ids into hold bodies and real order ids
 * (one placed in the setup, then every 202 the fuzzer gets) into the order routes' paths. The cell's
 * internal routes run last, on their own: they freeze the pinned event as an evacuation would.
 *
 *   node --import tsx test/fuzz/run.ts [--seconds-per-run N] [--only NAME]
 *
 * Exits non-zero on any failure (a 5xx, a response its document does not describe, or any other
 * check of `--checks all`) and prints the number of requests sent per document.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { devToken } from '../../scripts/local-platform/demo';
import { repoRoot } from '../../scripts/local-platform/launch';
import { startTestPlatform } from '../support/platform';
import { shopper } from '../support/shopper';

const { values: args } = parseArgs({
  options: { 'seconds-per-run': { type: 'string', default: '60' }, only: { type: 'string' } },
});
const schemathesis =
  process.env.SCHEMATHESIS_BIN ?? resolve(homedir(), '.cache/onsale/schemathesis-venv/bin/schemathesis');
const outDir = resolve(repoRoot, '.data/fuzz');
mkdirSync(outDir, { recursive: true });

/** One schemathesis run: a document, the headers each group of operations needs, real parameter values. */
interface Run {
  name: string;
  schema: string;
  headers?: Record<string, string>;
  operations?: { pathRegex: string; headers: Record<string, string> }[];
  parameters?: Record<string, string>;
  /** Base URL the document's operations are sent to, when not the one the document is served from. */
  url?: string;
  includePathRegex?: string;
  excludePathRegex?: string;
  /** Extra environment for schemathesis: the hooks (test/fuzz/hooks.py) read real ids from it. */
  env?: Record<string, string>;
}

const toml = (v: unknown): string => JSON.stringify(v);
function config(run: Run) {
  const lines = [
    '[generation]',
    'max-examples = 40',
    '',
    '[phases.stateful]',
    'max-steps = 10',
    '',
    // Schema-valid requests may still break a business rule the schema cannot state (a start in
    // the past, a seat of an unknown tier, a pinned rate without a rate): those are documented
    // 400s, so they count as accepted input rather than as a failure.
    '[checks.positive_data_acceptance]',
    'expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "429"]',
    '',
    // Schema-violating requests must be refused; schemathesis's list of refusals, plus the 413 a body limit answers
    // first when the violation is a body too long for it (each route documents that 413).
    '[checks.negative_data_rejection]',
    'expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"]',
    '',
  ];
  if (run.headers)
    lines.push('[headers]', ...Object.entries(run.headers).map(([k, v]) => `${toml(k)} = ${toml(v)}`), '');
  if (run.parameters)
    lines.push('[parameters]', ...Object.entries(run.parameters).map(([k, v]) => `${toml(k)} = ${toml(v)}`), '');
  for (const op of run.operations ?? []) {
    lines.push('[[operations]]', `include-path-regex = ${toml(op.pathRegex)}`);
    lines.push(
      `headers = { ${Object.entries(op.headers)
        .map(([k, v]) => `${toml(k)} = ${toml(v)}`)
        .join(', ')} }`,
      '',
    );
  }
  return lines.join('\n');
}

function schemathesisRun(run: Run, seconds: number): Promise<{ requests: number; exitCode: number }> {
  const dir = resolve(outDir, run.name);
  mkdirSync(dir, { recursive: true });
  const configFile = resolve(dir, 'schemathesis.toml');
  writeFileSync(configFile, config(run));
  const har = resolve(dir, 'requests.har');
  const argv = [
    '--config-file',
    configFile,
    'run',
    run.schema,
    '--checks',
    'all',
    '--phases',
    'examples,coverage,fuzzing,stateful',
    '--max-time',
    String(seconds),
    '--workers',
    '1',
    '--seed',
    '1',
    '--request-timeout',
    '10',
    '--report',
    'har,junit',
    '--report-har-path',
    har,
    '--report-junit-path',
    resolve(dir, 'junit.xml'),
    ...(run.url ? ['--url', run.url] : []),
    ...(run.includePathRegex ? ['--include-path-regex', run.includePathRegex] : []),
    ...(run.excludePathRegex ? ['--exclude-path-regex', run.excludePathRegex] : []),
  ];
  // Schemathesis closes with pytest-style banners ("=== 2 warnings in 60.00s ==="), which CI would
  // read as a pytest run that executed no test: its report goes to a file, printed only on failure.
  const output = resolve(dir, 'output.log');
  console.log(`\n===== ${run.name}: schemathesis ${argv.join(' ')}`);
  return new Promise((done, fail) => {
    const log = openSync(output, 'w');
    const child = spawn(schemathesis, argv, {
      stdio: ['ignore', log, log],
      env: { ...process.env, ...run.env, NO_COLOR: '1' },
    });
    child.once('error', fail);
    child.once('exit', (code) => {
      closeSync(log);
      const exitCode = code ?? 1;
      if (exitCode !== 0) process.stdout.write(readFileSync(output, 'utf8'));
      const requests = (JSON.parse(readFileSync(har, 'utf8')) as { log: { entries: unknown[] } }).log.entries.length;
      console.log(
        `----- ${run.name}: ${exitCode === 0 ? 'no issues' : `FAILED (exit ${exitCode})`}, report in ${output}`,
      );
      done({ requests, exitCode });
    });
  });
}

const t = await startTestPlatform({ seatsPerEvent: 40, maxReleaseRate: 50 });
let failed = false;
try {
  const { platform, demo } = t;
  const [event] = demo.events;
  if (!event) throw new Error('the demo seeded no event');
  const cellUrl = platform.cellUrl(event.cellId);
  const buyer = shopper(platform, event.eventId, 'fuzz-buyer');
  const admission = await (await buyer).admit();
  const bearer = (await buyer).bearer;
  const availability = async () =>
    ((await (await fetch(`${cellUrl}/events/${event.eventId}/availability`)).json()) as { availableSeatIds: string[] })
      .availableSeatIds;
  // One real order of the fuzz buyer from the start, so the order routes have an id that exists
  // before the fuzzer's own holds add theirs (the hooks collect the order id of every 202).
  const [firstSeat] = await availability();
  if (!firstSeat) throw new Error('the demo event has no available seat');
  const held = await (await buyer).hold([firstSeat], 'fuzz-setup-hold-1');
  if (held.status !== 202) throw new Error(`setup hold: ${held.status} ${await held.text()}`);
  const { orderId } = (await held.json()) as { orderId: string };
  const seatIds = await availability();
  // Real ids reach the generated requests through test/fuzz/hooks.py (SCHEMATHESIS_HOOKS).
  const realIds = {
    SCHEMATHESIS_HOOKS: resolve(repoRoot, 'test/fuzz/hooks.py'),
    FUZZ_SEAT_IDS: seatIds.join(','),
    FUZZ_ORDER_IDS: orderId,
  };
  const operator = await devToken(platform.urls.identity, { kind: 'operator', sub: 'fuzz-operator' });
  const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
  console.log(`fuzzing event ${event.eventId} on ${event.cellId}: ${seatIds.length} seat ids, order ${orderId}`);

  // The cell's buyer routes first, directly and through the router: the control plane's run may pause or
  // cancel the pinned event's sale, and its operator routes may mark the cell down or evacuated.
  const runs: Run[] = [
    {
      name: 'cell',
      schema: `${cellUrl}/openapi.json`,
      headers: { ...auth(bearer), 'X-Admission-Token': admission.token },
      includePathRegex: '^/(?!internal/)',
      parameters: { eventId: event.eventId },
      env: realIds,
    },
    // The buyer routes of the cell's document sent through the router, as buyers reach them.
    {
      name: 'router-cell',
      schema: `${cellUrl}/openapi.json`,
      url: platform.urls.router,
      includePathRegex: '^/events/',
      headers: { ...auth(bearer), 'X-Admission-Token': admission.token },
      parameters: { eventId: event.eventId },
      env: realIds,
    },
    {
      name: 'router',
      schema: `${platform.urls.router}/openapi.json`,
      // Its own /me/orders asks every cell for this buyer's orders.
      headers: auth(bearer),
    },
    {
      name: 'control-plane',
      schema: `${platform.urls.controlPlane}/openapi.json`,
      headers: auth(demo.promoter),
      operations: [
        { pathRegex: '^/operator/', headers: auth(operator) },
        { pathRegex: '^/events/\\{eventId\\}/queue', headers: auth(bearer) },
      ],
      parameters: { eventId: event.eventId },
      // Re-registering the platform's cells at made-up URLs leaves every later call to them a 503 cell_unavailable
      // (the right answer, and a "server error" to the fuzzer): the registry's routes have their own tests.
      excludePathRegex: '^/operator/cells',
    },
    {
      name: 'stripe-emulator',
      schema: `${platform.urls.stripe}/openapi.json`,
      headers: auth(platform.stripeKey),
    },
    { name: 'dev-identity', schema: `${platform.urls.identity}/openapi.json` },
    // Last: these act on the pinned event as the control plane would (freeze it, block seats, load
    // it again), which would turn every later hold into a 503 event_moving.
    {
      name: 'cell-internal',
      schema: `${cellUrl}/openapi.json`,
      includePathRegex: '^/internal/',
      headers: auth(platform.internalToken),
      parameters: { eventId: event.eventId },
      env: realIds,
    },
  ];
  const results: { name: string; requests: number; exitCode: number }[] = [];
  for (const run of runs.filter((r) => !args.only || r.name === args.only || r.name.startsWith(`${args.only}-`)))
    results.push({ name: run.name, ...(await schemathesisRun(run, Number(args['seconds-per-run']))) });

  console.log('\n===== fuzz summary');
  for (const r of results)
    console.log(
      `  ${r.name.padEnd(16)} ${String(r.requests).padStart(7)} requests  ${r.exitCode === 0 ? 'ok' : 'FAILED'}`,
    );
  const total = results.reduce((n, r) => n + r.requests, 0);
  failed = results.some((r) => r.exitCode !== 0);
  console.log(`  ${'total'.padEnd(16)} ${String(total).padStart(7)} requests`);
} catch (err) {
  console.error(err);
  failed = true;
} finally {
  await t.stop();
}
process.exit(failed ? 1 : 0);
