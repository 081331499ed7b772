import type { HttpBindings } from '@hono/node-server';

export type RouterEnv = {
  Bindings: HttpBindings;
  Variables: {
    requestId: string;
    correlationId: string;
    /** Metrics and log label of where the request went: a cell id, "control-plane", "router" or "none". */
    upstream: string;
  };
};
