import { type ErrorBody, errorCodes } from '@onsale/contracts';
import type { Context } from 'hono';
import type { RouterEnv } from './env';

/**
 * The platform's codes, plus the router's own. `event_not_found` belongs in contracts' errorCodes (the router is its
 * only producer today); until it moves there it lives here.
 */
export const routerErrorCodes = { ...errorCodes, event_not_found: 404 } as const;
export type RouterErrorCode = keyof typeof routerErrorCodes;

export interface ErrorOptions {
  details?: unknown;
  /** Seconds; sent as Retry-After (every 503 the router makes carries one). */
  retryAfter?: number;
}

/** An answer the router makes itself, in the platform's one error body. */
export function errorResponse(c: Context<RouterEnv>, code: RouterErrorCode, message: string, opts: ErrorOptions = {}) {
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
  return c.json(body, routerErrorCodes[code]);
}
