import { invalidRequest } from '../domain/errors.js';

export type FormValue = string | FormValue[] | FormObject;
export interface FormObject {
  [key: string]: FormValue;
}

const KEY = /^([^[\]]+)((?:\[[^[\]]*\])*)$/;

/** `metadata[orderId]` → ['metadata', 'orderId']; `expand[]` → ['expand', '']. */
function keyPath(name: string): string[] {
  const match = KEY.exec(name);
  if (!match?.[1]) throw invalidRequest(`Invalid parameter name: ${name}`);
  const brackets = match[2] ?? '';
  return [match[1], ...[...brackets.matchAll(/\[([^[\]]*)\]/g)].map((part) => part[1] ?? '')];
}

function malformed(name: string): Error {
  return invalidRequest(`Invalid parameter structure at ${name}.`, { param: name });
}

function assign(target: FormObject | FormValue[], path: string[], value: string, name: string): void {
  const [segment, ...rest] = path;
  if (segment === undefined) return;
  if (Array.isArray(target)) {
    // Only `[]` appends; indexed keys (`expand[0]`) stay object keys and are read as lists later.
    if (segment !== '') throw malformed(name);
    if (rest.length === 0) {
      target.push(value);
      return;
    }
    const child: FormObject | FormValue[] = rest[0] === '' ? [] : {};
    target.push(child);
    assign(child, rest, value, name);
    return;
  }
  if (segment === '') throw malformed(name);
  if (rest.length === 0) {
    target[segment] = value;
    return;
  }
  const existing = target[segment];
  const child = existing ?? (rest[0] === '' ? [] : {});
  if (typeof child === 'string') throw malformed(name);
  target[segment] = child;
  assign(child, rest, value, name);
}

/**
 * Decodes Stripe's form encoding (`application/x-www-form-urlencoded` with bracketed keys:
 * `metadata[orderId]=1`, `expand[0]=latest_charge`, `expand[]=latest_charge`) into nested
 * objects. Values stay strings; each operation's schema gives them types.
 */
export function parseForm(encoded: string): FormObject {
  const root: FormObject = {};
  for (const [name, value] of new URLSearchParams(encoded)) assign(root, keyPath(name), value, name);
  return root;
}
