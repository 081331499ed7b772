/**
 * A floor for the waiting room's HTTP polls, between the bare Node server and the control-plane API:
 * the poll's own work with nothing between Node's HTTP server and the domain verb. The same token
 * check (the identity verifier and its cache), the same rate-limit charges and the same one Redis call
 * (`queueStatus`), the same JSON answer; no framework, middleware, metrics or request log. What the API
 * does beyond this server is its HTTP stack; what this server does beyond the bare one is the poll itself.
 * A benchmark reference, not a route: it answers polls of known-good requests and 500 to anything else.
 *
 * Run by `pnpm bench:waiting-room` with the API's environment and PORT on 127.0.0.1.
 */
import { createServer } from 'node:http';
import { configOrExit } from '@onsale/contracts';
import { ConfigSchema } from '../src/config';
import { connectServices, createServices } from '../src/context';
import { enforceRateLimits } from '../src/waiting-room/rate-limit';
import { queueStatus } from '../src/waiting-room/status';

const config = configOrExit('poll-floor', ConfigSchema);
const services = createServices(config);
await connectServices(services);
await services.keys.ensureKey();

const POLL = /^\/events\/([^/]+)\/queue\/me$/;
const BEARER = /^Bearer\s+(\S+)$/i;

const server = createServer(async (req, res) => {
  try {
    if (req.url === '/healthz') return void res.end();
    const eventId = POLL.exec(req.url ?? '')?.[1];
    const token = BEARER.exec(req.headers.authorization ?? '')?.[1];
    if (!eventId || !token) throw new Error('not a poll');
    // As the API's asQueuedBuyer: an unknown token's IP is charged first; a known one's charges ride the poll.
    const ip = req.socket.remoteAddress ?? 'unknown';
    const known = services.identity.isKnown(token);
    if (!known) await enforceRateLimits(services, { ip });
    const { sub } = await services.identity.verify(token);
    const status = await queueStatus({
      ctx: services,
      actor: { kind: 'buyer', sub },
      eventId,
      charges: known ? { ip, buyer: sub } : { buyer: sub },
    });
    const body = JSON.stringify(status);
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
    });
    res.end(body);
  } catch {
    res.writeHead(500).end();
  }
});
server.listen(config.PORT, '127.0.0.1');
process.once('SIGTERM', () => server.close(() => process.exit(0)));
