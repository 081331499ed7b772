import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSecrets, publishedTicketKeys, rotate, signingTicketKey } from '../../scripts/local-platform/secrets';

/** The launcher's kept secrets (scripts/local-platform/secrets.ts), without a platform. */
const dirs: string[] = [];
const file = () => {
  const dir = mkdtempSync(join(tmpdir(), 'onsale-secrets-'));
  dirs.push(dir);
  return join(dir, 'platform', 'secrets.json');
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the local platform secrets', () => {
  it('are generated once, owner-only, and read back unchanged by every later start; a new cell gets its own', async () => {
    const f = file();
    const first = await loadSecrets(f, ['cell-1']);
    expect(statSync(f).mode & 0o777).toBe(0o600);
    const again = await loadSecrets(f, ['cell-1']);
    expect(again).toEqual(first);
    const grown = await loadSecrets(f, ['cell-1', 'cell-2']);
    expect(grown.cells['cell-1']).toEqual(first.cells['cell-1']);
    expect(grown.kek).toEqual(first.kek);
    expect(grown.cells['cell-2']?.webhookSecret).toMatch(/^whsec_/);
    expect(grown.cells['cell-2']?.webhookSecret).not.toBe(first.cells['cell-1']?.webhookSecret);
  });

  it('without a file, are new at every start', async () => {
    const [a, b] = [await loadSecrets(undefined, ['c']), await loadSecrets(undefined, ['c'])];
    expect(a.kek.current).not.toBe(b.kek.current);
  });

  it('a file that is not the secrets is refused, naming it, not overwritten', async () => {
    const f = file();
    await loadSecrets(f, ['cell-1']);
    writeFileSync(f, '{"version":1}');
    await expect(loadSecrets(f, ['cell-1'])).rejects.toThrow(f);
    expect(readFileSync(f, 'utf8')).toBe('{"version":1}');
  });

  it('a ticket key rotation signs with a new key and keeps the old one published until a day after the events it covers', async () => {
    const s = await loadSecrets(undefined, ['cell-1', 'cell-2']);
    const old = signingTicketKey(s.cells['cell-1']!);
    const now = new Date('2026-12-04T12:00:00Z');
    await rotate(s, 'ticket-key', { cellId: 'cell-1', coveredUntil: new Date('2027-01-10T20:00:00Z'), now });
    const current = signingTicketKey(s.cells['cell-1']!);
    expect(current.public.kid).not.toBe(old.public.kid);
    const kids = (at: string) => publishedTicketKeys(s, new Date(at)).keys.map((k) => k.kid);
    // Every cell's signing key, and the retired one, until the last covered event has started and a day more.
    expect(kids('2027-01-11T19:00:00Z')).toEqual(
      expect.arrayContaining([old.public.kid, current.public.kid, signingTicketKey(s.cells['cell-2']!).public.kid]),
    );
    expect(kids('2027-01-11T21:00:00Z')).not.toContain(old.public.kid);
    expect(kids('2027-01-11T21:00:00Z')).toContain(current.public.kid);
  });

  it('a KEK rotation keeps the old KEK as previous (until the reseal); a webhook roll keeps the old secret beside the new', async () => {
    const s = await loadSecrets(undefined, ['cell-1']);
    const kek = s.kek.current;
    await rotate(s, 'kek');
    expect(s.kek.previous).toEqual([kek]);
    expect(s.kek.current).not.toBe(kek);
    const secret = s.cells['cell-1']!.webhookSecret;
    await rotate(s, 'webhook-secret', { cellId: 'cell-1' });
    expect(s.cells['cell-1']).toMatchObject({ previousWebhookSecret: secret });
    expect(s.cells['cell-1']!.webhookSecret).not.toBe(secret);
    await expect(rotate(s, 'ticket-key', { cellId: 'cell-9' })).rejects.toThrow('no cell cell-9');
  });
});
