import Stripe from 'stripe';

export interface StripeClientOptions {
  secretKey: string;
  /** e.g. `http://127.0.0.1:12111` for the emulator; Stripe itself when absent. */
  apiBase?: string;
  maxNetworkRetries: number;
  timeoutMs: number;
}

/** One Stripe client per process, pointed at Stripe or at a local stand-in by its base URL. */
export function createStripeClient(options: StripeClientOptions): Stripe {
  const base = options.apiBase ? new URL(options.apiBase) : undefined;
  return new Stripe(options.secretKey, {
    maxNetworkRetries: options.maxNetworkRetries,
    timeout: options.timeoutMs,
    ...(base && {
      host: base.hostname,
      port: Number(base.port || (base.protocol === 'https:' ? 443 : 80)),
      protocol: base.protocol === 'https:' ? 'https' : 'http',
    }),
  });
}

export function stripeFromConfig(config: {
  STRIPE_SECRET_KEY: string;
  STRIPE_API_BASE?: string | undefined;
  STRIPE_MAX_NETWORK_RETRIES: number;
  STRIPE_TIMEOUT_MS: number;
}): Stripe {
  return createStripeClient({
    secretKey: config.STRIPE_SECRET_KEY,
    apiBase: config.STRIPE_API_BASE,
    maxNetworkRetries: config.STRIPE_MAX_NETWORK_RETRIES,
    timeoutMs: config.STRIPE_TIMEOUT_MS,
  });
}
