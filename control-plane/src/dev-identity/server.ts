import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { allowedMethods, configOrExit, createLogger, onShutdown } from '@onsale/contracts';
import { z } from 'zod';
import { createDevIdentity, type DevAlg, type DevIdentity, type DevIdentityOptions } from './index';
import { BuyerEmail, createDevOidc } from './oidc';

const MintRequest = z.discriminatedUnion('kind', [
  // A buyer's address, as identity providers carry it (OIDC's `email` claim): where the cell sends their order's mail.
  z.object({ kind: z.literal('buyer'), sub: z.string().min(1), email: BuyerEmail.optional() }),
  z.object({
    kind: z.literal('promoter'),
    sub: z.string().min(1),
    tenantId: z.string().uuid(),
    role: z.enum(['owner', 'manager', 'viewer']),
  }),
  z.object({ kind: z.literal('operator'), sub: z.string().min(1) }),
]);

const routes = [
  { method: 'GET', path: '/openapi.json' },
  { method: 'GET', path: '/.well-known/jwks.json' },
  { method: 'POST', path: '/tokens' },
];
const json = (schema: unknown) => ({ 'application/json': { schema } });
const errorResponse = (description: string) => ({
  description,
  content: json({
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} },
      },
    },
  }),
});
const document = {
  openapi: '3.1.0',
  info: {
    title: 'Onsale development identity issuer',
    version: '1',
    description: 'Development and tests only: mints buyer, promoter and operator tokens on request.',
  },
  paths: {
    '/openapi.json': {
      get: { responses: { 200: { description: 'This document', content: json({ type: 'object' }) } } },
    },
    '/.well-known/jwks.json': {
      get: {
        summary: 'The public key that verifies the tokens minted here',
        responses: {
          200: {
            description: 'JWKS',
            content: json({ type: 'object', required: ['keys'], properties: { keys: { type: 'array' } } }),
          },
        },
      },
    },
    '/tokens': {
      post: {
        summary: 'Mint a token for any identity',
        requestBody: { required: true, content: json(z.toJSONSchema(MintRequest, { io: 'input' })) },
        responses: {
          200: {
            description: 'The signed JWT',
            content: json({ type: 'object', required: ['token'], properties: { token: { type: 'string' } } }),
          },
          400: errorResponse('Not JSON, or not a valid mint request'),
        },
      },
    },
  },
};

/**
 * Serves GET /.well-known/jwks.json and POST /tokens ({kind, sub, tenantId?, role?} → {token}), and
 * the OpenID Connect sign-in the console uses (oidc.ts) for users registered with POST /users.
 * It binds to loopback only: it mints any identity on request and must never be exposed.
 */
export async function startDevIdentityServer(o: DevIdentityOptions & { port?: number } = {}): Promise<{
  url: string;
  jwksUrl: string;
  identity: DevIdentity;
  server: Server;
  close(): Promise<void>;
}> {
  const identity = await createDevIdentity(o);
  let url = '';
  const oidc = createDevOidc(identity, () => url);
  const server = createServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'max-age=60' });
      res.end(JSON.stringify(body));
    };
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const allow = allowedMethods([...routes, ...oidc.routes], path);
    if (allow.length && !allow.includes(req.method ?? '')) {
      res.setHeader('allow', allow.join(', '));
      return send(405, { error: { code: 'method_not_allowed', message: `${req.method} is not allowed here` } });
    }
    if (req.method === 'GET' && path === '/openapi.json') return send(200, document);
    if (await oidc.handle(req, res, path)) return;
    if (req.method === 'GET' && path === '/.well-known/jwks.json') return send(200, identity.jwks());
    if (req.method === 'POST' && path === '/tokens') {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return send(400, { error: { code: 'bad_request', message: 'body must be JSON' } });
      }
      const p = MintRequest.safeParse(body);
      if (!p.success)
        return send(400, {
          error: { code: 'validation_failed', message: 'invalid mint request', details: p.error.issues },
        });
      const { kind: _k, ...claims } = p.data;
      return send(200, {
        token: await identity.mint(p.data.kind === 'operator' ? { ...claims, role: 'operator' } : claims),
      });
    }
    send(404, { error: { code: 'not_found', message: 'not found' } });
  });
  await new Promise<void>((resolve) => server.listen(o.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  url = `http://127.0.0.1:${port}`;
  return {
    url,
    jwksUrl: `${url}/.well-known/jwks.json`,
    identity,
    server,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The dev issuer's environment (a development stand-in for the identity provider; never deployed). */
const DevIdentityConfig = z.object({
  DEV_IDENTITY_PORT: z.coerce.number().int().min(0).max(65535).default(4100),
  DEV_IDENTITY_ALG: z.enum(['EdDSA', 'RS256'] satisfies DevAlg[]).default('RS256'),
  /** A private JWK (with kid and alg) kept across restarts, as a real provider keeps its keys; unset: a new pair per start. */
  DEV_IDENTITY_SIGNING_KEY: z.string().optional(),
});

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const config = configOrExit('dev-identity', DevIdentityConfig);
  const log = createLogger({ role: 'dev-identity' });
  const s = await startDevIdentityServer({
    port: config.DEV_IDENTITY_PORT,
    alg: config.DEV_IDENTITY_ALG,
    signingKey: config.DEV_IDENTITY_SIGNING_KEY,
  });
  log.info('dev identity issuer listening', {
    url: s.url,
    jwksUrl: s.jwksUrl,
    issuer: s.identity.issuer,
    audience: s.identity.audience,
    alg: s.identity.alg,
  });
  onShutdown(log, () => s.close());
}
