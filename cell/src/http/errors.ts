import { type ErrorBody, type ErrorCode, errorCodes } from '@onsale/contracts';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ZodError } from 'zod';
import { EpochFencedError } from '../db/tx';
import { DomainError } from '../errors';
import type { CellEnv } from './env';

export function errorResponse(c: Context<CellEnv>, code: ErrorCode, message: string, details?: unknown) {
  const body: ErrorBody = {
    error: { code, message, requestId: c.get('requestId'), ...(details === undefined ? {} : { details }) },
  };
  return c.json(body, errorCodes[code]);
}

export function validationIssues(error: ZodError, target: string) {
  return error.issues.map((i) => ({ path: i.path.length ? i.path.join('.') : target, message: i.message }));
}

/** The one place an exception becomes an HTTP answer. */
export function onError(err: Error, c: Context<CellEnv>) {
  if (err instanceof DomainError) {
    // The rest of an oversized body is never read, so this connection cannot carry another request.
    if (err.code === 'payload_too_large') c.header('Connection', 'close');
    // A moving event sells again (on its new cell) within seconds.
    if (err.code === 'event_moving') c.header('Retry-After', '2');
    return errorResponse(c, err.code, err.message, err.details);
  }
  if (err instanceof EpochFencedError) {
    c.header('Retry-After', '5');
    return errorResponse(c, 'epoch_fenced', 'this cell writer is fenced; retry through the router');
  }
  if (err instanceof HTTPException) {
    if (err.status === 413) return errorResponse(c, 'payload_too_large', 'request body is too large');
    if (err.status === 400) return errorResponse(c, 'bad_request', err.message || 'malformed request');
    return err.getResponse();
  }
  c.get('log').error('request failed', { err });
  return errorResponse(c, 'internal', 'internal error');
}
