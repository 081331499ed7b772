import { resourceMissing } from './errors.js';
import type { ListPage } from './objects.js';

export interface ListParams {
  limit?: number | undefined;
  starting_after?: string | undefined;
  ending_before?: string | undefined;
}

export const DEFAULT_LIMIT = 10;

/**
 * One page of a Stripe list, newest first, with cursor pagination by object id
 * (`starting_after` pages towards older objects, `ending_before` towards newer ones).
 */
export function listPage<T extends { id: string }>(
  newestFirst: readonly T[],
  params: ListParams,
  url: string,
  resource: string,
): ListPage<T> {
  const limit = params.limit ?? DEFAULT_LIMIT;
  const indexOf = (id: string, param: string): number => {
    const index = newestFirst.findIndex((item) => item.id === id);
    if (index === -1) throw resourceMissing(resource, id, param);
    return index;
  };

  if (params.ending_before !== undefined) {
    const end = indexOf(params.ending_before, 'ending_before');
    const start = Math.max(0, end - limit);
    return { object: 'list', data: newestFirst.slice(start, end), has_more: start > 0, url };
  }
  const start = params.starting_after === undefined ? 0 : indexOf(params.starting_after, 'starting_after') + 1;
  const data = newestFirst.slice(start, start + limit);
  return { object: 'list', data, has_more: start + limit < newestFirst.length, url };
}

export interface RangeFilter {
  gt?: number | undefined;
  gte?: number | undefined;
  lt?: number | undefined;
  lte?: number | undefined;
}

/** Stripe's `created` list filter: an exact timestamp or a range. */
export function matchesRange(value: number, filter: number | RangeFilter | undefined): boolean {
  if (filter === undefined) return true;
  if (typeof filter === 'number') return value === filter;
  return (
    (filter.gt === undefined || value > filter.gt) &&
    (filter.gte === undefined || value >= filter.gte) &&
    (filter.lt === undefined || value < filter.lt) &&
    (filter.lte === undefined || value <= filter.lte)
  );
}
