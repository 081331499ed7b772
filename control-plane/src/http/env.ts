import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Logger } from '@onsale/contracts';
import type { Services } from '../context';
import type { Principal } from '../identity/verifier';
import type { RateCharges } from '../waiting-room/rate-limit';

export interface AppEnv {
  Variables: {
    services: Services;
    requestId: string;
    log: Logger;
    principal?: Principal;
    /** The rate limits a waiting-room request still owes, charged in its join's or poll's own Redis call. */
    charges?: RateCharges;
  };
}
export type App = OpenAPIHono<AppEnv>;
