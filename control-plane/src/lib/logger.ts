type Level = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

/** JSON lines on stdout. Callers never pass tokens or secrets; `token`/`authorization` fields are dropped anyway. */
export function createLogger(level: Level, base: Record<string, unknown> = {}): Logger {
  const emit = (l: Level, msg: string, fields?: Record<string, unknown>) => {
    if (order[l] < order[level]) return;
    const { token: _t, authorization: _a, ...safe } = fields ?? {};
    const err = safe.err instanceof Error ? { err: { name: safe.err.name, message: safe.err.message } } : {};
    process.stdout.write(
      `${JSON.stringify({ time: new Date().toISOString(), level: l, msg, ...base, ...safe, ...err })}\n`,
    );
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (f) => createLogger(level, { ...base, ...f }),
  };
}
