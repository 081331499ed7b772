import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Logger } from '@onsale/contracts';
import type { Services } from '../context';
import type { Principal } from '../identity/verifier';

export interface AppEnv {
  Variables: {
    services: Services;
    requestId: string;
    log: Logger;
    principal?: Principal;
  };
}
export type App = OpenAPIHono<AppEnv>;
