/**
 * Named boundaries where tests make a process crash or fail: before a call, after the remote
 * side succeeded, before the local commit, after it, before the acknowledgement. Inert unless
 * FAILPOINTS is set, e.g. `FAILPOINTS=relay.after-publish=crash,saga.before-commit=error@3`
 * (`@N`: only the Nth time the point is reached). A crash is `process.exit(137)`: no cleanup,
 * no offset commit, no lease release, as after a SIGKILL.
 */
export class FailpointError extends Error {
  override name = 'FailpointError';
}

type Action = { kind: 'crash' | 'error'; nth?: number };

function parse(spec: string | undefined): Map<string, Action> {
  const points = new Map<string, Action>();
  for (const part of (spec ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([a-z0-9.-]+)=(crash|error)(?:@(\d+))?$/.exec(part);
    if (!m) throw new Error(`FAILPOINTS: cannot read "${part}"`);
    points.set(m[1]!, { kind: m[2] as Action['kind'], nth: m[3] ? Number(m[3]) : undefined });
  }
  return points;
}

const points = parse(process.env.FAILPOINTS);
const hits = new Map<string, number>();

export function failpoint(name: string): void {
  if (points.size === 0) return;
  const action = points.get(name);
  if (!action) return;
  const n = (hits.get(name) ?? 0) + 1;
  hits.set(name, n);
  if (action.nth !== undefined && action.nth !== n) return;
  if (action.kind === 'crash') {
    process.stderr.write(`failpoint ${name}: crash\n`);
    process.exit(137);
  }
  throw new FailpointError(`failpoint ${name}`);
}
