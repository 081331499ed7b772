import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Bench } from '../../load-tests/lib/harness';
import { repoRoot, startProcess } from '../../scripts/local-platform/process';

/** nginx as a plain keep-alive reverse proxy to an upstream (the bench's cell): one worker (the router is one Node process), no logs. */
export async function startNginx(
  binary: string,
  ports: { port: number; upstreamPort: number },
  started: Bench['started'],
): Promise<void> {
  const prefix = resolve(repoRoot, `.data/bench-nginx-${ports.port}`);
  mkdirSync(resolve(prefix, 'logs'), { recursive: true });
  const conf = resolve(prefix, 'nginx.conf');
  writeFileSync(
    conf,
    `daemon off;
worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${prefix}/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${prefix}/client_body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  upstream cell { server 127.0.0.1:${ports.upstreamPort}; keepalive 64; }
  server {
    listen 127.0.0.1:${ports.port};
    location / {
      proxy_pass http://cell;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
    }
  }
}
`,
  );
  // `daemon off`: the child is nginx's master itself, so its PID is the one to stop; SIGQUIT lets in-flight
  // requests finish, then the master and its worker exit. Ready once it forwards the cell's /healthz.
  await startProcess(
    'nginx',
    {},
    {
      command: [binary, '-p', prefix, '-c', conf],
      readyUrl: `http://127.0.0.1:${ports.port}/healthz`,
      timeoutMs: 10_000,
      stopSignal: 'SIGQUIT',
      spawned: started,
    },
  ).catch((err: Error) => {
    throw new Error(`nginx (${binary}) did not start: ${err.message}`);
  });
}
