/** The kit's refusal: the HTTP layer maps its code to a status, consumers to the DLQ. */
export { DomainError } from '@onsale/contracts';

/** A failure that no retry can fix (an impossible transition, a contradiction): consumers dead-letter it. */
export class PermanentError extends Error {
  override name = 'PermanentError';
}
