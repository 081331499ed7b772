import { optionsFromEnv } from './config.js';
import { createEmulator } from './emulator.js';
import { jsonLogger } from './log.js';

// CLI: `tsx stripe-emulator/src/main.ts`. Configuration comes from the environment (see config.ts).

const log = jsonLogger();
const options = optionsFromEnv(process.env);
const emulator = await createEmulator({ ...options, log });
log('info', 'stripe emulator listening', {
  url: emulator.url,
  webhookEndpoints: emulator.control.webhookEndpoints().length,
  // Publishable keys are public by design (they ship in web pages): safe to log.
  publishableKey: options.publishableKey ?? 'any pk_test_ key',
});

let stopping = false;
async function shutdown(signal: NodeJS.Signals): Promise<void> {
  if (stopping) return;
  stopping = true;
  log('info', 'stripe emulator stopping', { signal });
  await emulator.close();
  process.exit(0);
}

process.on('SIGTERM', (signal) => void shutdown(signal));
process.on('SIGINT', (signal) => void shutdown(signal));
