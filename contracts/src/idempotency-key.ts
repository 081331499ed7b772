import { createHash } from 'node:crypto';
import { z } from 'zod';

/**
 * The Idempotency-Key header of every write a client may retry after a lost answer (a hold, an event's creation): the
 * same key again answers what the first request did, and never acts twice.
 */
export const IdempotencyKey = z
  .string()
  .regex(/^[A-Za-z0-9_-]{8,128}$/, 'Idempotency-Key must be 8 to 128 characters of [A-Za-z0-9_-]');

/**
 * What a keyed request asked for, stored beside its key: the same key with another hash is a different request reusing
 * it (`idempotency_key_reused`), not a retry. `parts` are the request's fields in a fixed order.
 */
export const requestHash = (parts: unknown[]) => createHash('sha256').update(JSON.stringify(parts)).digest('hex');
