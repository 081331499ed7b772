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

  it('does not hold up a GET (no body to measure)', async () => {
    const res = await h.app.request('/healthz');
    expect(res.status).toBe(200);
  });
});
