import type { MiddlewareHandler } from 'hono';
import { StripeApiError } from '../domain/errors.js';
import type { AppEnv } from './env.js';

const NO_KEY_MESSAGE =
  'You did not provide an API key. You need to provide your API key in the Authorization header, ' +
  "using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). " +
  'See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.';

// The emulator is test mode only: live keys are refused, as they would be by a test-mode account.
const ACCEPTED_PREFIXES = ['sk_test_', 'rk_test_'];

function apiKeyFrom(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const [scheme, credentials] = authorization.split(' ', 2);
  if (!credentials) return undefined;
  if (scheme?.toLowerCase() === 'bearer') return credentials.trim();
  // `curl -u sk_test_...:` sends the key as the Basic auth user name.
  if (scheme?.toLowerCase() === 'basic') return Buffer.from(credentials, 'base64').toString().split(':')[0];
  return undefined;
}

/** Stripe's way of naming a key in an error: its prefix and last four characters. */
function redacted(key: string): string {
  const prefixEnd = key.indexOf('_', key.indexOf('_') + 1) + 1;
  return `${key.slice(0, prefixEnd)}${'*'.repeat(Math.max(0, key.length - prefixEnd - 4))}${key.slice(-4)}`;
}

export const authenticate: MiddlewareHandler<AppEnv> = async (c, next) => {
  const key = apiKeyFrom(c.req.header('Authorization'));
  if (!key) throw new StripeApiError(401, { type: 'invalid_request_error', message: NO_KEY_MESSAGE });
  if (!ACCEPTED_PREFIXES.some((prefix) => key.startsWith(prefix))) {
    throw new StripeApiError(401, {
      type: 'invalid_request_error',
      message: `Invalid API Key provided: ${redacted(key)}`,
    });
  }
  c.set('apiKey', key);
  await next();
};
