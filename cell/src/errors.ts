import type { ErrorCode } from '@onsale/contracts';

/** A refusal the caller can act on; the HTTP layer maps its code to a status, consumers to the DLQ. */
export class DomainError extends Error {
  override name = 'DomainError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/** A failure that no retry can fix (an impossible transition, a contradiction): consumers dead-letter it. */
export class PermanentError extends Error {
  override name = 'PermanentError';
}
