import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { onSocket } from '../../test/support/raw-http';
import { ErrorBody } from '../src/errors';
import { answerUnparsableRequests, ERROR_CODE_HEADER } from '../src/runtime/http-errors';

const servers: Server[] = [];
afterAll(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
});

async function listening(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

const answer = (_req: unknown, res: { end(body: string): void }) => res.end('ok');
const oversized = `GET / HTTP/1.1\r\nHost: t\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`;

describe('a request the HTTP parser refuses', () => {
  it('headers over the limit: 431 in the one error body, with its code header, and the connection closed', async () => {
    const port = await listening(answerUnparsableRequests(createServer(answer)));
    const res = await onSocket(port, oversized);
    expect(res.status).toBe(431);
    expect(res.head).toMatch(/\r\ncontent-type: application\/json/i);
    expect(res.head).toMatch(new RegExp(`\\r\\n${ERROR_CODE_HEADER}: headers_too_large`, 'i'));
    expect(res.head).toMatch(/\r\nconnection: close/i);
    const body = ErrorBody.parse(JSON.parse(res.body));
    expect(body.error).toMatchObject({ code: 'headers_too_large', details: { reason: 'HPE_HEADER_OVERFLOW' } });
    expect(body.error.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("a method HTTP does not have, or a request line that is not HTTP: 400 bad_request naming the parser's reason", async () => {
    const port = await listening(answerUnparsableRequests(createServer(answer)));
    const method = await onSocket(port, 'FOO / HTTP/1.1\r\nHost: t\r\n\r\n');
    expect(method.status).toBe(400);
    expect(JSON.parse(method.body)).toMatchObject({
      error: { code: 'bad_request', details: { reason: 'HPE_INVALID_METHOD' } },
    });
    const garbage = await onSocket(port, '\x16\x03\x01 not http\r\n\r\n');
    expect(garbage.status).toBe(400);
    expect(JSON.parse(garbage.body)).toMatchObject({ error: { code: 'bad_request' } });
  });

  it('writes nothing into an answer already under way: a bad request pipelined behind a good one', async () => {
    const port = await listening(answerUnparsableRequests(createServer(answer)));
    const res = await onSocket(port, 'GET / HTTP/1.1\r\nHost: t\r\n\r\nFOO / HTTP/1.1\r\nHost: t\r\n\r\n');
    expect(res.status).toBe(200);
    expect(res.body).toBe('ok');
  });

  it('where a plain Node server answers with a bare status and no body', async () => {
    const port = await listening(createServer(answer));
    const res = await onSocket(port, oversized);
    expect(res.status).toBe(431);
    expect(res.body).toBe('');
  });
});
