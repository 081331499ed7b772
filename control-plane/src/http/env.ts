import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Services } from '../context';
import type { Principal } from '../identity/verifier';

export interface AppEnv {
  Variables: {
    services: Services;
    requestId: string;
    principal?: Principal;
  };
}
export type App = OpenAPIHono<AppEnv>;
