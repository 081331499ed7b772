import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CellStatus, DirectoryFeed } from '@onsale/contracts';
import { RouterConfig } from '../src/config';
import { type RunningRouter, startRouter } from '../src/router';

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** A plain HTTP server on a free port that records every request (body included) before answering it. */
export async function startFakeServer(handle: (req: Recorded, res: ServerResponse) => void | Promise<void>) {
  const requests: Recorded[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of req) chunks.push(chunk as Buffer);
    } catch {
      return; // the client (the router) gave up on the body
    }
    const recorded = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) };
    requests.push(recorded);
    await handle(recorded, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * The control plane as the router sees it: a directory feed (with ETag / 304) the test edits, and a catch-all that
 * records the control-plane paths the router forwards.
 */
export async function startFakeControlPlane() {
  let feed: DirectoryFeed = { version: 1, cells: [], events: [] };
  /** The feed's answers so far: whole copies (200) and "yours is current" (304). */
  const feedAnswers = { full: 0, notModified: 0 };
  const server = await startFakeServer((req, res) => {
    if (req.url === '/directory') {
      const etag = `"dir-${feed.version}"`;
      if (req.headers['if-none-match'] === etag) {
        feedAnswers.notModified++;
        return void res.writeHead(304, { etag }).end();
      }
      feedAnswers.full++;
      return void res.writeHead(200, { 'content-type': 'application/json', etag }).end(JSON.stringify(feed));
    }
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ servedBy: 'control-plane', method: req.method, url: req.url }));
  });
  return {
    url: server.url,
    requests: server.requests,
    feedAnswers: () => ({ ...feedAnswers }),
    /** Edits the feed; the version moves on, as the control plane's does with any change. */
    update(edit: (feed: DirectoryFeed) => void) {
      const next = structuredClone(feed);
      edit(next);
      feed = { ...next, version: feed.version + 1 };
    },
    addCell(id: string, baseUrl: string, status: CellStatus = 'active') {
      this.update((f) => {
        f.cells.push({ id, baseUrl, region: 'local', status });
      });
    },
    placeEvent(eventId: string, cellId: string, epoch = 1, formerCells?: string[]) {
      this.update((f) => {
        f.events = f.events.filter((e) => e.eventId !== eventId);
        f.events.push({ eventId, cellId, epoch, ...(formerCells ? { formerCells } : {}) });
      });
    },
    setStatus(cellId: string, status: CellStatus) {
      this.update((f) => {
        for (const c of f.cells) if (c.id === cellId) c.status = status;
      });
    },
    close: server.close,
  };
}
export type FakeControlPlane = Awaited<ReturnType<typeof startFakeControlPlane>>;

/**
 * A router on a free port in front of the fake control plane, with the test identity's admission keys, and its
 * metrics on a free health port of their own.
 */
export function routerFor(
  controlPlane: FakeControlPlane,
  admissionJwksUrl: string,
  env: Record<string, string> = {},
): Promise<RunningRouter> {
  return startRouter(
    RouterConfig.parse({
      PORT: '0',
      HEALTH_PORT: '0',
      CONTROL_PLANE_URL: controlPlane.url,
      ADMISSION_JWKS_URL: admissionJwksUrl,
      // The tests refresh the directory themselves after each edit; the poll only has to keep running.
      DIRECTORY_POLL_MS: '200',
      LOG_LEVEL: 'warn',
      ...env,
    }),
  );
}

/** The router's metrics, as the collector beside it reads them: from its health port, never its public one. */
export async function routerMetricsText(router: RunningRouter): Promise<string> {
  if (!router.healthUrl) throw new Error('the router has no HEALTH_PORT: it serves no metrics');
  const res = await fetch(`${router.healthUrl}/metrics`);
  if (res.status !== 200) throw new Error(`the router's /metrics answered ${res.status}`);
  return res.text();
}

export async function metricValue(router: RunningRouter, series: string): Promise<number> {
  const text = await routerMetricsText(router);
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}
