import { z } from 'zod';
import { invalidRequest, type StripeApiError } from '../domain/errors.js';
import type { MetadataUpdate } from '../domain/metadata.js';
import type { FormObject, FormValue } from './form.js';

// Schemas for form-encoded parameters. Every value arrives as a string (or a nested object or
// list of strings); these helpers type them and fail with Stripe's messages and error codes.

type IssueContext = z.core.$RefinementCtx;

function fail(ctx: IssueContext, message: string, code?: string): typeof z.NEVER {
  ctx.addIssue({ code: 'custom', message, params: code ? { stripeCode: code } : {} });
  return z.NEVER;
}

export function integer(options: { min?: number } = {}) {
  return z.string().transform((value, ctx) => {
    if (!/^-?\d+$/.test(value)) return fail(ctx, `Invalid integer: ${value}`, 'parameter_invalid_integer');
    const parsed = Number(value);
    if (options.min !== undefined && parsed < options.min) {
      return fail(ctx, `This value must be greater than or equal to ${options.min}.`, 'parameter_invalid_integer');
    }
    return parsed;
  });
}

export function boolean() {
  return z.string().transform((value, ctx) => {
    if (value === 'true') return true;
    if (value === 'false') return false;
    return fail(ctx, `Invalid boolean: ${value}`);
  });
}

export function oneOf<const T extends readonly string[]>(name: string, values: T) {
  return z.string().transform((value, ctx): T[number] => {
    if (values.includes(value)) return value;
    return fail(ctx, `Invalid ${name}: must be one of ${values.join(', ')}`);
  });
}

export function currency() {
  return z.string().transform((value, ctx) => {
    const normalized = value.toLowerCase();
    if (!/^[a-z]{3}$/.test(normalized)) return fail(ctx, `Invalid currency: ${value}.`);
    return normalized;
  });
}

/** A list parameter, sent as `name[0]=a&name[1]=b` (the SDK's form) or `name[]=a`. */
export function list<T extends z.ZodType>(item: T) {
  return z
    .union([z.array(z.unknown()), z.record(z.string(), z.unknown())])
    .transform((value) => (Array.isArray(value) ? value : indexedValues(value)))
    .pipe(z.array(item));
}

function indexedValues(value: Record<string, unknown>): unknown[] {
  return Object.keys(value)
    .map(Number)
    .sort((a, b) => a - b)
    .map((index) => value[String(index)]);
}

export const expand = list(z.string()).optional();

// Stripe's metadata limits: 50 keys, keys up to 40 characters, values up to 500.
const METADATA_MAX_KEYS = 50;
const METADATA_MAX_KEY_LENGTH = 40;
const METADATA_MAX_VALUE_LENGTH = 500;

export function metadata() {
  return z.union([z.literal(''), z.record(z.string(), z.string())]).transform((value, ctx): MetadataUpdate => {
    if (value === '') return value;
    const entries = Object.entries(value);
    if (entries.length > METADATA_MAX_KEYS) return fail(ctx, `Metadata can have at most ${METADATA_MAX_KEYS} keys.`);
    for (const [key, entry] of entries) {
      if (key.length > METADATA_MAX_KEY_LENGTH) {
        return fail(ctx, `Metadata keys can be at most ${METADATA_MAX_KEY_LENGTH} characters long: ${key}`);
      }
      if (entry.length > METADATA_MAX_VALUE_LENGTH) {
        return fail(ctx, `Metadata values can be at most ${METADATA_MAX_VALUE_LENGTH} characters long.`);
      }
    }
    return value;
  });
}

/** Stripe's range filters (`created[gte]=...`) or an exact value (`created=...`). */
export function rangeFilter() {
  return z.union([
    integer(),
    z.strictObject({
      gt: integer().optional(),
      gte: integer().optional(),
      lt: integer().optional(),
      lte: integer().optional(),
    }),
  ]);
}

export const pagination = {
  limit: integer({ min: 1 })
    .pipe(z.number().max(100, { error: 'This value must be less than or equal to 100.' }))
    .optional(),
  starting_after: z.string().optional(),
  ending_before: z.string().optional(),
};

/** `['metadata', 'orderId']` → `metadata[orderId]`, the way Stripe names nested parameters. */
function paramName(path: readonly PropertyKey[]): string {
  const [first, ...rest] = path.map(String);
  return `${first ?? ''}${rest.map((segment) => `[${segment}]`).join('')}`;
}

function valueAt(params: FormValue, path: readonly PropertyKey[]): FormValue | undefined {
  let current: FormValue | undefined = params;
  for (const segment of path) {
    if (current === undefined || typeof current === 'string') return undefined;
    current = Array.isArray(current) ? current[Number(segment)] : current[String(segment)];
  }
  return current;
}

function toStripeError(issue: z.core.$ZodIssue, params: FormObject): StripeApiError {
  if (issue.code === 'unrecognized_keys') {
    const param = paramName([...issue.path, issue.keys[0] ?? '']);
    return invalidRequest(`Received unknown parameter: ${param}`, { code: 'parameter_unknown', param });
  }
  const param = paramName(issue.path);
  if (valueAt(params, issue.path) === undefined) {
    return invalidRequest(`Missing required param: ${param}.`, { code: 'parameter_missing', param });
  }
  if (issue.code === 'custom') {
    const code = (issue.params as { stripeCode?: string } | undefined)?.stripeCode;
    return invalidRequest(issue.message, { ...(code && { code }), param });
  }
  if (issue.code === 'too_big') return invalidRequest(issue.message, { param });
  return invalidRequest(`Invalid value for ${param}.`, { param });
}

/** Validates an operation's parameters, failing with the error Stripe gives for the first problem. */
export function parseParams<S extends z.ZodType>(schema: S, params: FormObject): z.output<S> {
  const result = schema.safeParse(params);
  if (result.success) return result.data;
  const [issue] = result.error.issues;
  throw issue ? toStripeError(issue, params) : invalidRequest('Invalid request parameters.');
}
