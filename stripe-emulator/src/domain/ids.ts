import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Random base62 text, the alphabet Stripe uses in object ids and secrets. */
export function randomToken(length: number): string {
  let token = '';
  for (const byte of randomBytes(length)) token += ALPHABET[byte % ALPHABET.length];
  return token;
}

export type IdPrefix = 'pi' | 'ch' | 're' | 'evt' | 'pm' | 'req' | 'we';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomToken(24)}`;
}

export function newClientSecret(paymentIntentId: string): string {
  return `${paymentIntentId}_secret_${randomToken(25)}`;
}

export function newWebhookSecret(): string {
  return `whsec_${randomToken(32)}`;
}

export function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}
