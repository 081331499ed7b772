import {
  BUYER_ORDERS_PAGE,
  BuyerOrderSummary,
  BuyerOrdersAfter,
  EDGE_UPLOAD_PATHS,
  errorCodes,
} from '@onsale/contracts';
import { z } from 'zod';
import type { RouterConfig } from '../config';

const errorBody = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'requestId'],
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        requestId: { type: 'string' },
        details: {},
      },
    },
  },
};
const traced = {
  'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
  'X-Correlation-Id': { $ref: '#/components/headers/X-Correlation-Id' },
};
const error = (description: string, extraHeaders: Record<string, unknown> = {}) => ({
  description,
  headers: { ...traced, ...extraHeaders },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});
const retryAfter = { 'Retry-After': { $ref: '#/components/headers/Retry-After' } };
const methodNotAllowed = error('Method not allowed on this path (see Allow)', {
  Allow: { schema: { type: 'string' }, description: 'The methods this path answers to' },
});

/**
 * What the router itself answers and adds: its own endpoints, the errors it makes (in the
 * platform's one error body), the headers it sets on every answer and its limits. Forwarded
 * requests are described by the control plane's and the cells' own documents.
 */
export function routerDocument(config: RouterConfig) {
  const json = (schema: unknown) => ({ 'application/json': { schema } });
  return {
    openapi: '3.1.0',
    info: {
      title: 'Onsale edge router',
      version: '1',
      description: [
        'Routes buyer requests to the purchase cell that owns the event (by admission token, else the event',
        'directory), control-plane paths to the control plane, and Stripe webhooks to the cell they name.',
        `Limits: a request body over ${config.MAX_BODY_BYTES} bytes is refused (413, before it is read), a seat map`,
        `upload's over ${config.MAX_UPLOAD_BODY_BYTES} (${EDGE_UPLOAD_PATHS.join(', ')});`,
        `an upstream that does not answer within ${config.UPSTREAM_TIMEOUT_MS} ms is a 504; every 503 carries`,
        `Retry-After (${config.RETRY_AFTER_SECONDS} s). Its Prometheus metrics are not served here but on its`,
        'HEALTH_PORT, on the loopback of its own task. Errors the router makes itself on forwarded paths:',
        Object.entries(routerErrors)
          .map(([code, why]) => `${errorCodes[code as keyof typeof routerErrors]} ${code} (${why})`)
          .join('; '),
      ].join(' '),
    },
    paths: {
      '/healthz': {
        get: {
          summary: 'The router process answers',
          responses: {
            200: {
              description: 'Alive',
              headers: traced,
              content: json({ type: 'object', required: ['status'], properties: { status: { const: 'ok' } } }),
            },
          },
        },
      },
      '/readyz': {
        get: {
          summary: 'Ready once it holds a copy of the event directory',
          responses: {
            200: {
              description: 'Ready',
              headers: traced,
              content: json({
                type: 'object',
                required: ['status', 'directoryVersion'],
                properties: { status: { const: 'ready' }, directoryVersion: { type: 'integer' } },
              }),
            },
            503: error('No directory loaded yet', retryAfter),
          },
        },
      },
      '/me/orders': {
        get: {
          summary: "A page of the buyer's orders across every cell, newest first",
          description:
            'The router asks every cell not marked down for the orders of the buyer the bearer token names (each cell ' +
            `verifies it) and merges them, ${BUYER_ORDERS_PAGE} at most; nextAfter, when not null, is the after that ` +
            'asks for the next page. A cell that does not answer in time is named in unavailableCells and its orders ' +
            'are missing from this answer.',
          security: [{ buyer: [] }],
          parameters: [
            {
              name: 'after',
              in: 'query',
              required: false,
              description: 'The nextAfter of the page before',
              schema: z.toJSONSchema(BuyerOrdersAfter),
            },
          ],
          responses: {
            200: {
              description: "The buyer's orders",
              headers: traced,
              content: json({
                type: 'object',
                required: ['orders', 'nextAfter', 'unavailableCells'],
                properties: {
                  orders: { type: 'array', items: z.toJSONSchema(BuyerOrderSummary) },
                  nextAfter: { type: ['string', 'null'] },
                  unavailableCells: { type: 'array', items: { type: 'string' } },
                },
              }),
            },
            400: error('The after is not a cursor this list gave'),
            401: error('No buyer token, or a cell refused it'),
            503: error('No directory loaded yet', retryAfter),
          },
        },
      },
      '/openapi.json': {
        get: {
          summary: 'This document',
          responses: { 200: { description: 'OpenAPI 3.1', headers: traced, content: json({ type: 'object' }) } },
        },
      },
    },
    components: {
      securitySchemes: { buyer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: { Error: errorBody },
      headers: {
        'X-Request-Id': { description: 'Minted by the router for every request', schema: { type: 'string' } },
        'X-Correlation-Id': {
          description: 'The caller’s correlation id when well formed, else the request id; forwarded upstream',
          schema: { type: 'string' },
        },
        'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'string' } },
      },
      responses: {
        MethodNotAllowed: methodNotAllowed,
        NotFound: error('No such route'),
        AdmissionInvalid: error(
          'The X-Admission-Token is not valid (signature or expiry), or it is bound to a device key (cnf.jkt) and the DPoP header carries no valid proof by that key (RFC 9449: typ dpop+jwt, ES256, the public jwk in the header; htm, htu, iat within 60 s, a jti used once, ath = base64url(SHA-256(admission token)); contracts/src/device-proof.ts makes one with WebCrypto)',
        ),
        PayloadTooLarge: error(`Body over ${config.MAX_BODY_BYTES} bytes`),
        CellUnavailable: error('The directory, the admission keys or the owning cell is unavailable', retryAfter),
        UpstreamTimeout: error(`No upstream answer within ${config.UPSTREAM_TIMEOUT_MS} ms`),
      },
    },
  };
}

const routerErrors = {
  bad_request:
    'a body that does not match its Content-Length, or a path not in its plain form (dot segments, encoded slashes, backslashes): details.path, details.reason',
  request_timeout: 'a request body that did not arrive in time',
  admission_invalid:
    'an admission token with a bad signature or expired, or a device-bound one (cnf.jkt) without a valid DPoP proof by its key: details.reason dpop_*',
  not_found: 'a path no service serves, or a webhook for a cell the directory does not list',
  method_not_allowed: "a method the router's own endpoints do not serve",
  event_not_found: 'an event the directory does not know',
  payload_too_large: 'a body over the limit',
  headers_too_large: "a request line and headers over Node's 16 KiB",
  cell_unavailable: 'no directory yet, admission keys unavailable, or the owning cell out of service',
  upstream_timeout: 'no answer from the upstream in time',
} as const;
