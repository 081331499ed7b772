import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type CellStores, cellStores } from '../../scripts/local-platform/topology';
import { readServicesEnv, repoRoot } from './services';

const exec = promisify(execFile);

/**
 * Servers of a drill's own: `scripts/services` with its state in a temporary directory and its control-plane
 * instance on these ports (a cell's instance on the next ones, 10 apart). The drill may kill, freeze or promote them
 * while other files run beside it on the shared servers; `remove` stops them and deletes their state. Their ports
 * sit in 18000-18999: below the ports `freePort` hands out (20,000 up), so no platform starting beside the drill
 * picks one before the drill's server binds it, and apart from scripts/services' defaults.
 */
export function ownServers(name: string, ports: { postgres?: number; redis?: number; kafka?: number }) {
  const data = mkdtempSync(join(tmpdir(), `onsale-${name}-`));
  const env: NodeJS.ProcessEnv = { ...process.env, ONSALE_DATA: data, ONSALE_PG_FAST: '1' };
  if (ports.postgres) env.ONSALE_PG_PORT = String(ports.postgres);
  if (ports.redis) env.ONSALE_REDIS_PORT = String(ports.redis);
  if (ports.kafka) env.ONSALE_KAFKA_PORT = String(ports.kafka);
  // Longer than the script's own wait for a server to answer (ONSALE_SERVICES_TIMEOUT, 120 s): a server slow to
  // start fails there, with its log's tail in the error, rather than being cut off here with nothing to read.
  const services = (...args: string[]) =>
    exec('bash', ['scripts/services', ...args], { cwd: repoRoot, env, timeout: 240_000 });
  return {
    data,
    /** The environment `scripts/services` runs with for these servers. */
    env,
    services,
    /** A cell's stores (`c1`, ...) as these servers' services.env names them (`services('start', …)` writes it). */
    cellStores: (cellId: string): CellStores => cellStores(cellId, readServicesEnv(join(data, 'services.env'))),
    /** The control-plane instance's PostgreSQL server, Redis and broker, once `services('start', …)` started them. */
    postgresUrl: ports.postgres ? `postgres://onsale:onsale@127.0.0.1:${ports.postgres}` : undefined,
    redisUrl: ports.redis ? `redis://127.0.0.1:${ports.redis}` : undefined,
    kafkaBrokers: ports.kafka ? `127.0.0.1:${ports.kafka}` : undefined,
    async remove() {
      await services('down').catch(() => {});
      rmSync(data, { recursive: true, force: true });
    },
  };
}
