import { DirectoryFeed, type Logger } from '@onsale/contracts';
import { type Directory, type DirectorySnapshot, snapshotOf } from './directory';

export interface PollerOptions {
  url: string;
  intervalMs: number;
  timeoutMs: number;
  log: Logger;
  /** Called after a new version is taken. */
  onChange?: (snapshot: DirectorySnapshot) => void;
}

/**
 * Keeps the directory fresh by polling the control plane's feed with If-None-Match. When the control plane cannot
 * answer, the last good copy stays in use: ownership is still fenced by cell epochs and token checks, and routing
 * from a slightly old map beats refusing every buyer.
 */
export function startDirectoryPoller(directory: Directory, opts: PollerOptions) {
  let etag: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let failing = false;

  async function pollOnce(): Promise<void> {
    try {
      const res = await fetch(opts.url, {
        headers: etag ? { 'if-none-match': etag } : {},
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
      if (res.status === 304) {
        directory.confirm(Date.now());
      } else if (res.ok) {
        const feed = DirectoryFeed.parse(await res.json());
        const snapshot = snapshotOf(feed, Date.now());
        if (directory.replace(snapshot)) {
          etag = res.headers.get('etag') ?? undefined;
          opts.onChange?.(snapshot);
        } else opts.log.warn('directory feed older than the copy held; ignored', { version: feed.version });
      } else {
        await res.body?.cancel();
        throw new Error(`directory feed answered ${res.status}`);
      }
      if (failing) opts.log.info('directory feed reachable again', { version: directory.current?.version });
      failing = false;
    } catch (err) {
      // One line per outage, not one per poll.
      if (!failing) opts.log.warn('directory feed unavailable; keeping the last copy', { err });
      failing = true;
    }
  }

  const loop = async () => {
    await pollOnce();
    if (!stopped) timer = setTimeout(loop, opts.intervalMs);
  };
  const first = loop();

  return {
    /** Settles after the first attempt, loaded or not. */
    first,
    pollOnce,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
export type DirectoryPoller = ReturnType<typeof startDirectoryPoller>;
