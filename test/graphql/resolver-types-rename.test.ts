// The point of the generated resolver types: a field or an argument renamed in an SDL file, with
// the resolvers left as they are, no longer compiles. This test generates the types from copies
// of the SDL files with names changed (in memory, as `npm run codegen` would), type-checks the
// real resolver maps against them with the TypeScript compiler (a compiler host that hands out
// the altered generated files in place of the checked-in ones), and expects an error naming each
// old name. The checked-in files, unaltered, must type-check without an error.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import ts from 'typescript';
import { CODEGEN_TARGETS, renderResolverTypes, ROOT } from '../../scripts/codegen.js';

const RESOLVERS = ['src/graphql/tenant/resolvers.ts', 'src/graphql/credential/resolvers.ts'].map((p) => join(ROOT, p));

function compilerOptions(): ts.CompilerOptions {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    { noEmit: true },
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => assert.fail(ts.flattenDiagnosticMessageText(d.messageText, '\n')),
    },
  );
  assert.ok(parsed, 'tsconfig.json parses');
  return parsed.options;
}

/** Files read from disk, parsed once for both programs (the second reuses them through `oldProgram`). */
const fromDisk = new Map<string, ts.SourceFile | undefined>();

/** Type-checks the resolver maps, with `replaced` (absolute path → text) read in place of the files on disk. */
function check(options: ts.CompilerOptions, replaced: Map<string, string>, oldProgram?: ts.Program) {
  const host = ts.createCompilerHost(options);
  const { getSourceFile, readFile, fileExists } = host;
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    const text = replaced.get(fileName);
    if (text !== undefined) return ts.createSourceFile(fileName, text, languageVersion);
    if (!fromDisk.has(fileName)) fromDisk.set(fileName, getSourceFile.call(host, fileName, languageVersion, onError, shouldCreate));
    return fromDisk.get(fileName);
  };
  host.readFile = (fileName) => replaced.get(fileName) ?? readFile.call(host, fileName);
  host.fileExists = (fileName) => replaced.has(fileName) || fileExists.call(host, fileName);
  const program = ts.createProgram({ rootNames: RESOLVERS, options, host, ...(oldProgram ? { oldProgram } : {}) });
  const messages = RESOLVERS.flatMap((file) =>
    ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((d) => {
      const where =
        d.file && d.start !== undefined ? `${d.file.fileName.slice(ROOT.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}` : '';
      return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    }),
  );
  return { program, messages };
}

/** The SDL with one name changed inside the definition that `scope` matches; fails unless exactly one place changes. */
function rename(sdl: string, scope: RegExp, from: string, to: string): string {
  const matches = [...sdl.matchAll(new RegExp(scope.source, 'gms'))];
  assert.equal(matches.length, 1, `${scope} matches one definition of the SDL (update this test if the SDL changed)`);
  const block = matches[0]![0];
  const pattern = new RegExp(`\\b${from}:`, 'g');
  assert.equal(block.match(pattern)?.length, 1, `${from} appears once in ${scope}`);
  return sdl.replace(block, block.replace(pattern, `${to}:`));
}

interface Renaming {
  scope: RegExp;
  from: string;
  to: string;
  what: string;
}

const RENAMINGS: Record<string, Renaming[]> = {
  'src/graphql/tenant/schema.graphql': [
    { what: 'an argument', scope: /\bdeleteTenantLabel\(.*?\n {2}\):/, from: 'label_id', to: 'labelId' },
    { what: 'a field', scope: /^type Tenant \{.*?\n\}/, from: 'support_reason', to: 'supportReason' },
    { what: 'a field of an input object passed whole', scope: /^input TenantsQuery \{.*?\n\}/, from: 'pageNum', to: 'page_num' },
  ],
  'src/graphql/credential/schema.graphql': [
    { what: 'an argument', scope: /\brotateClientSecret\(.*?\n {2}\):/, from: 'gracePeriodSeconds', to: 'grace_period_seconds' },
    { what: 'a field', scope: /^type ClientSecret \{.*?\n\}/, from: 'last_used_at', to: 'lastUsedAt' },
    { what: 'an argument of a list passed whole', scope: /\bclients\(.*?\n {2}\):/, from: 'perPage', to: 'per_page' },
  ],
};

describe('generated resolver types catch renames in the SDL', () => {
  const options = compilerOptions();
  let baseline: ReturnType<typeof check>;

  before(() => {
    baseline = check(options, new Map());
  });

  it('the resolver maps type-check against the checked-in generated types', () => {
    assert.deepEqual(baseline.messages, []);
  });

  it('renaming arguments, fields and input fields in the SDL breaks the resolvers’ compilation, naming each old name', async () => {
    const replaced = new Map<string, string>();
    for (const target of CODEGEN_TARGETS) {
      let sdl = readFileSync(join(ROOT, target.sdl), 'utf8');
      for (const r of RENAMINGS[target.sdl] ?? []) sdl = rename(sdl, r.scope, r.from, r.to);
      replaced.set(join(ROOT, target.out), await renderResolverTypes(target, sdl));
    }
    const { messages } = check(options, replaced, baseline.program);
    for (const [sdl, renamings] of Object.entries(RENAMINGS)) {
      for (const r of renamings) {
        assert.ok(
          messages.some((m) => m.includes(r.from)),
          `${sdl}: renaming ${r.what} ${r.from} → ${r.to} gives no compile error naming ${r.from}; errors:\n${messages.join('\n')}`,
        );
      }
    }
  });
});
