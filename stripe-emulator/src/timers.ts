/**
 * Owns every timer the emulator schedules (delayed authorizations, authorization expiry,
 * webhook retries), so reset and shutdown can cancel all pending work at once.
 */
export class Timers {
  readonly #handles = new Set<NodeJS.Timeout>();

  schedule(delayMs: number, task: () => void): void {
    const handle = setTimeout(() => {
      this.#handles.delete(handle);
      task();
    }, delayMs);
    // Pending emulated work (a 7-day authorization expiry, say) must not keep a process alive.
    handle.unref();
    this.#handles.add(handle);
  }

  clear(): void {
    for (const handle of this.#handles) clearTimeout(handle);
    this.#handles.clear();
  }
}
