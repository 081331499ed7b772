import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { exportJWK, generateKeyPair, type JWK } from 'jose';

/**
 * What the local platform keeps secret, as Secrets Manager keeps it in the stacks: generated once, kept with
 * the platform's data (owner-only), reused by every later start and changed only by a rotation
 * (runbooks/rotate-keys.md). A start that drew new values would strand what the old ones sealed and signed.
 */
interface TicketKey {
  /** The private JWK (with its kid) the cell's ticket worker signs with. */
  signing: string;
  public: JWK;
  /** Set when a newer key took over signing: the key stays published for the tickets it signed. */
  retiredAt?: string;
  /** Published until then: the latest start of any event that existed when it retired, and a day. */
  publishedUntil?: string;
}

interface CellSecrets {
  /** Oldest first; the last one signs. */
  ticketKeys: TicketKey[];
  webhookSecret: string;
  /** During a roll: Stripe signs with both until the platform has started with the new one. */
  previousWebhookSecret?: string;
}

export interface LocalSecrets {
  version: 1;
  /** Key-encryption keys of the control plane's signing keys; `previous` only between a rotation and its reseal. */
  kek: { current: string; previous: string[] };
  internalToken: string;
  stripeKey: string;
  /** The development identity issuer's private JWK: buyers' and promoters' tokens outlive a restart, as a real provider's do. */
  identityKey: string;
  cells: Record<string, CellSecrets>;
}

/** What a later start relies on being there; anything else in the file is kept as it is. */
function isLocalSecrets(v: unknown): v is LocalSecrets {
  const s = v as Partial<LocalSecrets> | null;
  return (
    s?.version === 1 &&
    typeof s.kek?.current === 'string' &&
    Array.isArray(s.kek.previous) &&
    typeof s.internalToken === 'string' &&
    typeof s.stripeKey === 'string' &&
    typeof s.identityKey === 'string' &&
    typeof s.cells === 'object' &&
    Object.values(s.cells ?? {}).every((c) => c.ticketKeys?.length > 0 && c.webhookSecret?.startsWith('whsec_'))
  );
}

const kek = () => randomBytes(32).toString('base64');
const webhookSecret = () => `whsec_${randomBytes(24).toString('hex')}`;

async function ticketKey(): Promise<TicketKey> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const kid = `tickets-${randomBytes(4).toString('hex')}`;
  return {
    signing: JSON.stringify({ ...(await exportJWK(privateKey)), kid }),
    public: { ...(await exportJWK(publicKey)), kid, alg: 'EdDSA', use: 'sig' },
  };
}

async function identityKey(): Promise<string> {
  const { privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
  return JSON.stringify({ ...(await exportJWK(privateKey)), kid: `dev_${randomUUID().slice(0, 8)}`, alg: 'RS256' });
}

const newCell = async (): Promise<CellSecrets> => ({ ticketKeys: [await ticketKey()], webhookSecret: webhookSecret() });

/**
 * The platform's secrets: read from `file` when it exists (a cell new since then gets its own), else generated
 * and written there. Without a file (tests that start one platform once), generated and kept in memory only.
 */
export async function loadSecrets(file: string | undefined, cellIds: readonly string[]): Promise<LocalSecrets> {
  let secrets: LocalSecrets;
  if (file && existsSync(file)) {
    const stored: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (!isLocalSecrets(stored))
      throw new Error(`${file} is not the platform's secrets file: restore it, or wipe .data to start anew`);
    secrets = stored;
  } else {
    secrets = {
      version: 1,
      kek: { current: kek(), previous: [] },
      internalToken: randomBytes(24).toString('hex'),
      stripeKey: `sk_test_${randomBytes(12).toString('hex')}`,
      identityKey: await identityKey(),
      cells: {},
    };
  }
  const missing = cellIds.filter((id) => !secrets.cells[id]);
  for (const id of missing) secrets.cells[id] = await newCell();
  if (file && (missing.length || !existsSync(file))) saveSecrets(file, secrets);
  return secrets;
}

/** Written whole and renamed over the old file, readable by its owner only. */
export function saveSecrets(file: string, secrets: LocalSecrets): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
  chmodSync(file, 0o600);
}

/** The cell's signing key: the newest. */
export const signingTicketKey = (cell: CellSecrets) => cell.ticketKeys.at(-1)!;

/**
 * Every ticket key a door scanner may still need, across cells (a ticket issued in one cell still scans after
 * its event moved): the signing ones and the retired ones still inside their publication window.
 */
export function publishedTicketKeys(secrets: LocalSecrets, now = new Date()): { keys: JWK[] } {
  return {
    keys: Object.values(secrets.cells).flatMap((c) =>
      c.ticketKeys
        .filter((k, i, all) => i === all.length - 1 || !k.publishedUntil || new Date(k.publishedUntil) > now)
        .map((k) => k.public as JWK),
    ),
  };
}

export type Rotation = 'kek' | 'ticket-key' | 'webhook-secret';

/**
 * One rotation, applied to the secrets (the platform takes it at its next start):
 * - kek: a new KEK; the old one stays as previous until the start's reseal has sealed every key again;
 * - ticket-key: a cell signs with a new key; the old one stays published until `coveredUntil` (the latest
 *   start of the events it may have signed for) and a day;
 * - webhook-secret: a cell's endpoint gets a new secret; Stripe signs with both until the roll completes.
 */
export async function rotate(
  secrets: LocalSecrets,
  what: Rotation,
  o: { cellId?: string; coveredUntil?: Date; now?: Date } = {},
): Promise<string> {
  const now = o.now ?? new Date();
  if (what === 'kek') {
    secrets.kek = { current: kek(), previous: [secrets.kek.current, ...secrets.kek.previous] };
    return 'a new KEK seals from the next start; its reseal step retires the old one';
  }
  const cellId = o.cellId ?? Object.keys(secrets.cells)[0];
  const cell = cellId ? secrets.cells[cellId] : undefined;
  if (!cellId || !cell) throw new Error(`no cell ${cellId ?? '(none)'} in the secrets`);
  if (what === 'ticket-key') {
    const old = signingTicketKey(cell);
    const until = new Date(Math.max(now.getTime(), o.coveredUntil?.getTime() ?? 0) + 86_400_000);
    Object.assign(old, { retiredAt: now.toISOString(), publishedUntil: until.toISOString() });
    cell.ticketKeys.push(await ticketKey());
    return `${cellId} signs with ${String(signingTicketKey(cell).public.kid)}; ${String(old.public.kid)} stays published until ${until.toISOString()}`;
  }
  cell.previousWebhookSecret = cell.webhookSecret;
  cell.webhookSecret = webhookSecret();
  return `${cellId}'s webhook endpoint has a new secret; the old one is also signed with until the next roll`;
}
