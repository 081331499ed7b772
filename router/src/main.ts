import { configOrExit, createLogger, onShutdown } from '@onsale/contracts';
import { RouterConfig } from './config';
import { startRouter } from './router';

const config = configOrExit('router', RouterConfig);
const log = createLogger({ role: 'router' }, config.LOG_LEVEL);
let router: Awaited<ReturnType<typeof startRouter>>;
try {
  router = await startRouter(config);
} catch (err) {
  log.error('router failed to start', { err });
  process.exit(1);
}

// Stop taking connections, let in-flight requests finish, then leave; a stuck upstream cannot hold shutdown.
onShutdown(log, () => router.close(), 10_000);
