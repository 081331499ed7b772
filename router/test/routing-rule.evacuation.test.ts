import type { AdmissionClaims, DirectoryFeed } from '@onsale/contracts';
import { describe, expect, it } from 'vitest';
import { snapshotOf } from '../src/directory/directory';
import { routeToCell } from '../src/routing/rule';

const EVENT = '7d1f4a52-8f0e-4a57-9c1e-2a5f0b7d9e11';
const cells: DirectoryFeed['cells'] = [
  { id: 'cell-1', baseUrl: 'http://cell-1.internal:8081', region: 'eu', status: 'active' },
  { id: 'cell-2', baseUrl: 'http://cell-2.internal:8081', region: 'eu', status: 'active' },
];
const claims = (purchaseCell: string, directoryEpoch: number): AdmissionClaims => ({
  jti: 'jti-12345678',
  sub: 'buyer-1',
  eventId: EVENT,
  purchaseCell,
  directoryEpoch,
  iat: 0,
  exp: 1,
  aud: 'onsale:purchase',
  iss: 'onsale:control-plane',
});

describe('routing an event under evacuation', () => {
  // Fenced: still on cell-1 at epoch 3, moving.
  const moving = snapshotOf(
    { version: 1, cells, events: [{ eventId: EVENT, cellId: 'cell-1', epoch: 3, moving: true }] },
    0,
  );
  // Flipped: on cell-2 at epoch 4.
  const moved = snapshotOf({ version: 2, cells, events: [{ eventId: EVENT, cellId: 'cell-2', epoch: 4 }] }, 0);

  it('pauses new holds of a moving event; order reads and releases still reach the source', () => {
    expect(routeToCell(moving, EVENT, claims('cell-1', 2), 'new_hold')).toMatchObject({
      ok: false,
      code: 'event_moving',
      details: { eventId: EVENT, cellId: 'cell-1' },
    });
    expect(routeToCell(moving, EVENT, undefined, 'new_hold')).toMatchObject({ ok: false, code: 'event_moving' });
    expect(routeToCell(moving, EVENT, claims('cell-1', 2), 'order')).toMatchObject({
      ok: true,
      cell: { id: 'cell-1' },
    });
  });

  it('after the flip, a new hold with a token for the old cell is refused with admission_cell_moved', () => {
    expect(routeToCell(moved, EVENT, claims('cell-1', 3), 'new_hold')).toMatchObject({
      ok: false,
      code: 'admission_cell_moved',
      details: { eventId: EVENT, cellId: 'cell-2', epoch: 4 },
    });
    expect(routeToCell(moved, EVENT, claims('cell-2', 4), 'new_hold')).toMatchObject({
      ok: true,
      cell: { id: 'cell-2' },
    });
  });

  it('after the flip, an order read with a token for the old cell goes to the old cell, where the order lives', () => {
    expect(routeToCell(moved, EVENT, claims('cell-1', 3), 'order')).toMatchObject({ ok: true, cell: { id: 'cell-1' } });
    expect(routeToCell(moved, EVENT, undefined, 'order')).toMatchObject({ ok: true, cell: { id: 'cell-2' } });
  });
});
