/**
 * A floor for the waiting room over HTTP, between the bare Node server and the control-plane API: the
 * poll's and the join's own work with nothing between Node's HTTP server and the domain verbs. The same
 * token check (the identity verifier and its cache), the same rate-limit charges, the same Redis call
 * (`queueStatus`, `joinQueue` with its group-committed fact), the same JSON answer; no framework,
 * middleware, metrics or request log. What the API does beyond this server is its HTTP stack; what this
 * server does beyond the bare one is the waiting room itself. A benchmark reference, not an API: it
 * answers good polls and joins, and 500 to anything else.
 *
 * Run by `pnpm bench:waiting-room` with the API's environment and PORT on 127.0.0.1.
 */
import { createServer } from 'node:http';
import { configOrExit } from '@onsale/contracts';
import { ConfigSchema } from '../src/config';
import { connectServices, createServices } from '../src/context';
import { joinQueue } from '../src/waiting-room/join';
import { enforceRateLimits } from '../src/waiting-room/rate-limit';
import { queueStatus } from '../src/waiting-room/status';

const config = configOrExit('waiting-room-floor', ConfigSchema);
const services = createServices(config);
await connectServices(services);
await services.keys.ensureKey();

const POLL = /^\/events\/([^/]+)\/queue\/me$/;
const JOIN = /^\/events\/([^/]+)\/queue$/;
const BEARER = /^Bearer\s+(\S+)$/i;

const server = createServer(async (req, res) => {
  try {
    if (req.url === '/healthz') return void res.end();
    const verb = req.method === 'POST' ? joinQueue : queueStatus;
    const eventId = (req.method === 'POST' ? JOIN : POLL).exec(req.url ?? '')?.[1];
    const token = BEARER.exec(req.headers.authorization ?? '')?.[1];
    if (!eventId || !token) throw new Error('neither a poll nor a join');
    // As the API's asQueuedBuyer: an unknown token's IP is charged first; a known one's charges ride the verb's call.
    const ip = req.socket.remoteAddress ?? 'unknown';
    const known = services.identity.isKnown(token);
    if (!known) await enforceRateLimits(services, { ip });
    const { sub } = await services.identity.verify(token);
    const status = await verb({
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
