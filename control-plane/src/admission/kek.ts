import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** AES-256-GCM envelope for private key material at rest: v1.<iv>.<tag>.<ciphertext> (base64url). */
export function seal(kek: Buffer, plaintext: string, aad: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', kek, iv);
  c.setAAD(Buffer.from(aad));
  const ct = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
  return ['v1', iv.toString('base64url'), c.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

export function open(kek: Buffer, sealed: string, aad: string): string {
  const [v, iv, tag, ct] = sealed.split('.');
  if (v !== 'v1' || !iv || !tag || !ct) throw new Error('unknown key envelope');
  const d = createDecipheriv('aes-256-gcm', kek, Buffer.from(iv, 'base64url'));
  d.setAAD(Buffer.from(aad));
  d.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
}

/**
 * Opens with the first key-encryption key that can: the current one, then those it replaced (a KEK
 * rotation keeps the old one until every row is sealed again). `null` when none opens it.
 */
export function openWithAny(
  keks: readonly Buffer[],
  sealed: string,
  aad: string,
): { plaintext: string; kekIndex: number } | null {
  for (const [kekIndex, kek] of keks.entries()) {
    try {
      return { plaintext: open(kek, sealed, aad), kekIndex };
    } catch {
      // GCM refuses a wrong key (its tag does not match): try the next one.
    }
  }
  return null;
}
