import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';

/**
 * hono's bodyLimit, reached only for a body whose size Node's HTTP parser has not already bounded.
 * bodyLimit asks for the request's body stream, and @hono/node-server answers that by building a whole
 * web Request (AbortSignal, streams): a tenth of a body-less join's CPU in its profile. Behind Node's
 * parser a request with neither Content-Length nor Transfer-Encoding has no body (RFC 9112 §6.3), and
 * one with a Content-Length carries no more than it declares, so the header is the judge. A chunked
 * body, or any request that did not come through Node's parser (`app.request`), is counted as it streams.
 */
export function limitBody(
  maxSize: number,
  onTooLarge: (c: Context) => Response | Promise<Response>,
): MiddlewareHandler {
  const streamed = bodyLimit({ maxSize, onError: onTooLarge });
  return (c, next) => {
    const parsedByNode = (c.env as { incoming?: unknown } | undefined)?.incoming !== undefined;
    if (!parsedByNode || c.req.header('transfer-encoding') !== undefined) return streamed(c, next);
    const declared = c.req.header('content-length');
    if (declared === undefined || Number(declared) <= maxSize) return next();
    return Promise.resolve(onTooLarge(c));
  };
}
