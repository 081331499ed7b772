/**
 * A floor for the router: the least a Node reverse proxy does for a hold. Node's HTTP server in, a keep-alive pool to
 * the one upstream out (one request per connection, as the router's), the router's own hop-by-hop header filtering
 * both ways, the answer's chunks straight onto the client's socket. No admission check, routing, deadline, span,
 * metrics or log. What the router adds beyond this is its own work; what this adds beyond the direct path is the hop
 * itself, in Node, on this machine. A benchmark reference, not a router: a failed upstream cuts the client's
 * connection.
 *
 * Run by `pnpm bench:router` with UPSTREAM (the cell's origin) and PORT on 127.0.0.1. FLOOR_CLIENT picks the way
 * out (undici's dispatch, as the router, or node:http.request with a keep-alive Agent) and FLOOR_BODY whether the
 * request body streams through (as the router) or is read whole first: proxy-cost.ts compares them.
 */
import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { configOrExit } from '@onsale/contracts';
import { Pool } from 'undici';
import { z } from 'zod';
import { hasBody } from '../src/proxy/body';
import { endToEnd, type HeaderMap } from '../src/proxy/headers';

const config = configOrExit(
  'proxy-floor',
  z.object({
    UPSTREAM: z.string().url(),
    PORT: z.coerce.number().int().min(1).max(65535),
    FLOOR_CLIENT: z.enum(['undici', 'node-http']).default('undici'),
    FLOOR_BODY: z.enum(['stream', 'buffer']).default('stream'),
  }),
);
const upstream = new URL(config.UPSTREAM);

type Out = (
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  headers: HeaderMap,
  body: IncomingMessage | Buffer | null,
) => void;

function undiciOut(): Out {
  const pool = new Pool(config.UPSTREAM, { connections: 128, pipelining: 1 });
  return (incoming, outgoing, headers, body) =>
    pool.dispatch(
      { path: incoming.url ?? '/', method: incoming.method as 'POST', headers, body },
      {
        // undici tells this handler API from its older one by this method.
        onRequestStart() {},
        onResponseStart(_c, status, upstreamHeaders) {
          outgoing.writeHead(status, endToEnd(upstreamHeaders));
        },
        onResponseData(c, chunk) {
          if (outgoing.write(chunk)) return;
          c.pause();
          outgoing.once('drain', () => c.resume());
        },
        onResponseEnd() {
          outgoing.end();
        },
        onResponseError() {
          outgoing.destroy();
        },
      },
    );
}

function nodeHttpOut(): Out {
  const agent = new Agent({ keepAlive: true, maxSockets: 128 });
  return (incoming, outgoing, headers, body) => {
    const req = request(
      {
        agent,
        host: upstream.hostname,
        port: upstream.port,
        path: incoming.url ?? '/',
        method: incoming.method,
        headers,
      },
      (res) => {
        outgoing.writeHead(res.statusCode ?? 502, endToEnd(res.headers));
        res.pipe(outgoing);
      },
    );
    req.once('error', () => outgoing.destroy());
    if (body === null) req.end();
    else if (Buffer.isBuffer(body)) req.end(body);
    else body.pipe(req);
  };
}

const out = config.FLOOR_CLIENT === 'undici' ? undiciOut() : nodeHttpOut();

const server = createServer((incoming, outgoing) => {
  const headers = endToEnd(incoming.headers);
  delete headers.host;
  if (!hasBody(incoming)) return out(incoming, outgoing, headers, null);
  if (config.FLOOR_BODY === 'stream') return out(incoming, outgoing, headers, incoming);
  const chunks: Buffer[] = [];
  incoming.on('data', (c: Buffer) => chunks.push(c));
  incoming.once('end', () => out(incoming, outgoing, headers, Buffer.concat(chunks)));
});
server.listen(config.PORT, '127.0.0.1');
process.once('SIGTERM', () => server.close(() => process.exit(0)));
