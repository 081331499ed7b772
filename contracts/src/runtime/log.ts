import { activeTraceIds } from './tracing';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
type Level = LogLevel;
const rank: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** Field names whose values never reach a log line, whatever the caller passes. */
const SECRET_FIELD = /secret|token|authorization|password|card|signature|cookie/i;

export type LogFields = Record<string, unknown>;
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

export type LogSink = (line: string) => void;
let sink: LogSink = (line) => process.stdout.write(`${line}\n`);

/** Tests capture every line the platform writes (to prove no secret leaks) by swapping the sink. */
export function setLogSink(next: LogSink): LogSink {
  const previous = sink;
  sink = next;
  return previous;
}

function redact(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [k, v] of Object.entries(fields)) {
    if (SECRET_FIELD.test(k)) out[k] = '[redacted]';
    else if (v instanceof Error) out[k] = { name: v.name, message: v.message };
    else out[k] = v;
  }
  return out;
}

/** JSON lines bound to a role and cell; child loggers add request or message context. */
export function createLogger(bound: LogFields, level: Level = (process.env.LOG_LEVEL as Level) ?? 'info'): Logger {
  const min = rank[level] ?? rank.info;
  const write = (lvl: Level, msg: string, fields?: LogFields) => {
    if (rank[lvl] < min) return;
    // The active span's ids, when tracing is on: a log line leads to its trace and back.
    const ids = activeTraceIds();
    sink(
      JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...bound, ...ids, ...redact(fields ?? {}) }),
    );
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (fields) => createLogger({ ...bound, ...redact(fields) }, level),
  };
}
