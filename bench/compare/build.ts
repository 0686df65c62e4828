// Compiles the reference servers and the load generator to plain JavaScript before the run, with
// TypeScript's own transpiler (already a devDependency), into .cache/bench-compare/ inside the
// repository, so that their packages resolve from node_modules as usual. Run under tsx they
// would carry the loader's memory and start-up cost, which Gatehouse (its built executable)
// does not: idle RSS and CPU would not compare.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';

const FILES = [
  'fixtures.ts',
  'load.ts',
  'servers/fastify-bare.ts',
  'servers/minimal-issuer.ts',
  'servers/oidc-provider.ts',
  'servers/graphql-jit.ts',
];

/** Returns the folder holding the compiled files (same relative layout, .js). */
export function buildRunnables(): string {
  const src = new URL('.', import.meta.url).pathname;
  const out = new URL('../../.cache/bench-compare/', import.meta.url).pathname;
  for (const f of FILES) {
    const { outputText } = ts.transpileModule(readFileSync(join(src, f), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
      fileName: f,
    });
    const target = join(out, f.replace(/\.ts$/, '.js'));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, outputText);
  }
  // ESM without a package.json of its own would be read as CommonJS
  writeFileSync(join(out, 'package.json'), '{ "type": "module" }\n');
  return out;
}
