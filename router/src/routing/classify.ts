import { EDGE_PATHS, pathPattern, WEBHOOK_UPSTREAM_PATH } from '@onsale/contracts';

/** Which side of the platform a path belongs to; decided from the path alone, before any lookup. */
export type PathClass =
  | { kind: 'cell'; eventId: string }
  | { kind: 'webhook'; cellId: string; upstreamPath: string }
  | { kind: 'control-plane' }
  | { kind: 'unknown' };

// Compiled once from the platform's table of public paths (contracts/edge-paths.ts). Operator and
// internal endpoints are absent from it on purpose: they are not for the public edge.
const CELL = EDGE_PATHS.cell.map(pathPattern);
const WEBHOOK = EDGE_PATHS.webhook.map(pathPattern);
const CONTROL_PLANE = EDGE_PATHS.controlPlane.map(pathPattern);

const firstMatch = (patterns: RegExp[], pathname: string) => {
  for (const p of patterns) {
    const m = p.exec(pathname);
    if (m) return m.groups ?? {};
  }
  return undefined;
};

export function classify(pathname: string): PathClass {
  const cell = firstMatch(CELL, pathname);
  if (cell?.eventId) return { kind: 'cell', eventId: cell.eventId };
  const webhook = firstMatch(WEBHOOK, pathname);
  if (webhook?.cellId) return { kind: 'webhook', cellId: webhook.cellId, upstreamPath: WEBHOOK_UPSTREAM_PATH };
  if (firstMatch(CONTROL_PLANE, pathname)) return { kind: 'control-plane' };
  return { kind: 'unknown' };
}
