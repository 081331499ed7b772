import { invalidRequest } from './errors.js';
import { type Store, snapshot } from './store.js';

type ApiObject = { object: string } & Record<string, unknown>;
type Resolver = (store: Store, id: string) => unknown;

// The references Stripe lets a caller expand on the objects the emulator serves.
const RESOLVERS: Record<string, Record<string, Resolver>> = {
  payment_intent: {
    latest_charge: (store, id) => store.charges.get(id),
    payment_method: (store, id) => store.paymentMethods.get(id)?.object,
  },
  charge: {
    payment_intent: (store, id) => store.paymentIntents.get(id),
    payment_method: (store, id) => store.paymentMethods.get(id)?.object,
  },
  refund: {
    charge: (store, id) => store.charges.get(id),
    payment_intent: (store, id) => store.paymentIntents.get(id),
  },
};

function expandPath(object: ApiObject, path: string[], fullPath: string, store: Store): ApiObject {
  const [field, ...rest] = path;
  const resolve = field === undefined ? undefined : RESOLVERS[object.object]?.[field];
  if (field === undefined || resolve === undefined) {
    throw invalidRequest(`This property cannot be expanded (${fullPath}).`, { param: 'expand' });
  }
  const reference = object[field];
  const target = typeof reference === 'string' ? resolve(store, reference) : reference;
  if (target === null || target === undefined) return object;
  const expanded = snapshot(target as ApiObject);
  return {
    ...object,
    [field]: rest.length === 0 ? expanded : expandPath(expanded, rest, fullPath, store),
  };
}

/** Replaces ids with the objects they name, for each dotted `expand[]` path. */
export function expandObject<T>(object: T, paths: readonly string[], store: Store): T {
  let result = object as ApiObject;
  for (const path of paths) result = expandPath(result, path.split('.'), path, store);
  return result as T;
}

/** For list and search responses, where Stripe's expand paths start with `data.`. */
export function expandList<T extends { data: unknown[] }>(page: T, paths: readonly string[], store: Store): T {
  const itemPaths = paths.map((path) => {
    if (!path.startsWith('data.')) {
      throw invalidRequest(`This property cannot be expanded (${path}).`, { param: 'expand' });
    }
    return path.slice('data.'.length);
  });
  return { ...page, data: page.data.map((item) => expandObject(item, itemPaths, store)) };
}
