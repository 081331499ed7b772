import { createRoute, z } from '@hono/zod-openapi';
import { directoryFeed } from '../../directory/feed';
import type { App } from '../env';

const Feed = z
  .object({
    version: z.number().int(),
    cells: z.array(
      z.object({
        id: z.string(),
        baseUrl: z.string(),
        region: z.string(),
        status: z.enum(['active', 'draining', 'down', 'evacuated']),
      }),
    ),
    events: z.array(z.object({ eventId: z.string(), cellId: z.string(), epoch: z.number().int() })),
  })
  .openapi('DirectoryFeed');

const route = createRoute({
  method: 'get',
  path: '/directory',
  tags: ['directory'],
  summary: "The event → cell directory (contracts' DirectoryFeed). Poll with If-None-Match: 304 while unchanged.",
  request: { headers: z.object({ 'if-none-match': z.string().optional() }) },
  responses: {
    200: { description: 'The directory', content: { 'application/json': { schema: Feed } } },
    304: { description: 'Unchanged since the ETag given' },
  },
});

export function registerDirectory(app: App) {
  app.openapi(route, async (c) => {
    const feed = await directoryFeed({ ctx: c.get('services') });
    const etag = `"dir-${feed.version}"`;
    c.header('etag', etag);
    c.header('cache-control', 'no-cache');
    const inm = c.req.header('if-none-match');
    if (inm?.split(',').some((t) => t.trim().replace(/^W\//, '') === etag)) return c.body(null, 304);
    return c.json(feed, 200);
  });
}
