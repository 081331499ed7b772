import type { CellStatus, DirectoryFeed } from '@onsale/contracts';

export interface CellEntry {
  id: string;
  baseUrl: string;
  region: string;
  status: CellStatus;
}

export interface EventPlacement {
  cellId: string;
  epoch: number;
  /** Being evacuated: new holds wait (503 event_moving) until the directory flips it to its new cell. */
  moving?: boolean;
  /** The cells it sold in before, most recent first: its older orders live there. */
  formerCells?: readonly string[];
}

/** One immutable copy of the control plane's directory, indexed for the request path. */
export interface DirectorySnapshot {
  version: number;
  fetchedAt: number;
  cells: ReadonlyMap<string, CellEntry>;
  events: ReadonlyMap<string, EventPlacement>;
}

export function snapshotOf(feed: DirectoryFeed, fetchedAt: number): DirectorySnapshot {
  return {
    version: feed.version,
    fetchedAt,
    cells: new Map(feed.cells.map((c) => [c.id, c])),
    events: new Map(
      feed.events.map((e) => [
        e.eventId,
        {
          cellId: e.cellId,
          epoch: e.epoch,
          ...(e.moving ? { moving: true } : {}),
          ...(e.formerCells?.length ? { formerCells: e.formerCells } : {}),
        },
      ]),
    ),
  };
}

/**
 * Holds the latest snapshot. Requests read it synchronously; the poller swaps it whole, so a request never sees
 * half of one version and half of another.
 */
export class Directory {
  #current: DirectorySnapshot | null = null;

  get current(): DirectorySnapshot | null {
    return this.#current;
  }

  /**
   * Accepts a snapshot unless it is older than the one held: behind a load balancer a lagging control-plane replica
   * could otherwise flip an event back to the cell it just left.
   */
  replace(next: DirectorySnapshot): boolean {
    if (this.#current && next.version < this.#current.version) return false;
    this.#current = next;
    return true;
  }

  /** Refreshes the age of the copy held when the control plane answers 304 (it is still current). */
  confirm(at: number): void {
    if (this.#current) this.#current = { ...this.#current, fetchedAt: at };
  }
}
