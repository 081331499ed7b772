import type { HttpBindings } from '@hono/node-server';

/** The router's own endpoints (own-endpoints.ts) run on Hono; forwarded requests never do. */
export type RouterEnv = {
  Bindings: HttpBindings;
  Variables: { requestId: string; correlationId: string };
};
