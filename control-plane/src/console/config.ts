import { z } from 'zod';

/**
 * The promoter console's settings, part of the API process's schema (src/config.ts) and parsed with
 * it at start. Sign-in is OpenID Connect against CONSOLE_OIDC_ISSUER_URL (the development issuer
 * locally, any OIDC provider in production); the tokens it issues must be the ones IDENTITY_* already trusts.
 */
export const ConsoleConfigSchema = z.object({
  /** Discovery base: `${url}/.well-known/openid-configuration`. Unset: the console says sign-in is not configured. */
  CONSOLE_OIDC_ISSUER_URL: z.string().url().optional(),
  CONSOLE_OIDC_CLIENT_ID: z.string().min(1).default('onsale-console'),
  /** Only for a confidential client; the development issuer takes a public client with PKCE. */
  CONSOLE_OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  CONSOLE_OIDC_SCOPE: z.string().min(1).default('openid profile'),
  /** The URL promoters open (the edge); the redirect URI and the Secure cookie flag follow from it. */
  CONSOLE_PUBLIC_URL: z.string().url().optional(),
  CONSOLE_SESSION_TTL_SECONDS: z.coerce
    .number()
    .int()
    .positive()
    .default(8 * 3600),
  /** Where the built assets are (control-plane/console-web/dist by default). */
  CONSOLE_ASSETS_DIR: z.string().min(1).optional(),
  /** How often the live view is pushed to each open page. */
  CONSOLE_LIVE_INTERVAL_MS: z.coerce.number().int().min(200).default(1000),
});
export type ConsoleConfig = z.infer<typeof ConsoleConfigSchema>;
