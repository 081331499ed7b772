import { createServer, type RequestListener, type Server, type ServerOptions } from 'node:http';
import { serve } from '@hono/node-server';
import { answerUnparsableRequests, keepAliveBehindLoadBalancer } from '@onsale/contracts';
import { createApp } from './http/app';
import { withTicketPolls } from './http/ticket-poll-listener';
import type { CONTROL_PLANE_ROLES } from './runtime/roles';
import { openServices, type StartRole } from './runtime/start';

/** The control-plane API (one of several sharing its port with API_PROCESSES > 1): the app on HOST:PORT. */
export const startApi: StartRole<typeof CONTROL_PLANE_ROLES.api> = async (role) => {
  const { config, log } = role;
  const services = await openServices(role);
  const app = createApp(services);
  const server = answerUnparsableRequests(
    keepAliveBehindLoadBalancer(
      serve(
        {
          fetch: app.fetch,
          hostname: config.HOST,
          port: config.PORT,
          // Ticket polls are answered before the fetch adapter (http/ticket-poll-listener.ts).
          createServer: ((options: ServerOptions, listener: RequestListener) =>
            createServer(options, withTicketPolls(services, listener))) as typeof createServer,
        },
        (info) => log.info('control-plane API listening', { host: config.HOST, port: info.port, pid: process.pid }),
      ) as Server,
    ),
  );
  // Stop taking connections and let in-flight requests finish; the services close after.
  role.onShutdown(() => new Promise<void>((r) => server.close(() => r())));
};
