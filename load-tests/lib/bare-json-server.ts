/**
 * The reference for the waiting room's HTTP polls: a bare Node HTTP server that answers every request
 * with the same JSON body (BARE_BODY, a copy of a real poll's answer), so what the waiting room costs
 * beyond Node's own HTTP handling shows as the ratio between the two. PORT on 127.0.0.1.
 */
import { createServer } from 'node:http';

const body = Buffer.from(process.env.BARE_BODY ?? '{}');
const server = createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.once('SIGTERM', () => server.close(() => process.exit(0)));
