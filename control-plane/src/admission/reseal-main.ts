import { fileURLToPath } from 'node:url';
import { configOrExit, createLogger } from '@onsale/contracts';
import { keksFrom, ResealKeysConfig } from '../config';
import { createDb } from '../db/client';
import { systemClock } from '../lib/clock';
import { AdmissionKeyStore } from './key-store';

/**
 * A KEK rotation's second step, run once as its own task (runbooks/rotate-keys.md): seals every admission
 * signing key again under SIGNING_KEY_KEK, opening each with SIGNING_KEY_KEK_PREVIOUS where needed. Exits 1
 * when a key opens with none of them (it is named), so the old KEK is not retired while a key still needs it.
 */
export async function resealSigningKeys(config: ResealKeysConfig) {
  const { db, pool } = createDb(config.DATABASE_URL_CONTROL_PLANE, 1, config);
  try {
    const store = new AdmissionKeyStore({
      db,
      ...keksFrom(config),
      clock: systemClock,
      tokenTtlSeconds: 0,
      announceSeconds: 0,
      rotationIntervalSeconds: 0,
    });
    return await store.reseal();
  } finally {
    await pool.end();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const config = configOrExit('control-plane-reseal-keys', ResealKeysConfig);
  const log = createLogger({ service: 'control-plane', role: 'reseal-keys' });
  const result = await resealSigningKeys(config);
  if (result.unopenable.length) {
    log.error('signing keys no KEK opens: keep the old KEK until they are sealed again or retired', {
      unopenable: result.unopenable,
    });
    process.exit(1);
  }
  log.info('signing keys sealed under the current KEK', {
    resealed: result.resealed.length,
    alreadyCurrent: result.current,
  });
}
