import { z } from 'zod';

/**
 * The buyer's pages (/shop), part of the API process's schema. Sign-in uses the console's identity provider
 * (CONSOLE_OIDC_ISSUER_URL) and public URL (CONSOLE_PUBLIC_URL, the edge) with a client of its own; payment
 * goes from the browser to Stripe with the publishable key, as Stripe.js does.
 */
export const ShopConfigSchema = z.object({
  SHOP_OIDC_CLIENT_ID: z.string().min(1).default('onsale-shop'),
  /** Stripe's API as the browser reaches it (the emulator locally, https://api.stripe.com in production). */
  SHOP_STRIPE_API_URL: z.string().url().default('https://api.stripe.com'),
  /** Public by design: it ships in the checkout page. Unset: the checkout says payment is unavailable. */
  SHOP_STRIPE_PUBLISHABLE_KEY: z
    .string()
    .regex(/^pk_(test|live)_\w+$/, { message: 'must be a Stripe publishable key (pk_test_... or pk_live_...)' })
    .optional(),
  /** Where the built assets are (control-plane/shop-web/dist by default). */
  SHOP_ASSETS_DIR: z.string().min(1).optional(),
});
export type ShopConfig = z.infer<typeof ShopConfigSchema>;
