import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { QUEUE_TICKET_PREFIX, QueueTicketClaims } from '@onsale/contracts';
import { keksFrom } from '../config';
import type { Services } from '../context';

/**
 * Queue tickets (contracts' QueueTicketClaims): HMAC-SHA256 under a key each process derives (HKDF) from the
 * key-encryption key every control-plane process already holds, so any process verifies any other's tickets with no
 * shared state and no new secret to deploy. Tickets MACed under the previous KEK still verify while it is configured
 * (a KEK rotation strands no queued buyer); new ones use the current one.
 */
const INFO = 'onsale queue ticket v1';
const keyCache = new WeakMap<Services, Buffer[]>();

function ticketKeys(ctx: Services): Buffer[] {
  let keys = keyCache.get(ctx);
  if (!keys) {
    const { kek, previousKeks } = keksFrom(ctx.config);
    keys = [kek, ...previousKeks].map((k) => Buffer.from(hkdfSync('sha256', k, Buffer.alloc(0), INFO, 32)));
    keyCache.set(ctx, keys);
  }
  return keys;
}

const mac = (key: Buffer, body: string) => createHmac('sha256', key).update(body).digest();

export function issueTicket(ctx: Services, claims: QueueTicketClaims): string {
  const body = `${QUEUE_TICKET_PREFIX}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${body}.${mac(ticketKeys(ctx)[0]!, body).toString('base64url')}`;
}

/** The ticket's claims, or null when it is not a ticket this platform issued (malformed, altered, another key). */
export function verifyTicket(ctx: Services, ticket: string): QueueTicketClaims | null {
  const dot = ticket.lastIndexOf('.');
  if (dot < 0 || !ticket.startsWith(`${QUEUE_TICKET_PREFIX}.`)) return null;
  const body = ticket.slice(0, dot);
  const given = Buffer.from(ticket.slice(dot + 1), 'base64url');
  const genuine = ticketKeys(ctx).some((k) => {
    const want = mac(k, body);
    return given.length === want.length && timingSafeEqual(given, want);
  });
  if (!genuine) return null;
  try {
    const parsed = QueueTicketClaims.safeParse(
      JSON.parse(Buffer.from(body.slice(QUEUE_TICKET_PREFIX.length + 1), 'base64url').toString('utf8')),
    );
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
