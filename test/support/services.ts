import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type PlatformServices, servicesFrom } from '../../scripts/local-platform/services';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Where the project's own services listen: the environment, else what `scripts/services up` wrote. */
export function serviceEnv(): Record<string, string> {
  const file = resolve(repoRoot, '.data/services.env');
  const env = existsSync(file) ? readServicesEnv(file) : {};
  // The environment wins for every variable the file names, and stands in for the file where there is none (a git
  // worktree sourcing the services.env of the checkout that started the services).
  for (const [k, v] of Object.entries(process.env)) if (v && (k in env || !existsSync(file))) env[k] = v;
  if (!env.ONSALE_PG_URL) throw new Error('services are not up: run `bash scripts/services up` first');
  return env;
}

/** The variables a services.env file exports (scripts/services writes one beside the stores it starts). */
export function readServicesEnv(file: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^export ([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) env[m[1]!] = m[2]!.replace(/^['"]|['"]$/g, '');
  }
  return env;
}

/** The services as the platform launcher takes them, from `serviceEnv()`. */
export function platformServices(): PlatformServices {
  const env = serviceEnv();
  return servicesFrom((name) => {
    const value = env[name];
    if (!value) throw new Error(`${name} is not in .data/services.env: run \`bash scripts/services up\``);
    return value;
  });
}
