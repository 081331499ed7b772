import type { HttpBindings } from '@hono/node-server';

/** Which kind of test-mode key authenticated a request. */
export type KeyKind = 'secret' | 'publishable';

/** Hono context for the emulator: Node's request/response plus per-request values. */
export interface AppEnv {
  Bindings: HttpBindings;
  Variables: {
    requestId: string;
    /** The API key the request authenticated with; idempotency keys are scoped to it. */
    apiKey: string;
    /** Secret (`sk_test_`, `rk_test_`) or publishable (`pk_test_`): what the request may do. */
    keyKind: KeyKind;
  };
}
