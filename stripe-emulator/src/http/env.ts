import type { HttpBindings } from '@hono/node-server';

/** Hono context for the emulator: Node's request/response plus per-request values. */
export interface AppEnv {
  Bindings: HttpBindings;
  Variables: {
    requestId: string;
    /** The secret key the request authenticated with; idempotency keys are scoped to it. */
    apiKey: string;
  };
}
