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
 * answer HEAD from their GET route). Empty when no route has this path. Matched as strictly as Hono
 * routes (a trailing slash is another path): else `/x/` would be answered 405 Allow GET to a GET.
 */
export function allowedMethods(routes: readonly RouteEntry[], path: string): string[] {
  return methodsByPath(routes)(path);
}

/** allowedMethods with the routes' patterns compiled once, for a caller that asks on every request (the router). */
export function methodsByPath(routes: readonly RouteEntry[]): (path: string) => string[] {
  const compiled = routes
    .filter((r) => r.method.toUpperCase() !== 'ALL' && !r.path.includes('*'))
    .map((r) => ({ method: r.method.toUpperCase(), pattern: new RegExp(`^${segment(r.path)}$`) }));
  return (path) => {
    const methods = new Set<string>();
    for (const r of compiled) if (r.pattern.test(path)) methods.add(r.method);
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  };
}
