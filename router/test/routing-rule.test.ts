import type { AdmissionClaims, DirectoryFeed } from '@onsale/contracts';
import { describe, expect, it } from 'vitest';
import { snapshotOf } from '../src/directory/directory';
import { classify } from '../src/routing/classify';
import { routeToCell, routeWebhook } from '../src/routing/rule';

const EVENT = '7d1f4a52-8f0e-4a57-9c1e-2a5f0b7d9e11';
const NEW_EVENT = '0b9a7c3e-1d2f-4e5a-8b6c-7d8e9f0a1b2c';

const feed: DirectoryFeed = {
  version: 7,
  cells: [
    { id: 'cell-1', baseUrl: 'http://cell-1.internal:8081', region: 'eu', status: 'active' },
    { id: 'cell-2', baseUrl: 'http://cell-2.internal:8081', region: 'eu', status: 'active' },
    { id: 'cell-3', baseUrl: 'http://cell-3.internal:8081', region: 'eu', status: 'draining' },
    { id: 'cell-4', baseUrl: 'http://cell-4.internal:8081', region: 'eu', status: 'down' },
  ],
  // The event moved from cell-1 to cell-2 at epoch 2.
  events: [{ eventId: EVENT, cellId: 'cell-2', epoch: 2 }],
};
const dir = snapshotOf(feed, 0);

const claims = (purchaseCell: string, directoryEpoch: number, eventId = EVENT): AdmissionClaims => ({
  jti: 'jti-12345678',
  sub: 'buyer-1',
  eventId,
  purchaseCell,
  directoryEpoch,
  iat: 0,
  exp: 1,
  aud: 'onsale:purchase',
  iss: 'onsale:control-plane',
});

describe('routeToCell', () => {
  it('routes by the directory without a token', () => {
    expect(routeToCell(dir, EVENT)).toMatchObject({ ok: true, cell: { id: 'cell-2' }, by: 'directory' });
    expect(routeToCell(dir, NEW_EVENT)).toMatchObject({ ok: false, code: 'event_not_found' });
  });

  it('routes by the token when it agrees with the directory', () => {
    expect(routeToCell(dir, EVENT, claims('cell-2', 2))).toMatchObject({
      ok: true,
      cell: { id: 'cell-2' },
      by: 'token',
    });
  });

  it('refuses a token minted before the event moved, or contradicting the directory at its epoch', () => {
    for (const epoch of [1, 2])
      expect(routeToCell(dir, EVENT, claims('cell-1', epoch))).toMatchObject({
        ok: false,
        code: 'admission_invalid',
        details: { reason: 'stale_cell' },
      });
  });

  it('trusts a token from a later epoch than our copy: the directory lags a move', () => {
    expect(routeToCell(dir, EVENT, claims('cell-1', 3))).toMatchObject({ ok: true, cell: { id: 'cell-1' } });
  });

  it('trusts a token for an event the directory does not list yet', () => {
    expect(routeToCell(dir, NEW_EVENT, claims('cell-1', 1, NEW_EVENT))).toMatchObject({
      ok: true,
      cell: { id: 'cell-1' },
    });
  });

  it("refuses a token for another event than the path's", () => {
    expect(routeToCell(dir, EVENT, claims('cell-2', 2, NEW_EVENT))).toMatchObject({
      ok: false,
      code: 'admission_invalid',
      details: { reason: 'event' },
    });
  });

  it('sends nothing to a cell that is not active, or unknown', () => {
    for (const [cell, status] of [
      ['cell-3', 'draining'],
      ['cell-4', 'down'],
      ['cell-9', 'unknown'],
    ])
      expect(routeToCell(dir, NEW_EVENT, claims(cell!, 9, NEW_EVENT))).toMatchObject({
        ok: false,
        code: 'cell_unavailable',
        details: { cellId: cell, status },
      });
  });
});

describe('routeWebhook', () => {
  it('delivers to active and draining cells, not to down ones; an unknown one is not found', () => {
    expect(routeWebhook(dir, 'cell-1')).toMatchObject({ ok: true });
    expect(routeWebhook(dir, 'cell-3')).toMatchObject({ ok: true });
    expect(routeWebhook(dir, 'cell-4')).toMatchObject({ ok: false, details: { status: 'down' } });
    expect(routeWebhook(dir, 'cell-9')).toMatchObject({ ok: false, code: 'not_found', details: { cellId: 'cell-9' } });
  });
});

describe('classify', () => {
  it.each([
    [`/events/${EVENT}/holds`, 'cell'],
    [`/events/${EVENT}/orders/abc`, 'cell'],
    [`/events/${EVENT}/orders/abc/hold`, 'cell'],
    [`/events/${EVENT}/availability`, 'cell'],
    [`/events/${EVENT}/orders/abc/tickets.pdf`, 'cell'],
    [`/events/${EVENT}/orders/abc/tickets/tkt_1/qr.svg`, 'cell'],
    [`/events/${EVENT}/tickets/keys`, 'cell'],
    [`/events/${EVENT}/tickets/voids`, 'cell'],
    [`/events/${EVENT}/ticketsx`, 'unknown'],
    [`/events/${EVENT}/queue`, 'control-plane'],
    [`/events/${EVENT}/queue/me`, 'control-plane'],
    [`/events/${EVENT}/onsale`, 'control-plane'],
    [`/events/${EVENT}`, 'control-plane'],
    ['/events', 'control-plane'],
    ['/console/anything', 'control-plane'],
    [`/events/${EVENT}/sales/summary`, 'control-plane'],
    ['/promoter', 'unknown'],
    ['/.well-known/jwks.json', 'control-plane'],
    ['/directory', 'unknown'],
    [`/events/${EVENT}/holds/../../../internal/signals`, 'malformed'],
    [`/events/${EVENT}/holds/%2E%2e/metrics`, 'malformed'],
    [`/events/${EVENT}/queue/..%2Foperator`, 'malformed'],
    [`/events/${EVENT}/holds\\..\\internal`, 'malformed'],
    ['http://elsewhere/internal/signals', 'malformed'],
    [`/events/${EVENT}/holds/%2e%2ex`, 'cell'],
    [`/events/${EVENT}/holds/..x`, 'cell'],
    ['/cells/cell-1/webhooks/stripe', 'webhook'],
    ['/operator/cells', 'unknown'],
    [`/internal/events/${EVENT}`, 'unknown'],
    [`/events/${EVENT}/holdsx`, 'unknown'],
  ])('%s → %s', (path, kind) => {
    expect(classify(path).kind).toBe(kind);
  });
});
