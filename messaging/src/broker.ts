/**
 * The platform's view of a message broker (the cells' workers, the control plane's fact relay, the reporting
 * consumer): publish a batch durably, run a consumer group with manual offsets. Kafka implements it today; a
 * PostgreSQL-backed transport may implement it for laptops, and both must pass the same contract tests.
 */
export interface OutgoingMessage {
  key: string;
  value: string;
  headers?: Record<string, string>;
}

export interface IncomingMessage {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  value: string;
  headers: Record<string, string>;
}

/**
 * What a handler tells the transport: `done` once the message's effect is durable (its offset
 * may then be committed), or `later` to have the same message delivered again no earlier than
 * `at` (its partition waits; the offset is not committed).
 *
 * A handler that makes one effect of many messages (the reporting consumer's batches) answers `held`: the
 * partition reads on, and its offset moves only when the handler commits through its PartitionControl once the
 * batch's effect is durable; `replay` delivers the partition again from an offset it held (a batch that failed),
 * no earlier than `at` when given (its partition waits meanwhile).
 * A consumer group uses `done`/`later` or `held`/`replay`, not both.
 */
export type Disposition =
  | { kind: 'done' }
  | { kind: 'later'; at: number }
  | { kind: 'held' }
  | { kind: 'replay'; from: string; at?: number };

/** A handler's hold on the partition a message came from, usable after `handle` returned (a timed flush). */
export interface PartitionControl {
  /** Commits the partition's offset past `offset`. A member that lost the group is refused; the next replays. */
  commit(offset: string): Promise<void>;
  /** Reads the partition again from `offset`, no earlier than `at` when given. */
  replay(offset: string, at?: number): void;
}

export interface ConsumerOptions {
  groupId: string;
  topics: string[];
  handle(message: IncomingMessage, partition: PartitionControl): Promise<Disposition>;
  onError?(err: unknown): void;
  /** The group handed this member its partitions (again): held messages will come again from the commits. */
  onAssignment?(): void;
  /**
   * How many times to try joining before `consume` rejects; by default it waits for the broker for as long as it
   * takes (a worker started while its broker is away). A member the group later drops always rejoins.
   */
  joinAttempts?: number;
}

/**
 * Whether a consumer is a live member of its group and fetching. `joined` with recent
 * activity is ready; a member that lost its group (a frozen broker, a rebalance, a fenced
 * member) is `rejoining` until the group takes it back.
 */
export interface ConsumerHealth {
  groupId: string;
  state: 'starting' | 'joined' | 'rejoining' | 'stopped';
  ready: boolean;
  /** Fresh members created after the group dropped this process. */
  rejoins: number;
  lastActivityAt: string;
  lastError?: string;
}

export interface RunningConsumer {
  stop(): Promise<void>;
  health(): ConsumerHealth;
}

export interface Broker {
  /** Resolves once every in-sync replica has the whole batch. */
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  consume(options: ConsumerOptions): Promise<RunningConsumer>;
  /** Messages the group has not yet committed past, summed over the topics' partitions. */
  lag(groupId: string, topics: string[]): Promise<number>;
  /** Messages retained in a topic (the dead-letter topic is never consumed: its depth is its size). */
  depth(topic: string): Promise<number>;
  close(): Promise<void>;
}
