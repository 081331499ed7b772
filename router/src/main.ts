import { createLogger, onShutdown } from '@onsale/contracts';
import { loadConfig } from './config';
import { startRouter } from './router';

const log = createLogger({ role: 'router' });
let router: Awaited<ReturnType<typeof startRouter>>;
try {
  router = await startRouter(loadConfig());
} catch (err) {
  log.error('router failed to start', { err });
  process.exit(1);
}

// Stop taking connections, let in-flight requests finish, then leave; a stuck upstream cannot hold shutdown.
onShutdown(log, () => router.close(), 10_000);
