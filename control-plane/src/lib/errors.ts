import { DomainError } from '@onsale/contracts';

export const notFound = (what: string) => new DomainError('not_found', `${what} not found`);
export const conflict = (message: string, details?: unknown) => new DomainError('conflict', message, details);
