import { type ErrorCode, errorCodes } from '@onsale/contracts';

/** A refusal the caller can act on; the HTTP layer maps its code to a status through contracts' errorCodes. */
export class ServiceError extends Error {
  override name = 'ServiceError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
  get status(): number {
    return errorCodes[this.code];
  }
}

export const notFound = (what: string) => new ServiceError('not_found', `${what} not found`);
export const conflict = (message: string, details?: unknown) => new ServiceError('conflict', message, details);
