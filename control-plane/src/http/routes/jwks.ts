import { createRoute, z } from '@hono/zod-openapi';
import type { App } from '../env';

const Jwks = z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).openapi('Jwks');

const route = createRoute({
  method: 'get',
  path: '/.well-known/jwks.json',
  tags: ['directory'],
  summary: 'Admission-token verification keys (announced before use, kept until their last token expires)',
  responses: { 200: { description: 'JWKS', content: { 'application/json': { schema: Jwks } } } },
});

export function registerJwks(app: App) {
  app.openapi(route, async (c) => {
    const jwks = await c.get('services').keys.jwks();
    c.header('cache-control', 'public, max-age=60');
    return c.json(jwks as z.infer<typeof Jwks>, 200);
  });
}
