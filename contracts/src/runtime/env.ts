import type { z } from 'zod';
import { initTracing } from './tracing';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Parses a process's environment once, at start. A bad or missing variable stops the
 * process with a message naming it, instead of failing later on a request.
 */
export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`);
  throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
}

/**
 * A process's configuration, or its end: a bad variable is the one error no restart can fix,
 * so the process says which variables are wrong in one log line and exits 1, no stack trace.
 */
export function configOrExit<S extends z.ZodType>(role: string, schema: S): z.infer<S> {
  try {
    const config = parseEnv(schema);
    // Every process starts here, so this is where tracing starts (only with an OTLP endpoint).
    initTracing({ service: role, cellId: (config as { CELL_ID?: string }).CELL_ID });
    return config;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(
      `${JSON.stringify({ time: new Date().toISOString(), level: 'error', msg: 'fatal: cannot start', role, reason: err.message })}\n`,
    );
    process.exit(1);
  }
}
