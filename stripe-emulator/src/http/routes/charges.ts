import { z } from 'zod';
import type { Charges } from '../../domain/charges.js';
import { expandList, expandObject } from '../../domain/expand.js';
import type { Store } from '../../domain/store.js';
import { type Operation, operation } from '../operation.js';
import { expand, pagination } from '../params.js';

export function chargeOperations(charges: Charges, store: Store): Operation[] {
  return [
    operation({
      name: 'charges.list',
      method: 'GET',
      path: '/v1/charges',
      params: z.strictObject({ ...pagination, payment_intent: z.string().optional(), expand }),
      run: ({ params: { expand: paths = [], ...params } }) => expandList(charges.list(params), paths, store),
    }),
    operation({
      name: 'charges.retrieve',
      method: 'GET',
      path: '/v1/charges/:charge',
      params: z.strictObject({ expand }),
      run: ({ params, path }) => expandObject(charges.retrieve(path.charge ?? ''), params.expand ?? [], store),
    }),
  ];
}
