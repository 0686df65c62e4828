// `gatehouse --version`, `--help`, every `<command> --help` and every usage error the command
// table answers load no command's module: main.ts imports a command only when it runs. Checked
// on what the executable loads before any command runs: bin/gatehouse.js imports the compiled
// cli/failure-line.js and cli/main.js, and everything those import by static imports. With
// verbatimModuleSyntax (tsconfig.json) a static import is loaded exactly as written, except
// `import type`, which is erased: so the source's static import graph is what is loaded. How fast
// that is, is measured by `npm run bench -- --only cli-start`, never here.
import assert from 'node:assert/strict';
import { builtinModules } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { COMMANDS } from '../../src/cli/main.js';
import { root } from '../helpers/cli.js';

interface Imports {
  /** `import … from 'x'`, `import 'x'`, `export … from 'x'`: loaded with the module */
  static: string[];
  /** `import('x')`: loaded when that line runs */
  dynamic: string[];
}

function importsOf(file: string): Imports {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: Imports = { static: [], dynamic: [] };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly && ts.isStringLiteral(node.moduleSpecifier)) {
      found.static.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && !node.isTypeOnly && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.static.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [specifier] = node.arguments;
      assert.ok(specifier && ts.isStringLiteral(specifier), `${file}: an import() of a computed name cannot be checked`);
      found.dynamic.push(specifier.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The source file a relative specifier of `from` names (`./x.js` is `./x.ts` in src/). */
function sourceOf(from: string, specifier: string): string {
  const js = resolve(dirname(from), specifier);
  const candidates = [js.replace(/\.js$/, '.ts'), js];
  const file = candidates.find((f) => existsSync(f));
  assert.ok(file, `${relative(root, from)} imports ${specifier}, which is not there`);
  return file;
}

/** Every project file and every package loaded by static imports from `entries`. */
function staticClosure(entries: string[]): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const pending = [...entries];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const specifier of importsOf(file).static) {
      if (specifier.startsWith('.')) pending.push(sourceOf(file, specifier));
      else packages.add(specifier);
    }
  }
  return { files: new Set([...files].map((f) => relative(root, f))), packages };
}

const isBuiltin = (specifier: string) => specifier.startsWith('node:') || builtinModules.includes(specifier);

describe('the gatehouse executable loads a command only when it runs', () => {
  const bin = join(root, 'bin', 'gatehouse.js');
  const main = join(root, 'src', 'cli', 'main.ts');

  it('bin/gatehouse.js loads nothing but the compiled cli/failure-line.js and cli/main.js', () => {
    assert.deepEqual(importsOf(bin), { static: [], dynamic: ['../dist/cli/failure-line.js', '../dist/cli/main.js'] });
  });

  it("what is loaded before a command runs holds no command, no package but Node's, none of the service", () => {
    const { files, packages } = staticClosure([join(root, 'src', 'cli', 'failure-line.ts'), main]);
    assert.deepEqual(
      [...packages].filter((p) => !isBuiltin(p)),
      [],
      'no package is loaded (fastify, graphql, pino, kysely, pg, PGlite, …): only what Node has built in',
    );
    const heavy = [...files].filter((f) =>
      /^src\/(cli\/commands\/|store\/|http\/|graphql\/|compose\.ts$|app\.ts$|services\.ts$|logger\.ts$)/.test(f),
    );
    assert.deepEqual(heavy, [], 'no command, nor the service, its store or its transports');
    // the help is there: every command's usage comes from a module that is loaded
    assert.ok(files.has('src/cli/usage.ts') && files.has('src/cli/config-help.ts'), [...files].join(', '));
  });

  it('each command of the table is imported by main.ts only when it runs, from its own module', () => {
    const { dynamic, static: loaded } = importsOf(main);
    assert.deepEqual(
      dynamic,
      Object.keys(COMMANDS).map((name) => `./commands/${name}.js`),
      'one import() per command, in the order of the table',
    );
    for (const name of Object.keys(COMMANDS)) assert.ok(!loaded.includes(`./commands/${name}.js`), `${name} is not imported up front`);
  });
});
