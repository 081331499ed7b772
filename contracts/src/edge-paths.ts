/**
 * Who answers each public path of the platform, as OpenAPI path templates: `{name}` is one path
 * segment, a trailing `/**` takes the path and everything below it. The edge router compiles this
 * table into its classifier; a test holds each service's OpenAPI document against it, so a public
 * route is routed, or deliberately kept off the edge (operator and internal routes), never by accident.
 */
export const EDGE_PATHS = {
  /** A buyer's purchase resources and what door scanners sync: routed to the cell that sells the event. */
  cell: [
    '/events/{eventId}/holds/**',
    '/events/{eventId}/orders/**',
    '/events/{eventId}/availability/**',
    '/events/{eventId}/tickets/**',
  ],
  /** Stripe's webhooks name their cell in the path; the cell answers them at WEBHOOK_UPSTREAM_PATH. */
  webhook: ['/cells/{cellId}/webhooks/stripe'],
  /**
   * The public catalog, the waiting room, the promoters' API and console, the buyers' pages and the admission keys.
   * Not the directory: it lists every tenant's events and each cell's internal address, and the router polls it
   * from the control plane's own port (CONTROL_PLANE_URL), not through the edge.
   */
  controlPlane: [
    '/events',
    '/events/{eventId}',
    '/events/{eventId}/queue/**',
    '/events/{eventId}/onsale/**',
    '/events/{eventId}/catalog/**',
    '/events/{eventId}/seat-map',
    '/events/{eventId}/tiers/**',
    '/events/{eventId}/placement',
    '/events/{eventId}/release-decisions',
    '/events/{eventId}/sales/**',
    '/events/{eventId}/presale/**',
    '/events/{eventId}/bot-report',
    '/.well-known/jwks.json',
    '/console/**',
    '/shop/**',
  ],
} as const;

/**
 * The control-plane paths whose body is an upload: a seat map of up to 100,000 seats, CSV or JSON, through the API or
 * the console's form (a stadium's is several hundred kilobytes, the largest some megabytes). The edge takes bodies up to
 * its upload limit there, and up to its far smaller request limit everywhere else.
 */
export const EDGE_UPLOAD_PATHS = ['/events/{eventId}/seat-map', '/console/events/{eventId}/seat-map'] as const;

/** The control plane's limit on a request body, which the edge's limit on an upload follows. */
export const CONTROL_PLANE_MAX_BODY_BYTES = 32 * 1024 * 1024;

export const WEBHOOK_UPSTREAM_PATH = '/webhooks/stripe';

/** A path template as an anchored regular expression with named groups for its parameters. */
export function pathPattern(template: string): RegExp {
  const below = template.endsWith('/**');
  const body = (below ? template.slice(0, -3) : template)
    .split('/')
    .map((segment) => {
      const param = /^\{(\w+)\}$/.exec(segment);
      return param ? `(?<${param[1]}>[^/]+)` : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return new RegExp(`^${body}${below ? '(?:/.*)?' : ''}$`);
}
