import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Services } from '../context';
import { pollWithTicket } from '../waiting-room/poll';

const POLL = /^\/events\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/queue\/poll$/i;

/**
 * The request the platform answers most often, GET queue/poll with a queue ticket, answered straight from Node's
 * HTTP server: the same verb (pollWithTicket) and the same body as the app's route (routes/queue-poll.ts), without
 * the Request/Response objects of the fetch adapter, the router, the validators and the request log, which cost a
 * poll answered from memory more than the poll itself. Only a poll that succeeds is answered here: anything else
 * (another path, a malformed id, a ticket refused, a room being restored) goes to the app, which answers it with its
 * full stack (error body, request id, log), so the API's behaviour is the route's.
 */
export function withTicketPolls(services: Services, app: RequestListener): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const ticket = req.headers['x-queue-ticket'];
    const eventId = req.method === 'GET' ? POLL.exec(req.url ?? '')?.[1] : undefined;
    if (!eventId || typeof ticket !== 'string' || !ticket) return app(req, res);
    pollWithTicket({ ctx: services, eventId: eventId.toLowerCase(), ticket }).then(
      (answer) => {
        const body = JSON.stringify(answer);
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'cache-control': 'no-store',
        });
        res.end(body);
      },
      () => app(req, res),
    );
  };
}
