import type { Context } from 'hono';

/**
 * Whether If-None-Match names the current representation (RFC 9110 §13.1.2: weak comparison, so a tag the
 * edge weakened after compressing still matches; `*` matches any).
 */
export function isNotModified(c: Context, etag: string): boolean {
  const given = c.req.header('if-none-match');
  if (!given) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return given.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag));
}
