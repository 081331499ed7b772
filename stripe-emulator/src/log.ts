export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * Log fields are scalars only, so a request body, a PaymentIntent (with its client secret) or
 * a webhook payload cannot be logged by accident.
 */
export type LogFields = Record<string, string | number | boolean | null | undefined>;

export type Logger = (level: LogLevel, message: string, fields?: LogFields) => void;

export const silentLogger: Logger = () => {};

/** One JSON object per line, for the CLI. */
export function jsonLogger(write: (line: string) => void = (line) => process.stdout.write(line)): Logger {
  return (level, message, fields) => {
    write(`${JSON.stringify({ time: new Date().toISOString(), level, message, ...fields })}\n`);
  };
}
