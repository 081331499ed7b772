import { afterAll, expect, inject } from 'vitest';
import { startsPlatform, takePlatformSlot } from './platform-slot';

/**
 * Every end-to-end file starts a platform of a score of processes, so at most `platformSlots` of them run at once
 * (vitest.groups.ts); the test workers beyond them run the packages' files meanwhile. A file waits for its slot
 * before its hooks, for as long as it takes: the waiting is not the file's, and no hook's timeout runs meanwhile.
 */
const file = expect.getState().testPath;
const slot = file && startsPlatform(file) ? await takePlatformSlot(inject('platformSlots')) : undefined;
// Registered before the file's own afterAll, so it runs after it: the slot is free once the platform is stopped.
afterAll(async () => {
  await slot?.release();
});
