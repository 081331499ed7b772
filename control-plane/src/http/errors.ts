import { z } from '@hono/zod-openapi';
import { type ErrorCode, errorCodes } from '@onsale/contracts';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ServiceError } from '../lib/errors';
import type { AppEnv } from './env';

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: 'not_found' }),
      message: z.string(),
      requestId: z.string(),
      details: z.unknown().optional(),
    }),
  })
  .openapi('Error');

const descriptions: Partial<Record<ErrorCode, string>> = {
  validation_failed: 'Invalid request',
  unauthenticated: 'Missing or invalid token',
  forbidden: 'Not allowed for this role',
  not_found: 'Not found (or belongs to another tenant)',
  conflict: 'Conflicts with the current state',
  rate_limited: 'Too many requests (see Retry-After)',
  payload_too_large: 'Body too large',
  cell_unavailable: 'No purchase cell can serve this',
};

/** OpenAPI responses for the given error codes, one per status, all with the one error body. */
export function errorResponses(...codes: ErrorCode[]) {
  const out: Record<number, { description: string; content: { 'application/json': { schema: typeof ErrorSchema } } }> =
    {};
  for (const code of codes) {
    out[errorCodes[code]] = {
      description: descriptions[code] ?? code,
      content: { 'application/json': { schema: ErrorSchema } },
    };
  }
  return out;
}

export function errorBody(c: Context<AppEnv>, code: ErrorCode, message: string, details?: unknown) {
  return {
    error: { code, message, requestId: c.get('requestId') ?? '', ...(details === undefined ? {} : { details }) },
  };
}

/** The one error mapping: ServiceError codes through contracts' errorCodes, anything else is a logged 500. */
export function toErrorResponse(err: unknown, c: Context<AppEnv>) {
  if (err instanceof ServiceError) {
    for (const [k, v] of Object.entries(err.headers ?? {})) c.header(k, v);
    return c.json(errorBody(c, err.code, err.message, err.details), err.status as ContentfulStatusCode);
  }
  if (err instanceof HTTPException) {
    const code: ErrorCode =
      err.status === 413
        ? 'payload_too_large'
        : err.status === 401
          ? 'unauthenticated'
          : err.status < 500
            ? 'bad_request'
            : 'internal';
    return c.json(errorBody(c, code, err.message || code), errorCodes[code] as ContentfulStatusCode);
  }
  c.get('services')?.log.error('unhandled error', { requestId: c.get('requestId'), err, path: c.req.path });
  return c.json(errorBody(c, 'internal', 'internal error'), 500);
}
