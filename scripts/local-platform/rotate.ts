/**
 * `bash scripts/platform rotate <what> [cellId]`: one of the rotations runbooks/rotate-keys.md describes, on the
 * local platform's kept secrets (.data/platform/secrets.json). They take effect at the platform's next start:
 *   kek              a new key-encryption key; the start reseals every admission signing key, then retires the old
 *   ticket-key       the cell signs tickets with a new key; the old one stays published for the tickets it signed
 *   webhook-secret   the cell's Stripe endpoint gets a new secret; Stripe signs with both through the next start
 * The admission signing key rotates on its own schedule, or now through the control plane's operator route
 * (POST /operator/signing-keys/rotate) on a running platform.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { createDb } from '@onsale/control-plane/db/client';
import { repoRoot } from './process';
import { loadSecrets, type Rotation, rotate, saveSecrets } from './secrets';

const ROTATIONS: Rotation[] = ['kek', 'ticket-key', 'webhook-secret'];
export const secretsFile = resolve(repoRoot, '.data/platform/secrets.json');

/** The latest start of any event the control plane knows: every ticket a retiring key signed is for one of them. */
async function latestEventStart(databaseUrl: string): Promise<Date | undefined> {
  const { pool } = createDb(databaseUrl, 1);
  try {
    const { rows } = await pool.query<{ latest: Date | null }>('SELECT max(starts_at) AS latest FROM events');
    return rows[0]?.latest ?? undefined;
  } finally {
    await pool.end();
  }
}

/** Applies one rotation to a secrets file; returns what it did, in a sentence. */
export async function rotateSecrets(
  file: string,
  what: Rotation,
  o: { cellId?: string; controlPlaneDatabaseUrl?: string } = {},
): Promise<string> {
  if (!existsSync(file)) throw new Error(`${file} does not exist: start the platform once first`);
  const secrets = await loadSecrets(file, []);
  const coveredUntil =
    what === 'ticket-key' && o.controlPlaneDatabaseUrl ? await latestEventStart(o.controlPlaneDatabaseUrl) : undefined;
  const done = await rotate(secrets, what, { cellId: o.cellId, coveredUntil });
  saveSecrets(file, secrets);
  return done;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(repoRoot, 'scripts/local-platform/rotate.ts')) {
  const [what, cellId] = process.argv.slice(2);
  if (!ROTATIONS.includes(what as Rotation)) {
    console.error(`usage: bash scripts/platform rotate ${ROTATIONS.join('|')} [cellId]`);
    process.exit(2);
  }
  const databaseUrl = process.env.DATABASE_URL_CONTROL_PLANE;
  if (what === 'ticket-key' && !databaseUrl) {
    console.error(
      'DATABASE_URL_CONTROL_PLANE is not set: run through "bash scripts/platform rotate", which sources .data/services.env',
    );
    process.exit(2);
  }
  console.log(await rotateSecrets(secretsFile, what as Rotation, { cellId, controlPlaneDatabaseUrl: databaseUrl }));
  console.log('the platform takes it at its next start: bash scripts/platform down; bash scripts/platform up');
}
