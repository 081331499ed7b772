import { DomainError } from '@onsale/contracts';

/** The kit's refusal: the HTTP layer maps its code to a status, consumers to the DLQ. */
export { DomainError };

/**
 * A hold refused for seats or places another buyer has. `checkedAt` is when that was decided: a seat map shows the
 * seats still free once its availability document is at least this recent.
 */
export const seatsUnavailable = (message: string, details: Record<string, unknown>) =>
  new DomainError('seats_unavailable', message, { ...details, checkedAt: new Date().toISOString() });

/** A failure that no retry can fix (an impossible transition, a contradiction): consumers dead-letter it. */
export class PermanentError extends Error {
  override name = 'PermanentError';
}
