import pg from 'pg';

/**
 * A transaction's BEGIN travels with its first statement, in one round trip (as Npgsql and pgjdbc send it).
 *
 * drizzle's transaction awaits BEGIN before it sends the first statement, which costs every write transaction of
 * the cell a round trip of its own: one socket write that wakes a PostgreSQL backend and one read, about a quarter
 * of the hold's (BEGIN, hold_open, the write, COMMIT). Here BEGIN is answered at once and held back; the next
 * statement goes out as Parse/Bind/Execute of BEGIN, then its own Parse/Bind/Describe/Execute, then one Sync. The
 * server runs them in order inside one extended-protocol batch: if BEGIN fails the statement is skipped, and if
 * the statement fails the transaction is open and aborted, exactly as after a separate BEGIN, so the caller's
 * ROLLBACK follows as usual. A transaction that ends before any statement sends nothing at all.
 */
export class LazyBeginClient extends pg.Client {
  #beginHeld = false;

  // pg's query() is overloaded many ways; only the promise forms drizzle uses are taken over, the rest pass through.
  override query(config: unknown, values?: unknown, callback?: unknown): never {
    const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
    const promised = callback === undefined && typeof values !== 'function';
    const plain = promised && typeof (config as { submit?: unknown } | null)?.submit !== 'function';
    if (plain && !this.#beginHeld && text === 'begin') {
      this.#beginHeld = true;
      return Promise.resolve(HELD_BEGIN) as never;
    }
    if (this.#beginHeld) {
      this.#beginHeld = false;
      // Nothing was sent: there is nothing to end.
      if (plain && (text === 'commit' || text === 'rollback')) return Promise.resolve(HELD_BEGIN) as never;
      // A named statement is left alone: pg books its Parse by the active query, which BEGIN's would confuse.
      if (plain && typeof text === 'string' && !(config as { name?: unknown }).name)
        return new Promise((resolve, reject) => {
          const query = new BeginThen(config, values, (err: Error | null, res: unknown) =>
            err ? reject(err) : resolve(res),
          );
          super.query(query as never);
        }) as never;
      // Any other form gets BEGIN on its own first, as it would have: queued ahead of it, so it runs first.
      if (plain) return super.query('begin').then(() => super.query(config as never, values as never)) as never;
      super.query('begin').catch(() => {});
    }
    return (super.query as (...args: unknown[]) => never)(config, values, callback);
  }
}

/** What drizzle reads of BEGIN's result: nothing, but it must look like a result. */
const HELD_BEGIN = { command: 'BEGIN', rowCount: null, rows: [], fields: [], oid: 0 };

type Connection = {
  stream: { cork?: () => void; uncork?: () => void };
  parse(c: { text: string }): void;
  bind(c: object): void;
  execute(c: object): void;
};

/** pg's own Query, with BEGIN sent ahead of it in the same batch; BEGIN's completion is not the query's. */
class BeginThen extends (pg.Query as unknown as new (
  config: unknown,
  values: unknown,
  callback: unknown,
) => {
  queryMode?: string;
  values?: unknown;
  submit(connection: Connection): Error | null;
  handleCommandComplete(msg: unknown, connection: Connection): void;
}) {
  #beginCompleted = false;

  constructor(config: unknown, values: unknown, callback: (err: Error | null, res: unknown) => void) {
    super(config, values, callback);
    // One Sync for both, which only the extended protocol has (a simple Query would carry its own).
    this.queryMode = 'extended';
  }

  override submit(connection: Connection): Error | null {
    // pg refuses these before writing anything; BEGIN must not go out alone either, or it would open a
    // transaction behind the caller's back.
    if (!Array.isArray(this.values ?? [])) return new Error('Query values must be an array');
    connection.stream.cork?.();
    try {
      connection.parse({ text: 'begin' });
      connection.bind({});
      connection.execute({});
      return super.submit(connection);
    } finally {
      connection.stream.uncork?.();
    }
  }

  override handleCommandComplete(msg: unknown, connection: Connection): void {
    if (!this.#beginCompleted) {
      this.#beginCompleted = true;
      return;
    }
    super.handleCommandComplete(msg, connection);
  }
}
