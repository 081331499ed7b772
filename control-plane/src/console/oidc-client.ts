import { createHash, randomBytes } from 'node:crypto';
import { DomainError } from '@onsale/contracts';
import { z } from 'zod';
import type { ConsoleConfig } from './config';

const Discovery = z.object({
  issuer: z.string(),
  authorization_endpoint: z.string().url(),
  token_endpoint: z.string().url(),
});
const TokenAnswer = z.object({ access_token: z.string().min(1), token_type: z.string() });

/**
 * The console as an OpenID Connect client: authorization code with PKCE (S256) and a state bound
 * to the browser, against whatever issuer CONSOLE_OIDC_ISSUER_URL names. The issuer's access
 * token is verified by the control plane's own identity verifier, so only tokens the API would
 * accept open a session.
 */
export function createOidcClient(config: ConsoleConfig, expectedIssuer: string) {
  let discovery: Promise<z.infer<typeof Discovery>> | null = null;
  const discover = () => {
    if (!config.CONSOLE_OIDC_ISSUER_URL) throw new Error('CONSOLE_OIDC_ISSUER_URL is not set');
    discovery ??= (async () => {
      const res = await fetch(
        `${config.CONSOLE_OIDC_ISSUER_URL!.replace(/\/+$/, '')}/.well-known/openid-configuration`,
        {
          signal: AbortSignal.timeout(5000),
        },
      );
      if (!res.ok) throw new Error(`issuer discovery answered ${res.status}`);
      const d = Discovery.parse(await res.json());
      if (d.issuer !== expectedIssuer) throw new Error(`issuer ${d.issuer} is not the trusted ${expectedIssuer}`);
      return d;
    })().catch((err) => {
      discovery = null;
      throw err;
    });
    return discovery;
  };

  return {
    /** A fresh login: where to send the browser, and what to keep until it comes back. */
    async start(redirectUri: string) {
      const d = await discover();
      const state = randomBytes(24).toString('base64url');
      const verifier = randomBytes(48).toString('base64url');
      const url = new URL(d.authorization_endpoint);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: config.CONSOLE_OIDC_CLIENT_ID,
        redirect_uri: redirectUri,
        scope: config.CONSOLE_OIDC_SCOPE,
        state,
        nonce: randomBytes(16).toString('base64url'),
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
      }).toString();
      return { url: url.toString(), state, verifier };
    },
    /** Exchanges the code (single use, bound to the verifier) for the issuer's access token. */
    async exchange(code: string, verifier: string, redirectUri: string): Promise<string> {
      const d = await discover();
      const body = new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        client_id: config.CONSOLE_OIDC_CLIENT_ID,
        code_verifier: verifier,
      });
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
      if (config.CONSOLE_OIDC_CLIENT_SECRET)
        headers.authorization = `Basic ${Buffer.from(
          `${encodeURIComponent(config.CONSOLE_OIDC_CLIENT_ID)}:${encodeURIComponent(config.CONSOLE_OIDC_CLIENT_SECRET)}`,
        ).toString('base64')}`;
      const res = await fetch(d.token_endpoint, { method: 'POST', headers, body, signal: AbortSignal.timeout(5000) });
      if (!res.ok) throw new DomainError('unauthenticated', 'the identity provider refused the sign-in code');
      const t = TokenAnswer.safeParse(await res.json());
      if (!t.success) throw new DomainError('unauthenticated', 'the identity provider answered without a token');
      return t.data.access_token;
    },
  };
}
export type OidcClient = ReturnType<typeof createOidcClient>;
