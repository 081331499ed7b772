import { EDGE_PATHS, EDGE_UPLOAD_PATHS, pathPattern, WEBHOOK_UPSTREAM_PATH } from '@onsale/contracts';

/** Why a request path is refused before it is classified: it would not reach its upstream as the router reads it. */
export type PathFault = 'backslash' | 'encoded_separator' | 'dot_segment' | 'not_canonical';

/** Which side of the platform a path belongs to; decided from the path alone, before any lookup. */
export type PathClass =
  | { kind: 'cell'; eventId: string }
  | { kind: 'webhook'; cellId: string; upstreamPath: string }
  | { kind: 'control-plane'; upload: boolean }
  | { kind: 'malformed'; fault: PathFault }
  | { kind: 'unknown' };

// Compiled once from the platform's table of public paths (contracts/edge-paths.ts). Operator and
// internal endpoints are absent from it on purpose: they are not for the public edge.
const CELL = EDGE_PATHS.cell.map(pathPattern);
const WEBHOOK = EDGE_PATHS.webhook.map(pathPattern);
const CONTROL_PLANE = EDGE_PATHS.controlPlane.map(pathPattern);
const UPLOAD = EDGE_UPLOAD_PATHS.map(pathPattern);

/** `.` or `..`, any of its dots percent-encoded: URL parsers resolve `%2e` as a dot. */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;
/** An encoded `/` or `\`: a server that decodes it before routing would see segments the router did not. */
const ENCODED_SEPARATOR = /%(?:2f|5c)/i;

const firstMatch = (patterns: RegExp[], pathname: string) => {
  for (const p of patterns) {
    const m = p.exec(pathname);
    if (m) return m.groups ?? {};
  }
  return undefined;
};

/**
 * Whether the path reaches an upstream exactly as the router reads it. The upstreams parse the URL (WHATWG, as
 * `new URL()` and Hono do), which resolves dot segments, encoded ones included, turns `\` into `/` and cuts at `#`:
 * `/events/{id}/holds/../../internal/signals` would be routed as a cell path and served as an internal one. Such a
 * path is refused rather than normalised: no client of the platform sends one (browsers and HTTP libraries resolve
 * dot segments before sending), and answering a path other than the one asked would hide the mistake.
 */
export function pathFault(pathname: string): PathFault | undefined {
  if (!pathname.startsWith('/')) return 'not_canonical';
  if (pathname.includes('\\')) return 'backslash';
  if (ENCODED_SEPARATOR.test(pathname)) return 'encoded_separator';
  if (pathname.split('/').some((segment) => DOT_SEGMENT.test(segment))) return 'dot_segment';
  // Anything else the upstream's URL parser would rewrite (a fragment, a control character, a raw quote).
  if (new URL(`http://edge${pathname}`).pathname !== pathname) return 'not_canonical';
  return undefined;
}

export function classify(pathname: string): PathClass {
  const fault = pathFault(pathname);
  if (fault) return { kind: 'malformed', fault };
  const cell = firstMatch(CELL, pathname);
  if (cell?.eventId) return { kind: 'cell', eventId: cell.eventId };
  const webhook = firstMatch(WEBHOOK, pathname);
  if (webhook?.cellId) return { kind: 'webhook', cellId: webhook.cellId, upstreamPath: WEBHOOK_UPSTREAM_PATH };
  if (firstMatch(CONTROL_PLANE, pathname)) return { kind: 'control-plane', upload: !!firstMatch(UPLOAD, pathname) };
  return { kind: 'unknown' };
}
