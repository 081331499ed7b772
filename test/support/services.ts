import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type PlatformServices, servicesFrom } from '../../scripts/local-platform/services';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Where the project's own services listen: the environment, else what `scripts/services up` wrote. */
export function serviceEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  const file = resolve(repoRoot, '.data/services.env');
  if (existsSync(file)) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const m = /^export ([A-Z0-9_]+)=(.*)$/.exec(line.trim());
      if (m) env[m[1]!] = m[2]!.replace(/^['"]|['"]$/g, '');
    }
  }
  for (const k of Object.keys(env)) if (process.env[k]) env[k] = process.env[k]!;
  if (!env.ONSALE_PG_URL) throw new Error('services are not up: run `bash scripts/services up` first');
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
