import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The cell's SQL functions (the hold's, the relay's) have one source each, `sql/functions/<name>.sql`,
 * holding the current definition. drizzle-kit does not model functions, so the migrations that install
 * them are drizzle-kit custom migrations written from those files (`pnpm --filter @onsale/cell db:generate`):
 * a function changes by editing its file, and the migration follows. An applied migration is never rewritten.
 */

const cellRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export interface FunctionFolders {
  migrations: string;
  functions: string;
}

export const CELL_FUNCTION_FOLDERS: FunctionFolders = {
  migrations: resolve(cellRoot, 'drizzle'),
  functions: resolve(cellRoot, 'sql/functions'),
};

export interface FunctionDefinition {
  name: string;
  /** From `CREATE OR REPLACE FUNCTION` to the end: what PostgreSQL stores (comments above it are the file's notes). */
  definition: string;
  /** The argument list and the return type: CREATE OR REPLACE cannot change them, a DROP must come first. */
  signature: { args: string; returns: string };
}

export interface JournalEntry {
  idx: number;
  when: number;
  tag: string;
}

const CREATE = /CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+(\w+)\s*\(/i;
const DROP = /DROP\s+FUNCTION\s+(?:IF\s+EXISTS\s+)?(\w+)/gi;
const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Parses one `CREATE [OR REPLACE] FUNCTION` statement (comments before it allowed); undefined when there is none. */
export function parseFunction(statement: string): FunctionDefinition | undefined {
  const match = CREATE.exec(statement);
  if (!match) return undefined;
  const name = match[1]!;
  const text = statement.slice(match.index).trim();
  const definition = text.replace(/^CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION/i, 'CREATE OR REPLACE FUNCTION');
  const open = text.indexOf('(');
  let depth = 0;
  let close = open;
  for (; close < text.length; close++) {
    if (text[close] === '(') depth++;
    else if (text[close] === ')' && --depth === 0) break;
  }
  const returns =
    /^\s*RETURNS\s+([\s\S]*?)\s+(?:LANGUAGE|AS|IMMUTABLE|STABLE|VOLATILE|STRICT|PARALLEL|SECURITY)\b/i.exec(
      text.slice(close + 1),
    );
  return {
    name,
    definition,
    signature: { args: squash(text.slice(open + 1, close)), returns: squash(returns?.[1] ?? '') },
  };
}

export function readJournal(migrations: string): JournalEntry[] {
  return JSON.parse(readFileSync(resolve(migrations, 'meta/_journal.json'), 'utf8')).entries;
}

/** Every function as the migrations leave it, replayed in journal order (a later definition replaces an earlier one). */
export function functionsFromMigrations(migrations: string): Map<string, FunctionDefinition & { tag: string }> {
  const defined = new Map<string, FunctionDefinition & { tag: string }>();
  for (const { tag } of readJournal(migrations)) {
    for (const statement of readFileSync(resolve(migrations, `${tag}.sql`), 'utf8').split('--> statement-breakpoint')) {
      for (const drop of statement.matchAll(DROP)) defined.delete(drop[1]!);
      const fn = parseFunction(statement);
      if (fn) defined.set(fn.name, { ...fn, tag });
    }
  }
  return defined;
}

/** The source files: one function each, named after it. */
export function functionSources(functions: string): Map<string, FunctionDefinition & { source: string }> {
  const sources = new Map<string, FunctionDefinition & { source: string }>();
  for (const file of readdirSync(functions)
    .filter((f) => f.endsWith('.sql'))
    .sort()) {
    const source = readFileSync(resolve(functions, file), 'utf8');
    const fn = parseFunction(source);
    if (!fn || `${fn.name}.sql` !== file || CREATE.test(source.slice(source.search(CREATE) + 1)))
      throw new Error(`${file}: expected exactly one CREATE OR REPLACE FUNCTION ${file.replace(/\.sql$/, '')}(...)`);
    sources.set(fn.name, { ...fn, source: source.trimEnd() });
  }
  return sources;
}

export type FunctionDrift =
  | { name: string; change: 'added' | 'changed'; source: string; drop?: FunctionDefinition }
  | { name: string; change: 'removed'; drop: FunctionDefinition };

/** Where the function files and what the migrations install disagree, by function name. */
export function functionDrift(folders: FunctionFolders = CELL_FUNCTION_FOLDERS): FunctionDrift[] {
  const installed = functionsFromMigrations(folders.migrations);
  const sources = functionSources(folders.functions);
  const drift: FunctionDrift[] = [];
  for (const [name, fn] of sources) {
    const current = installed.get(name);
    if (!current) drift.push({ name, change: 'added', source: fn.source });
    else if (current.definition !== fn.definition) {
      const resigned =
        current.signature.args !== fn.signature.args || current.signature.returns !== fn.signature.returns;
      drift.push({ name, change: 'changed', source: fn.source, ...(resigned ? { drop: current } : {}) });
    }
  }
  for (const [name, fn] of installed) if (!sources.has(name)) drift.push({ name, change: 'removed', drop: fn });
  return drift.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** The migration's statements: drops first (a new signature, a removed file), then the files' definitions. */
export function functionMigrationSql(drift: FunctionDrift[]): string {
  const drops = drift.flatMap((d) => (d.drop ? [`DROP FUNCTION ${d.name}(${d.drop.signature.args});`] : []));
  const creates = drift.flatMap((d) => (d.change === 'removed' ? [] : [d.source]));
  return `${[...drops, ...creates].join('\n--> statement-breakpoint\n')}\n`;
}

/**
 * Writes one migration bringing the database's functions to the files' definitions, through drizzle-kit
 * (`generate --custom`: its journal entry and snapshot), or nothing when they agree. Returns its tag.
 */
export function writeFunctionMigration(folders: FunctionFolders = CELL_FUNCTION_FOLDERS): string | undefined {
  const drift = functionDrift(folders);
  if (drift.length === 0) return undefined;
  const before = readJournal(folders.migrations);
  const name = drift.length <= 3 ? drift.map((d) => d.name).join('_') : 'functions';
  execFileSync(
    'pnpm',
    [
      'exec',
      'drizzle-kit',
      'generate',
      '--custom',
      `--name=${name}`,
      '--dialect=postgresql',
      '--schema=./src/db/schema/index.ts',
      // drizzle-kit takes the folder relative to its working directory only.
      `--out=${relative(cellRoot, folders.migrations) || '.'}`,
    ],
    { cwd: cellRoot, stdio: 'pipe' },
  );
  const journal = readJournal(folders.migrations);
  const added = journal.at(-1)!;
  if (journal.length !== before.length + 1) throw new Error('drizzle-kit wrote no custom migration');
  // The migrator applies only entries newer than the last applied one: a clock behind the last entry would skip it.
  const last = before.at(-1)?.when ?? 0;
  if (added.when <= last) {
    const path = resolve(folders.migrations, 'meta/_journal.json');
    const raw = JSON.parse(readFileSync(path, 'utf8'));
    raw.entries.at(-1).when = last + 1;
    writeFileSync(path, `${JSON.stringify(raw, null, 2)}`);
  }
  writeFileSync(resolve(folders.migrations, `${added.tag}.sql`), functionMigrationSql(drift));
  return added.tag;
}
