import { randomUUID } from 'node:crypto';
import type { EventLoad } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { eventLoad, loadIntoCell } from '../../test/support/seed';

/**
 * The promoter's refund route (POST /internal/events/{eventId}/orders/{orderId}/refund) refuses bad
 * input naming the field, checks the caller, then the ids, then the body's size, and its OpenAPI document
 * lists every status it answers. The refund itself is in returned-seats.test.ts.
 */
let identity: TestIdentity;
let cell: TestCell;
let event: EventLoad;
const answered = new Set<number>();

beforeAll(async () => {
  identity = await startIdentity();
  cell = await startTestCell(identity);
  event = await loadIntoCell(cell, eventLoad(5));
});
afterAll(async () => {
  await cell?.close();
  await identity?.close();
});

async function refund(
  ids: { eventId?: string; orderId?: string },
  body: string,
  token: string | null = cell.internalToken,
): Promise<{ status: number; error: { code: string; details?: { issues?: { path: string }[] } } }> {
  const res = await fetch(
    `${cell.url}/internal/events/${ids.eventId ?? event.eventId}/orders/${ids.orderId ?? randomUUID()}/refund`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body,
    },
  );
  answered.add(res.status);
  return { status: res.status, ...(await res.json()) };
}
const reason = (text: unknown) => JSON.stringify({ reason: text });
const paths = (r: Awaited<ReturnType<typeof refund>>) => r.error.details?.issues?.map((i) => i.path);
const OVER_4_KIB = reason('x'.repeat(5_000));

describe('the refund route refuses bad input, naming the field', () => {
  for (const orderId of ['not-a-uuid', '12345678-1234-1234-1234-123456789012', `${randomUUID()}0`, '%20']) {
    it(`orderId ${JSON.stringify(orderId)}: 400 naming orderId, with a small body or one over the limit`, async () => {
      for (const body of [reason('buyer cannot attend'), OVER_4_KIB]) {
        const r = await refund({ orderId }, body);
        expect(r.status).toBe(400);
        expect(r.error.code).toBe('validation_failed');
        expect(paths(r)).toEqual(['orderId']);
      }
    });
  }

  it('a malformed eventId: 400 naming eventId', async () => {
    const r = await refund({ eventId: 'event-1' }, OVER_4_KIB);
    expect(r.status).toBe(400);
    expect(paths(r)).toEqual(['eventId']);
  });

  const bodies: [string, string, string][] = [
    ['a reason of 201 characters', reason('x'.repeat(201)), 'reason'],
    ['an empty reason', reason(''), 'reason'],
    ['a number for the reason', reason(42), 'reason'],
    ['no reason', JSON.stringify({}), 'reason'],
    ['an unknown field', JSON.stringify({ reason: 'fraud', amount: 1 }), 'amount'],
  ];
  for (const [name, body, field] of bodies) {
    it(`${name}: 400 naming ${field}`, async () => {
      const r = await refund({}, body);
      expect(r.status).toBe(400);
      expect(r.error.code).toBe('validation_failed');
      expect(paths(r)).toContain(field);
    });
  }

  it('a reason of 200 characters is accepted (an unknown order is then a 404)', async () => {
    const r = await refund({}, reason('x'.repeat(200)));
    expect(r.status).toBe(404);
    expect(r.error.code).toBe('not_found');
  });

  it('malformed JSON: 400 bad_request', async () => {
    const r = await refund({}, '{"reason": ');
    expect(r.status).toBe(400);
    expect(r.error.code).toBe('bad_request');
  });

  it('a body over 4 KiB with well-formed ids: 413 payload_too_large', async () => {
    const r = await refund({}, OVER_4_KIB);
    expect(r.status).toBe(413);
    expect(r.error.code).toBe('payload_too_large');
  });

  it('without the internal token: 401 before the ids or the body are looked at', async () => {
    for (const token of [null, 'wrong']) {
      const r = await refund({ orderId: 'not-a-uuid' }, OVER_4_KIB, token);
      expect(r.status).toBe(401);
      expect(r.error.code).toBe('unauthenticated');
    }
  });

  it('any refund asked of a fenced writer: 503 epoch_fenced', async () => {
    await cell.db.query('UPDATE cell_epoch SET epoch = epoch + 1 WHERE cell_id = $1', [cell.cellId]);
    try {
      const r = await refund({}, reason('fraud'));
      expect(r.status).toBe(503);
      expect(r.error.code).toBe('epoch_fenced');
    } finally {
      await cell.db.query('UPDATE cell_epoch SET epoch = epoch - 1 WHERE cell_id = $1', [cell.cellId]);
    }
  });

  it('its OpenAPI document lists every status the route answered here, and 200 and 409', async () => {
    const doc = await (await fetch(`${cell.url}/openapi.json`)).json();
    const documented = Object.keys(doc.paths['/internal/events/{eventId}/orders/{orderId}/refund'].post.responses);
    expect(documented.sort()).toEqual(['200', '400', '401', '404', '409', '413', '415', '503']);
    for (const status of answered) expect(documented, `status ${status}`).toContain(String(status));
  });
});
