import { z } from 'zod';
import type { EventLog } from '../../domain/events.js';
import { type Operation, operation } from '../operation.js';
import { pagination, rangeFilter } from '../params.js';

export function eventOperations(events: EventLog): Operation[] {
  return [
    operation({
      name: 'events.list',
      method: 'GET',
      path: '/v1/events',
      params: z.strictObject({ ...pagination, type: z.string().optional(), created: rangeFilter().optional() }),
      run: ({ params }) => events.list(params),
    }),
    operation({
      name: 'events.retrieve',
      method: 'GET',
      path: '/v1/events/:id',
      params: z.strictObject({}),
      run: ({ path }) => events.retrieve(path.id ?? ''),
    }),
  ];
}
