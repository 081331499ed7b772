import type { z } from 'zod';
import type { RequestOrigin } from '../domain/objects.js';
import type { OperationName } from '../operations.js';

export interface OperationContext<P> {
  params: P;
  path: Record<string, string>;
  origin: RequestOrigin;
}

/** One Stripe API endpoint: its route, its parameter schema and what it does. */
export interface Operation<S extends z.ZodType = z.ZodType> {
  name: OperationName;
  method: 'GET' | 'POST';
  path: string;
  params: S;
  /** Returns the response object, or throws a StripeApiError. */
  run(context: OperationContext<z.output<S>>): unknown;
  /**
   * Present on the few endpoints Stripe.js calls with a publishable key and the object's
   * `client_secret`; every other endpoint refuses a publishable key.
   */
  publishable?: PublishableAccess;
}

export interface PublishableAccess {
  /** The client secret of the object the path names; undefined when there is none (run answers 404). */
  clientSecret(path: Record<string, string>): string | undefined;
  /** The subset of the object a publishable key may see (applied to errors' `payment_intent` too). */
  view<T>(object: T): T;
}

/** Declares an operation, inferring its parameters' type from the schema. */
export function operation<S extends z.ZodType>(definition: Operation<S>): Operation<S> {
  return definition;
}
