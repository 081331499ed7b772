import { type SQL, sql } from 'drizzle-orm';
import pg from 'pg';

/**
 * A write transaction's BEGIN travels with its first statement, and its COMMIT with its last when the caller marks
 * that statement final (`committing`), each in one round trip (as Npgsql and pgjdbc send BEGIN).
 *
 * drizzle's transaction awaits BEGIN before the first statement and sends COMMIT after the callback returns: two
 * round trips of their own, each a socket write that wakes a PostgreSQL backend and a read; the hold had four
 * (BEGIN, hold_open, the write, COMMIT) and has two. Here BEGIN is answered at once and held back; the next
 * statement goes out as Parse/Bind/Execute of BEGIN, then its own Parse/Bind/Describe/Execute, then, if final,
 * Parse/Bind/Execute of COMMIT, then one Sync. The server runs them in order in one extended-protocol batch and
 * skips the rest of it at the first error: a failing statement leaves the transaction open and aborted (never
 * committed), exactly as with separate messages, and the caller's ROLLBACK follows as usual. A transaction that
 * ends before any statement sends nothing at all. Once a final statement has committed, only drizzle's COMMIT may
 * follow (answered here): any other statement, or a ROLLBACK, is refused loudly instead of running outside the
 * transaction it was meant for.
 */
export class BatchedTxClient extends pg.Client {
  /** Where this connection's transaction stands, as far as this client has sent it. */
  #tx: 'none' | 'begin_held' | 'open' | 'committed' = 'none';

  // pg's query() is overloaded many ways; only the promise forms drizzle uses are taken over, the rest pass through.
  override query(config: unknown, values?: unknown, callback?: unknown): never {
    const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
    const promised = callback === undefined && typeof values !== 'function';
    const plain = promised && typeof (config as { submit?: unknown } | null)?.submit !== 'function';
    const tx = this.#tx;
    const ends = text === 'commit' || text === 'rollback';
    // Refused before anything is sent, in the form the caller asked for (pg-pool's query() passes a callback).
    const refuse = (message: string): never => {
      const err = new Error(message);
      const cb = typeof values === 'function' ? values : callback;
      if (typeof cb !== 'function') return Promise.reject(err) as never;
      process.nextTick(() => cb(err));
      return undefined as never;
    };
    if (tx === 'committed') {
      this.#tx = 'none';
      if (plain && text === 'commit') return Promise.resolve(NOTHING_SENT) as never;
      return refuse(`"${String(text).slice(0, 40)}" after the transaction committed with its final statement`);
    }
    if (plain && text === 'begin') {
      this.#tx = 'begin_held';
      return Promise.resolve(NOTHING_SENT) as never;
    }
    if (tx === 'begin_held' && plain && ends) {
      this.#tx = 'none';
      return Promise.resolve(NOTHING_SENT) as never;
    }
    const final = typeof text === 'string' && text.startsWith(FINAL);
    if (final && tx === 'none') return refuse('a final statement outside a transaction');
    // A named statement is left to pg: it books a Parse by the active query, which BEGIN's or COMMIT's would confuse.
    const batchable = plain && typeof text === 'string' && !(config as { name?: unknown }).name;
    if (final && !batchable) return refuse('a final statement must be a plain, unnamed statement');
    if (tx !== 'none') this.#tx = ends ? 'none' : 'open';
    if (batchable && (tx === 'begin_held' || final))
      return new Promise((resolve, reject) => {
        const query = new Batched(config, values, { begin: tx === 'begin_held', commit: final }, (err, res) => {
          if (err) return reject(err);
          if (final) this.#tx = 'committed';
          resolve(res);
        });
        super.query(query as never);
      }) as never;
    if (tx === 'begin_held') {
      // Any other form gets BEGIN on its own first, as it would have: queued ahead of it, so it runs first.
      if (plain) return super.query('begin').then(() => super.query(config as never, values as never)) as never;
      super.query('begin').catch(() => {});
    }
    return (super.query as (...args: unknown[]) => never)(config, values, callback);
  }
}

const FINAL = '/* final: commits with the transaction */ ';

/**
 * Marks a write transaction's last statement: the transaction commits with it, in the same round trip. Nothing may
 * follow it in the transaction (the client refuses it); an error in it or in the COMMIT rejects it as usual.
 */
export const committing = (statement: SQL): SQL => sql`${sql.raw(FINAL)}${statement}`;

/** What drizzle reads of a BEGIN or COMMIT answered here: nothing, but it must look like a result. */
const NOTHING_SENT = { command: null, rowCount: null, rows: [], fields: [], oid: 0 };

type Connection = {
  stream: { cork?: () => void; uncork?: () => void };
  parse(c: { text: string }): void;
  bind(c: object): void;
  execute(c: object): void;
  sync(): void;
};

/** pg's own Query, with BEGIN ahead of it and COMMIT behind it in the same batch; their completions are not its. */
class Batched extends (pg.Query as unknown as new (
  config: unknown,
  values: unknown,
  callback: unknown,
) => {
  queryMode?: string;
  values?: unknown;
  submit(connection: Connection): Error | null;
  handleCommandComplete(msg: unknown, connection: Connection): void;
}) {
  #completions = 0;

  constructor(
    config: unknown,
    values: unknown,
    private readonly around: { begin: boolean; commit: boolean },
    callback: (err: Error | null, res: unknown) => void,
  ) {
    super(config, values, callback);
    // One Sync for the batch, which only the extended protocol has (a simple Query would carry its own).
    this.queryMode = 'extended';
  }

  override submit(connection: Connection): Error | null {
    // pg refuses this before writing anything; BEGIN must not go out alone either, or it would open a
    // transaction behind the caller's back.
    if (!Array.isArray(this.values ?? [])) return new Error('Query values must be an array');
    const send = (text: string) => {
      connection.parse({ text });
      connection.bind({});
      connection.execute({});
    };
    const sync = connection.sync;
    const ownSync = Object.hasOwn(connection, 'sync');
    connection.stream.cork?.();
    try {
      if (this.around.begin) send('begin');
      // pg ends its statement with a Sync: COMMIT goes in just before it.
      if (this.around.commit)
        connection.sync = () => {
          send('commit');
          sync.call(connection);
        };
      return super.submit(connection);
    } finally {
      if (ownSync) connection.sync = sync;
      else delete (connection as Partial<Connection>).sync;
      connection.stream.uncork?.();
    }
  }

  override handleCommandComplete(msg: unknown, connection: Connection): void {
    // The batch completes BEGIN (if sent), the statement, then COMMIT (if sent): only the statement's is its own.
    if (this.#completions++ === (this.around.begin ? 1 : 0)) super.handleCommandComplete(msg, connection);
  }
}
