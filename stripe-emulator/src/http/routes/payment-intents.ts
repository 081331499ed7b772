import { z } from 'zod';
import { expandList, expandObject } from '../../domain/expand.js';
import type { PaymentIntent } from '../../domain/objects.js';
import type { PaymentIntents } from '../../domain/payment-intents.js';
import { publishablePaymentIntent } from '../../domain/publishable.js';
import type { Store } from '../../domain/store.js';
import { type Operation, operation, type PublishableAccess } from '../operation.js';
import { boolean, currency, expand, integer, list, metadata, oneOf, pagination, rangeFilter } from '../params.js';

const captureMethod = oneOf('capture_method', ['automatic', 'automatic_async', 'manual'] as const);
const cancellationReason = oneOf('cancellation_reason', [
  'abandoned',
  'duplicate',
  'fraudulent',
  'requested_by_customer',
] as const);

export function paymentIntentOperations(paymentIntents: PaymentIntents, store: Store): Operation[] {
  // Stripe.js's calls: retrieve (client_secret in the query) and confirm (client_secret in the body).
  const withClientSecret: PublishableAccess = {
    clientSecret: (path) => store.paymentIntents.get(path.intent ?? '')?.client_secret,
    view: <T>(object: T): T => publishablePaymentIntent(object as PaymentIntent) as T,
  };
  return [
    operation({
      name: 'payment_intents.create',
      method: 'POST',
      path: '/v1/payment_intents',
      params: z.strictObject({
        amount: integer(),
        currency: currency(),
        capture_method: captureMethod.optional(),
        confirm: boolean().optional(),
        payment_method: z.string().optional(),
        payment_method_types: list(z.string()).optional(),
        automatic_payment_methods: z
          .strictObject({
            enabled: boolean(),
            allow_redirects: oneOf('allow_redirects', ['always', 'never'] as const).optional(),
          })
          .optional(),
        metadata: metadata().optional(),
        description: z.string().optional(),
        receipt_email: z.string().optional(),
        statement_descriptor_suffix: z.string().max(22).optional(),
        transfer_group: z.string().optional(),
        expand,
      }),
      run: ({ params: { expand: paths = [], ...params }, origin }) =>
        expandObject(paymentIntents.create(params, origin), paths, store),
    }),
    operation({
      name: 'payment_intents.list',
      method: 'GET',
      path: '/v1/payment_intents',
      params: z.strictObject({ ...pagination, created: rangeFilter().optional(), expand }),
      run: ({ params: { expand: paths = [], ...params } }) => expandList(paymentIntents.list(params), paths, store),
    }),
    // Registered before `/v1/payment_intents/:intent`, which would otherwise match it.
    operation({
      name: 'payment_intents.search',
      method: 'GET',
      path: '/v1/payment_intents/search',
      params: z.strictObject({
        query: z.string(),
        limit: pagination.limit,
        page: z.string().optional(),
        expand,
      }),
      run: ({ params: { expand: paths = [], ...params } }) => expandList(paymentIntents.search(params), paths, store),
    }),
    operation({
      name: 'payment_intents.retrieve',
      method: 'GET',
      path: '/v1/payment_intents/:intent',
      // Required with a publishable key (checked and consumed before these parameters); a secret key may send it.
      params: z.strictObject({ client_secret: z.string().optional(), expand }),
      run: ({ params, path }) => expandObject(paymentIntents.retrieve(path.intent ?? ''), params.expand ?? [], store),
      publishable: withClientSecret,
    }),
    operation({
      name: 'payment_intents.update',
      method: 'POST',
      path: '/v1/payment_intents/:intent',
      params: z.strictObject({
        amount: integer().optional(),
        capture_method: captureMethod.optional(),
        payment_method: z.string().optional(),
        metadata: metadata().optional(),
        description: z.string().optional(),
        receipt_email: z.string().optional(),
        expand,
      }),
      run: ({ params: { expand: paths = [], ...params }, path }) =>
        expandObject(paymentIntents.update(path.intent ?? '', params), paths, store),
    }),
    operation({
      name: 'payment_intents.confirm',
      method: 'POST',
      path: '/v1/payment_intents/:intent/confirm',
      // No client_secret here: Stripe calls it an unknown parameter with a secret key.
      params: z.strictObject({ payment_method: z.string().optional(), expand }),
      run: ({ params: { expand: paths = [], ...params }, path, origin }) =>
        expandObject(paymentIntents.confirm(path.intent ?? '', params, origin), paths, store),
      publishable: withClientSecret,
    }),
    operation({
      name: 'payment_intents.capture',
      method: 'POST',
      path: '/v1/payment_intents/:intent/capture',
      params: z.strictObject({
        amount_to_capture: integer({ min: 1 }).optional(),
        metadata: metadata().optional(),
        expand,
      }),
      run: ({ params: { expand: paths = [], ...params }, path, origin }) =>
        expandObject(paymentIntents.capture(path.intent ?? '', params, origin), paths, store),
    }),
    operation({
      name: 'payment_intents.cancel',
      method: 'POST',
      path: '/v1/payment_intents/:intent/cancel',
      params: z.strictObject({ cancellation_reason: cancellationReason.optional(), expand }),
      run: ({ params: { expand: paths = [], ...params }, path, origin }) =>
        expandObject(paymentIntents.cancel(path.intent ?? '', params, origin), paths, store),
    }),
  ];
}
