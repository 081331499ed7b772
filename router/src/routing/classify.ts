/** Which side of the platform a path belongs to; decided from the path alone, before any lookup. */
export type PathClass =
  | { kind: 'cell'; eventId: string }
  | { kind: 'webhook'; cellId: string; upstreamPath: string }
  | { kind: 'control-plane' }
  | { kind: 'unknown' };

/**
 * The cells' buyer resources: the purchase path, the order, ticket and availability reads that go with it, and what
 * door scanners sync (the event's ticket keys and void list, under /events/{id}/tickets/).
 */
const CELL_PATH = /^\/events\/([^/]+)\/(?:holds|orders|availability|tickets)(?:\/|$)/;
const WEBHOOK_PATH = /^\/cells\/([^/]+)\/webhooks\/stripe$/;

/**
 * Paths the control plane answers: the waiting room, the console (under its own prefixes and as the control plane
 * serves it today: the event, onsale, seat-map, placement and release-decision resources), the admission JWKS and
 * the directory. Operator endpoints (/operator/...) are deliberately absent: they are not for the public edge.
 */
const CONTROL_PLANE_PATHS = [
  /^\/events\/[^/]+\/queue(?:\/|$)/,
  /^\/(?:console|promoter)(?:\/|$)/,
  /^\/\.well-known\/jwks\.json$/,
  /^\/directory$/,
  /^\/events\/?$/,
  /^\/events\/[^/]+\/?$/,
  /^\/events\/[^/]+\/(?:onsale|seat-map|placement|release-decisions)$/,
];

export function classify(pathname: string): PathClass {
  const cell = CELL_PATH.exec(pathname);
  if (cell) return { kind: 'cell', eventId: cell[1]! };
  const webhook = WEBHOOK_PATH.exec(pathname);
  if (webhook) return { kind: 'webhook', cellId: webhook[1]!, upstreamPath: '/webhooks/stripe' };
  if (CONTROL_PLANE_PATHS.some((p) => p.test(pathname))) return { kind: 'control-plane' };
  return { kind: 'unknown' };
}
