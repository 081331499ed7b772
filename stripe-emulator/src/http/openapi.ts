import { z } from 'zod';
import type { Operation } from './operation.js';

const stripeError = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['type', 'message'],
      properties: {
        type: { type: 'string' },
        message: { type: 'string' },
        code: { type: 'string' },
        param: { type: 'string' },
        decline_code: { type: 'string' },
      },
    },
  },
};
const error = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/StripeError' } } },
});

/** Parameters as a client sends them: form strings, nested objects in bracket notation. */
function parameterSchema(operation: Operation) {
  return z.toJSONSchema(operation.params, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, unknown>;
    required?: string[];
  };
}

/**
 * The emulator's Stripe API, from the same operation list that routes it: each operation's
 * parameters (query for GET, a form body for POST) and the statuses it answers with, Stripe's
 * error body on each. The /__emulator control API is for tests and is not described.
 */
export function stripeDocument(operations: Operation[], apiVersion: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of operations) {
    const path = operation.path.replaceAll(/:(\w+)/g, '{$1}');
    const params = parameterSchema(operation);
    const pathParams = [...operation.path.matchAll(/:(\w+)/g)].map(([, name]) => ({
      name,
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    const queryParams =
      operation.method === 'GET'
        ? Object.entries(params.properties ?? {}).map(([name, schema]) => ({
            name,
            in: 'query',
            required: params.required?.includes(name) ?? false,
            schema,
            style: 'deepObject',
            explode: true,
          }))
        : [];
    paths[path] ??= {};
    paths[path][operation.method.toLowerCase()] = {
      operationId: operation.name,
      security: [{ secretKey: [] }],
      parameters: [...pathParams, ...queryParams],
      ...(operation.method === 'POST'
        ? { requestBody: { content: { 'application/x-www-form-urlencoded': { schema: params } } } }
        : {}),
      responses: {
        200: { description: 'The Stripe object', content: { 'application/json': { schema: { type: 'object' } } } },
        400: error('Invalid request (parameter, state or idempotency key reused with other parameters)'),
        401: error('No valid API key'),
        402: error('The card was declined'),
        404: error('No such object'),
        409: error('A request with this idempotency key is still in progress'),
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Stripe emulator', version: apiVersion },
    paths,
    components: {
      schemas: { StripeError: stripeError },
      securitySchemes: { secretKey: { type: 'http', scheme: 'bearer' } },
    },
  };
}
