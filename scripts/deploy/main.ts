/**
 * `pnpm infra:deploy <stack> --outputs <file>`: a stack's deploy on ECS, from `terraform output -json` of the stack.
 * `pnpm infra:deploy <stack> --local [...]`: the same plan (the synthesized stack's `deploy` output) on this machine.
 * Deploy tasks first, each to exit 0, then the services (runbooks/deploy-cell.md).
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../local-platform/process';
import { AwsEcsSteps } from './aws-ecs';
import { LocalSteps, localValues } from './local';
import { type DeployPlan, DeployTaskFailed, deploy, planFromOutputs } from './plan';

const { positionals, values: flags } = parseArgs({
  allowPositionals: true,
  options: {
    outputs: { type: 'string' },
    region: { type: 'string' },
    local: { type: 'boolean', default: false },
    'cell-id': { type: 'string' },
    'database-url': { type: 'string' },
    'kafka-brokers': { type: 'string' },
    'redis-url': { type: 'string' },
    'stop-when-ready': { type: 'boolean', default: false },
  },
});
const [stack] = positionals;
const usage = 'usage: pnpm infra:deploy <stack> (--outputs <terraform output -json file> [--region R] | --local ...)';
if (!stack || (!flags.outputs && !flags.local)) {
  console.error(usage);
  process.exit(2);
}
const report = (line: string) => console.log(`[deploy ${stack}] ${line}`);

/** The synthesized stack's plan (`pnpm --filter @onsale/infra synth`): names, processes and order, no ids. */
function synthesizedPlan(name: string): DeployPlan {
  const file = resolve(repoRoot, 'infra/cdktf/cdktf.out/stacks', name, 'cdk.tf.json');
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`pnpm --filter @onsale/infra synth\` first`);
  const json = JSON.parse(readFileSync(file, 'utf8')) as { output?: { deploy?: { value: unknown } } };
  return planFromOutputs(json.output);
}

async function main(name: string): Promise<void> {
  if (flags.outputs) {
    const plan = planFromOutputs(JSON.parse(readFileSync(flags.outputs, 'utf8')));
    const region = flags.region ?? process.env.AWS_REGION;
    if (!region) throw new Error('--region (or AWS_REGION) is required: the region the stack is in');
    const cluster = plan.cluster.split('/').pop() ?? plan.cluster;
    await deploy(plan, new AwsEcsSteps({ region, plan, logPrefix: `/${cluster}` }), report);
    report('done: every deploy task exited 0 and every service is stable');
    return;
  }

  const plan = synthesizedPlan(name);
  const cellId = flags['cell-id'] ?? /^cell-(.+?)(-dr)?$/.exec(name)?.[1];
  const overrides: Record<string, string> = {};
  if (cellId) overrides.CELL_ID = cellId;
  if (flags['database-url']) overrides[cellId ? 'DATABASE_URL' : 'DATABASE_URL_CONTROL_PLANE'] = flags['database-url'];
  if (flags['kafka-brokers']) overrides.KAFKA_BROKERS = flags['kafka-brokers'];
  if (flags['redis-url']) overrides.REDIS_URL = flags['redis-url'];
  const steps = new LocalSteps({
    values: await localValues(process.env, overrides),
    logDir: resolve(repoRoot, '.data/deploy', name),
    report,
  });
  const stopAll = async () => {
    await steps.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stopAll());
  process.on('SIGTERM', () => void stopAll());
  await deploy(plan, steps, report).catch(async (err) => {
    await steps.stop();
    throw err;
  });
  for (const [service, url] of Object.entries(steps.readinessUrls()))
    report(`${service} ready at ${url ?? '(no listener)'}`);
  if (flags['stop-when-ready']) await stopAll();
  report('done: the services keep running here until Ctrl-C');
}

await main(stack).catch((err: unknown) => {
  console.error(err instanceof DeployTaskFailed ? err.message : err);
  process.exit(1);
});
