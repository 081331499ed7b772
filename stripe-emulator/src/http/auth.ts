import type { MiddlewareHandler } from 'hono';
import { StripeApiError } from '../domain/errors.js';
import type { AppEnv } from './env.js';

const NO_KEY_MESSAGE =
  'You did not provide an API key. You need to provide your API key in the Authorization header, ' +
  "using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). " +
  'See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.';

// The emulator is test mode only: live keys are refused, as they would be by a test-mode account.
// Like one Stripe test account, it has no registry of secret keys: any test secret key is the
// account's. Publishable keys are the client side's (Stripe.js): any `pk_test_` key, or only the
// configured one when `publishableKey` is set.
const SECRET_PREFIXES = ['sk_test_', 'rk_test_'];
const PUBLISHABLE_PREFIX = 'pk_test_';

export interface AuthOptions {
  /** When set, the only publishable key accepted; otherwise any `pk_test_` key. */
  publishableKey?: string | undefined;
}

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

function invalidKey(key: string): StripeApiError {
  return new StripeApiError(401, {
    type: 'invalid_request_error',
    message: `Invalid API Key provided: ${redacted(key)}`,
  });
}

/**
 * Stripe's answer when a publishable key calls an endpoint that needs a secret key (the SDKs
 * raise it as an authentication error).
 */
export function publishableKeyRefused(): StripeApiError {
  return new StripeApiError(401, {
    type: 'invalid_request_error',
    message:
      'This API call cannot be made with a publishable API key. Please use a secret API key. ' +
      'You can find a list of your API keys at https://dashboard.stripe.com/account/apikeys.',
  });
}

export function authenticate(options: AuthOptions = {}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const key = apiKeyFrom(c.req.header('Authorization'));
    if (!key) throw new StripeApiError(401, { type: 'invalid_request_error', message: NO_KEY_MESSAGE });
    if (SECRET_PREFIXES.some((prefix) => key.startsWith(prefix))) {
      c.set('keyKind', 'secret');
    } else if (
      key.startsWith(PUBLISHABLE_PREFIX) &&
      (options.publishableKey === undefined || key === options.publishableKey)
    ) {
      c.set('keyKind', 'publishable');
    } else {
      throw invalidKey(key);
    }
    c.set('apiKey', key);
    await next();
  };
}
