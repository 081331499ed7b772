/** A route as a router lists it: an HTTP method and a path pattern with `:name` segments. */
export interface RouteEntry {
  method: string;
  path: string;
}

const segment = (pattern: string) =>
  pattern
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part === '*' ? '.*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');

/**
 * The methods a path answers to, for the `Allow` header of a 405: a request whose path exists but
 * whose method does not is a wrong method, not a missing resource. HEAD comes with GET (servers
 * answer HEAD from their GET route). Empty when no route has this path.
 */
export function allowedMethods(routes: readonly RouteEntry[], path: string): string[] {
  const matching = routes.filter(
    (r) => r.method.toUpperCase() !== 'ALL' && !r.path.includes('*') && new RegExp(`^${segment(r.path)}/?$`).test(path),
  );
  // A concrete path is its own resource: /evacuations/plan is not the /evacuations/{moveId} a GET would read.
  const concrete = matching.filter((r) => !r.path.includes(':'));
  const methods = new Set((concrete.length ? concrete : matching).map((r) => r.method.toUpperCase()));
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}
