import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/**
 * The import rules the packages keep (`pnpm check:imports`, and test/ops/imports.test.ts):
 * - a package uses another only through its name (`@onsale/cell/config`, which its `exports` map to
 *   `src/config.ts`), never by a relative path into the other's `src/`: the dependency is then declared
 *   in package.json, where pnpm, the build and a reader see it;
 * - no cycle among the modules' run-time imports (type-only imports are erased, so they cannot make one).
 */
export interface ImportProblems {
  /** `file: 'specifier'` for each relative import into another package's src/. */
  intoOtherSrc: string[];
  /** Each cycle as the files on it, relative to the root, the first repeated at the end. */
  cycles: string[][];
}

const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.data', '.git', 'cdktf.out']);
const SOURCE = /\.(ts|tsx|mts)$/;

/** The workspace's package folders, as pnpm-workspace.yaml lists them. */
function workspacePackages(root: string): string[] {
  const yaml = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8');
  const list = yaml.match(/^packages:\n((?:\s+-\s+.+\n?)+)/m)?.[1] ?? '';
  return [...list.matchAll(/-\s+['"]?([^'"\n]+?)['"]?\s*$/gm)].map((m) => resolve(root, m[1]!));
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) sourceFiles(join(dir, entry.name), out);
    } else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(join(dir, entry.name));
  }
  return out;
}

interface ImportSite {
  specifier: string;
  typeOnly: boolean;
}

/** Static imports and re-exports, and `import('...')` with a literal specifier. */
function importsOf(file: string): ImportSite[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const sites: ImportSite[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings;
      const everyNameTypeOnly =
        !!clause &&
        !clause.name &&
        !!named &&
        ts.isNamedImports(named) &&
        named.elements.length > 0 &&
        named.elements.every((e) => e.isTypeOnly);
      sites.push({ specifier: node.moduleSpecifier.text, typeOnly: !!clause?.isTypeOnly || everyNameTypeOnly });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      sites.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      sites.push({ specifier: node.arguments[0].text, typeOnly: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return sites;
}

/** Strongly connected components of more than one file (or a file importing itself), by Tarjan. */
function cyclesOf(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (v: string) => {
    indexOf.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indexOf.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v)?.has(v)) components.push(component);
    }
  };
  for (const v of graph.keys()) if (!indexOf.has(v)) connect(v);
  return components;
}

/** One cycle through a component's files, for a message a reader can follow. */
function oneCycle(component: string[], graph: Map<string, Set<string>>): string[] {
  const inside = new Set(component);
  const start = component.slice().sort()[0]!;
  const path = [start];
  const seen = new Set([start]);
  for (;;) {
    const next = [...(graph.get(path.at(-1)!) ?? [])].filter((n) => inside.has(n));
    const closing = next.find((n) => n === start);
    if (closing) return [...path, start];
    const step = next.find((n) => !seen.has(n));
    // Every file of a strongly connected component reaches the start: take the first one not yet on the path.
    if (!step) return [...path, start];
    path.push(step);
    seen.add(step);
  }
}

export function importProblems(root: string): ImportProblems {
  const realRoot = realpathSync(root);
  const packages = workspacePackages(realRoot).sort((a, b) => b.length - a.length);
  const packageOf = (file: string) => packages.find((p) => file === p || file.startsWith(p + sep));
  const files = sourceFiles(realRoot);
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    allowImportingTsExtensions: true,
    resolveJsonModule: true,
  };
  const cache = ts.createModuleResolutionCache(realRoot, (f) => f, options);
  const intoOtherSrc: string[] = [];
  const graph = new Map<string, Set<string>>();
  for (const file of files) {
    const edges = new Set<string>();
    graph.set(file, edges);
    const own = packageOf(file);
    for (const { specifier, typeOnly } of importsOf(file)) {
      const resolved = ts.resolveModuleName(specifier, file, options, ts.sys, cache).resolvedModule?.resolvedFileName;
      if (specifier.startsWith('.')) {
        const target = resolved ?? resolve(dirname(file), specifier);
        const other = packageOf(target);
        if (other && other !== own && target.startsWith(join(other, 'src') + sep)) {
          intoOtherSrc.push(`${relative(realRoot, file)}: '${specifier}'`);
        }
      }
      if (!resolved || typeOnly) continue;
      const real = realpathSync(resolved);
      if (real.startsWith(realRoot + sep) && !real.split(sep).includes('node_modules') && SOURCE.test(real)) {
        edges.add(real);
      }
    }
  }
  const cycles = cyclesOf(graph).map((c) => oneCycle(c, graph).map((f) => relative(realRoot, f)));
  return { intoOtherSrc, cycles };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { intoOtherSrc, cycles } = importProblems(process.cwd());
  for (const line of intoOtherSrc) console.log(`relative import into another package's src/: ${line}`);
  for (const cycle of cycles) console.log(`import cycle: ${cycle.join(' -> ')}`);
  if (intoOtherSrc.length || cycles.length) process.exit(1);
  console.log('imports: no relative import into another package, no cycle');
}
