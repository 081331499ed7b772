import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../test/support/control-plane';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { MAX_BODY_BYTES: '1024' } });
});
afterAll(async () => {
  await h?.close();
});

describe('the body limit', () => {
  it('refuses a body over MAX_BODY_BYTES with 413 payload_too_large, declared or streamed', async () => {
    const token = await h.buyer('limit-1');
    const big = 'x'.repeat(2048);
    const declared = await h.app.request('/events/00000000-0000-4000-8000-000000000001/queue', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': '2048' },
      body: big,
    });
    expect(declared.status).toBe(413);
    expect((await declared.json()).error.code).toBe('payload_too_large');
    const streamed = await h.app.request('/events/00000000-0000-4000-8000-000000000001/queue', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: new Blob([big]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
  });

  it('a body in a media type the route does not take is 415 naming the header; the document lists 413 and 415 on every operation with a body', async () => {
    const tenant = await h.tenant();
    const res = await h.app.request('/events', {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.owner}`, 'content-type': 'text/plain' },
      body: JSON.stringify({ name: 'n', venue: 'v', timeZone: 'UTC', startsAt: '2030-01-01T20:00:00Z' }),
    });
    expect(res.status).toBe(415);
    expect((await res.json()).error).toMatchObject({
      code: 'unsupported_media_type',
      details: { header: 'content-type', given: 'text/plain' },
    });
    // biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is inspected ad hoc
    const doc: any = await (await h.app.request('/openapi.json')).json();
    const bodied = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops as Record<string, { requestBody?: unknown; responses: object }>)
        .filter(([, op]) => op.requestBody)
        .map(([method, op]) => [`${method} ${path}`, Object.keys(op.responses)] as const),
    );
    expect(bodied.length).toBeGreaterThanOrEqual(10);
    for (const [op, statuses] of bodied) expect(statuses, op).toEqual(expect.arrayContaining(['413', '415']));
  });

  it('does not hold up a GET (no body to measure)', async () => {
    const res = await h.app.request('/healthz');
    expect(res.status).toBe(200);
  });

  it("behind Node's HTTP parser: judges a declared length by its header, counts a chunked body, lets a body-less POST through", async () => {
    const server = serve({ fetch: h.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((r) => server.once('listening', () => r()));
    const { port } = server.address() as AddressInfo;
    const token = await h.buyer('limit-2');
    const send = (headers: Record<string, string>, chunks: string[]) =>
      new Promise<{ status: number; code?: string }>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/events/00000000-0000-4000-8000-000000000001/queue',
            headers,
          },
          (res) => {
            let body = '';
            res.on('data', (d: Buffer) => {
              body += d;
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, code: JSON.parse(body || '{}').error?.code }));
          },
        );
        req.on('error', reject);
        for (const chunk of chunks) req.write(chunk);
        req.end();
      });
    try {
      const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const big = 'x'.repeat(2048);
      expect(await send({ ...auth, 'content-length': '2048' }, [big])).toEqual({
        status: 413,
        code: 'payload_too_large',
      });
      // No Content-Length: Node sends it chunked (Transfer-Encoding), and the limit counts it as it arrives.
      expect(await send(auth, [big.slice(0, 1024), big.slice(1024)])).toEqual({
        status: 413,
        code: 'payload_too_large',
      });
      // A join has no body: it reaches the route (404 for an event without a waiting room), not the limit.
      expect(await send({ authorization: `Bearer ${token}` }, [])).toEqual({ status: 404, code: 'not_found' });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
