import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';

export type HeaderMap = Record<string, string | string[]>;

/**
 * Headers that describe one connection, not the message (RFC 9110 §7.6.1), so they never cross the router. Each hop
 * sets its own: Node frames the router's responses, undici the requests to the cells.
 */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** Drops hop-by-hop headers, Proxy-*, and every header the Connection header names. */
export function endToEnd(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): HeaderMap {
  // One pass without intermediate arrays (a set only when a Connection header names some): this runs twice on
  // every forwarded request.
  const named = headers.connection ? connectionNamed(headers.connection) : undefined;
  const out: HeaderMap = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || lower.startsWith('proxy-') || named?.has(lower)) continue;
    out[lower] = value;
  }
  return out;
}

function connectionNamed(value: string | string[]): Set<string> {
  const named = new Set<string>();
  for (const token of (Array.isArray(value) ? value.join(',') : value).split(',')) {
    const name = token.trim().toLowerCase();
    if (name) named.add(name);
  }
  return named;
}

export interface ForwardingContext {
  correlationId: string;
  trustProxy: boolean;
  /** How many entries at the end of the incoming X-Forwarded-For the trusted proxies appended. */
  trustedHops: number;
}

/** The last `hops` entries of a chain: those the trusted proxies appended, none a client wrote. */
function trustedTail(chain: string | string[] | undefined, hops: number): string | undefined {
  if (!chain) return undefined;
  const entries = (Array.isArray(chain) ? chain.join(',') : chain).split(',').map((e) => e.trim());
  return entries.slice(-hops).join(', ') || undefined;
}

/** The headers a cell or the control plane receives for one incoming request. */
export function upstreamRequestHeaders(incoming: IncomingMessage, ctx: ForwardingContext): HeaderMap {
  const headers = endToEnd(incoming.headers);
  // The upstream's own authority is set by undici. Expect is answered by Node before the handler runs (and undici
  // refuses to send it).
  delete headers.host;
  delete headers.expect;
  const remote = incoming.socket.remoteAddress ?? 'unknown';
  const priorFor = ctx.trustProxy ? trustedTail(incoming.headers['x-forwarded-for'], ctx.trustedHops) : undefined;
  headers['x-forwarded-for'] = priorFor ? `${priorFor}, ${remote}` : remote;
  const priorProto = ctx.trustProxy ? incoming.headers['x-forwarded-proto'] : undefined;
  headers['x-forwarded-proto'] =
    typeof priorProto === 'string' ? priorProto : (incoming.socket as TLSSocket).encrypted ? 'https' : 'http';
  headers['x-correlation-id'] = ctx.correlationId;
  return headers;
}

/** The headers a client receives from an upstream's response. */
export function clientResponseHeaders(upstream: Record<string, string | string[] | undefined>, correlationId: string) {
  const headers = endToEnd(upstream);
  headers['x-correlation-id'] = correlationId;
  return headers;
}
