import { type ErrorBody, type ErrorCode, errorCodes } from '@onsale/contracts';
import type { Context } from 'hono';
import type { RouterEnv } from './env';

export interface ErrorOptions {
  details?: unknown;
  /** Seconds; sent as Retry-After (every 503 the router makes carries one). */
  retryAfter?: number;
}

/** An answer the router makes itself, in the platform's one error body. */
export function errorResponse(c: Context<RouterEnv>, code: ErrorCode, message: string, opts: ErrorOptions = {}) {
  const body: ErrorBody = {
    error: {
      code,
      message,
      requestId: c.get('requestId'),
      ...(opts.details === undefined ? {} : { details: opts.details }),
    },
  };
  if (opts.retryAfter !== undefined) c.header('Retry-After', String(opts.retryAfter));
  // The rest of an oversized body is never read, so this connection cannot carry another request.
  if (code === 'payload_too_large') c.header('Connection', 'close');
  return c.json(body, errorCodes[code]);
}
