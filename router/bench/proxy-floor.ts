/**
 * A floor for the router: the least a Node reverse proxy does for a hold. Node's HTTP server in, a keep-alive undici
 * pool to the one upstream out (as the router's, one request per connection), the router's own hop-by-hop header
 * filtering both ways, the answer's chunks straight onto the client's socket. No admission check, routing, deadline,
 * span, metrics or log. What the router adds beyond this is its own work; what this adds beyond the direct path is
 * the hop itself, in Node, on this machine. A benchmark reference, not a router: a failed upstream cuts the client's
 * connection.
 *
 * Run by `pnpm bench:router` with UPSTREAM (the cell's origin) and PORT on 127.0.0.1.
 */
import { createServer } from 'node:http';
import { configOrExit } from '@onsale/contracts';
import { Pool } from 'undici';
import { z } from 'zod';
import { hasBody } from '../src/proxy/body';
import { endToEnd } from '../src/proxy/headers';

const config = configOrExit(
  'proxy-floor',
  z.object({ UPSTREAM: z.string().url(), PORT: z.coerce.number().int().min(1).max(65535) }),
);
const pool = new Pool(config.UPSTREAM, { connections: 128, pipelining: 1 });

const server = createServer((incoming, outgoing) => {
  const headers = endToEnd(incoming.headers);
  delete headers.host;
  pool.dispatch(
    {
      path: incoming.url ?? '/',
      method: incoming.method as 'POST',
      headers,
      body: hasBody(incoming) ? incoming : null,
    },
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
});
server.listen(config.PORT, '127.0.0.1');
process.once('SIGTERM', () => server.close(() => process.exit(0)));
