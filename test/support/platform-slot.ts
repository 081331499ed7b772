import { createServer, type Server } from 'node:net';

/**
 * The slots that bound how many end-to-end platforms run at once, whichever test workers run them: slot i is port
 * FIRST_SLOT_PORT + i, held by listening on it. The kernel frees a slot when its holder closes it or dies, so a
 * crashed worker never keeps one. The ports sit in 17800-17899: below the ports `freePort` hands out (20,000 up)
 * and apart from scripts/services' defaults and the drills' own servers (18000-18999).
 */
const FIRST_SLOT_PORT = 17_800;

/** Whether a test file starts a platform, and so takes a slot: the end-to-end files do. */
export const startsPlatform = (file: string) => file.includes('/test/e2e/');

const listen = (port: number) =>
  new Promise<Server | null>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });

/** Waits for one of `slots` slots to be free and takes it. */
export async function takePlatformSlot(slots: number): Promise<{ release(): Promise<void> }> {
  for (;;) {
    for (let i = 0; i < slots; i++) {
      const server = await listen(FIRST_SLOT_PORT + i);
      if (server) return { release: () => new Promise<void>((resolve) => server.close(() => resolve())) };
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}
