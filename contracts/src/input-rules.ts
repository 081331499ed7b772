import type { FieldIssue } from './errors';

/**
 * PostgreSQL cannot store U+0000 in text or jsonb, so a NUL in any input would reach the database
 * and fail there as a 500. Every service refuses it where input is validated, with this message.
 */
export const NUL_MESSAGE = 'must not contain NUL (U+0000) characters';

/**
 * One issue per string (or object key) holding a NUL, anywhere in a parsed input: a JSON body,
 * path or query parameters, headers, form fields. Paths are dotted like zod's (`seats.3.label`).
 */
export function nulIssues(value: unknown): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const join = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key));
  const walk = (v: unknown, path: string) => {
    if (typeof v === 'string') {
      if (v.includes('\u0000')) issues.push({ path, message: NUL_MESSAGE });
    } else if (Array.isArray(v)) {
      for (const [i, item] of v.entries()) walk(item, join(path, i));
    } else if (typeof v === 'object' && v !== null) {
      for (const [key, item] of Object.entries(v)) {
        if (key.includes('\u0000')) issues.push({ path: join(path, JSON.stringify(key)), message: NUL_MESSAGE });
        walk(item, join(path, key));
      }
    }
  };
  walk(value, '');
  return issues;
}

const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i;

/**
 * The rules every service applies to input its schema has accepted (its validator hook calls this
 * on success): no NUL anywhere, and a declared JSON body must be sent (a validator reads a missing
 * body as `{}`, which an all-optional schema would let through as a no-op).
 */
export function acceptedInputIssues(input: { target: string; data: unknown; contentType?: string }): FieldIssue[] {
  if (input.target === 'json' && !JSON_TYPE.test(input.contentType ?? ''))
    return [{ path: 'body', message: 'a JSON body (content-type: application/json) is required' }];
  return nulIssues(input.data);
}
