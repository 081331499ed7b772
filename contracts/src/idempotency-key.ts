import { z } from 'zod';

/**
 * The Idempotency-Key header of every write a client may retry after a lost answer (a hold, an event's creation): the
 * same key again answers what the first request did, and never acts twice.
 */
export const IdempotencyKey = z
  .string()
  .regex(/^[A-Za-z0-9_-]{8,128}$/, 'Idempotency-Key must be 8 to 128 characters of [A-Za-z0-9_-]');
