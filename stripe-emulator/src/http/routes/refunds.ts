import { z } from 'zod';
import { expandList, expandObject } from '../../domain/expand.js';
import type { Refunds } from '../../domain/refunds.js';
import type { Store } from '../../domain/store.js';
import { type Operation, operation } from '../operation.js';
import { expand, integer, metadata, oneOf, pagination } from '../params.js';

export function refundOperations(refunds: Refunds, store: Store): Operation[] {
  return [
    operation({
      name: 'refunds.create',
      method: 'POST',
      path: '/v1/refunds',
      params: z.strictObject({
        payment_intent: z.string().optional(),
        charge: z.string().optional(),
        amount: integer({ min: 1 }).optional(),
        reason: oneOf('reason', ['duplicate', 'fraudulent', 'requested_by_customer'] as const).optional(),
        metadata: metadata().optional(),
        expand,
      }),
      run: ({ params: { expand: paths = [], ...params }, origin }) =>
        expandObject(refunds.create(params, origin), paths, store),
    }),
    operation({
      name: 'refunds.list',
      method: 'GET',
      path: '/v1/refunds',
      params: z.strictObject({
        ...pagination,
        payment_intent: z.string().optional(),
        charge: z.string().optional(),
        expand,
      }),
      run: ({ params: { expand: paths = [], ...params } }) => expandList(refunds.list(params), paths, store),
    }),
    operation({
      name: 'refunds.retrieve',
      method: 'GET',
      path: '/v1/refunds/:refund',
      params: z.strictObject({ expand }),
      run: ({ params, path }) => expandObject(refunds.retrieve(path.refund ?? ''), params.expand ?? [], store),
    }),
    operation({
      name: 'refunds.update',
      method: 'POST',
      path: '/v1/refunds/:refund',
      params: z.strictObject({ metadata: metadata().optional(), expand }),
      run: ({ params: { expand: paths = [], ...params }, path, origin }) =>
        expandObject(refunds.update(path.refund ?? '', params, origin), paths, store),
    }),
  ];
}
