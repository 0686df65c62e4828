// The interface reference, docs/api/*-graphql.md, built from the SDL files with graphql-js: every
// query, mutation, type, input type, enum and scalar, with fields, arguments, types, defaults and
// the schema's own descriptions (which carry the rules). `npm run docs` writes the files;
// test/docs/api-docs.test.ts renders them again in memory and fails when the checked-in files
// differ, so the reference cannot drift from the schema.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  buildSchema,
  isEnumType,
  isInputObjectType,
  isObjectType,
  isScalarType,
  getNamedType,
  isSpecifiedScalarType,
  Kind,
  parse,
  print,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type GraphQLType,
} from 'graphql';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface ApiDoc {
  title: string;
  /** the SDL file, relative to the repository root */
  sdl: string;
  /** the Markdown file written, relative to the repository root */
  out: string;
  /** paragraphs before the reference: where the interface is served and where to read more */
  intro: string[];
}

const SEE_ALSO =
  'Transport, media types, status codes, limits and introspection: [graphql.md](../graphql.md). Error codes: [errors.md](../errors.md). Who may call what: [authorization.md](../authorization.md).';

export const API_DOCS: ApiDoc[] = [
  {
    title: 'Credential interface',
    sdl: 'src/graphql/credential/schema.graphql',
    out: 'docs/api/credential-graphql.md',
    intro: [
      "`POST {base_url}/graphql` with `Authorization: Bearer <token>` and `Content-Type: application/json`. `X-Tenant-Context: <tenant id>` names the acting tenant; without it the request acts in the caller's home tenant. A mutation sent with `Idempotency-Key: <a new UUID>` runs once however often it is retried with that key: [safe retries](../graphql.md#safe-retries-idempotency-key).",
      `${SEE_ALSO} Decisions behind the rules: [credentials.md](../credentials.md).`,
    ],
  },
  {
    title: 'Tenant interface',
    sdl: 'src/graphql/tenant/schema.graphql',
    out: 'docs/api/tenant-graphql.md',
    intro: [
      "`POST {tenants_url}/public/query` (also `/query` and `/public-test/query`, which behave the same) with `Authorization: Bearer <token>` and `Content-Type: application/json`. `X-Tenant-Context: <tenant id>` names the acting tenant; without it the request acts in the caller's home tenant. A mutation sent with `Idempotency-Key: <a new UUID>` runs once however often it is retried with that key: [safe retries](../graphql.md#safe-retries-idempotency-key).",
      `${SEE_ALSO} Decisions behind the rules: [tenants.md](../tenants.md).`,
    ],
  },
];

/** Every type, field, argument, input field and enum value without a description, by its path. */
export function missingDescriptions(schema: GraphQLSchema): string[] {
  const missing: string[] = [];
  const need = (what: string, description: string | null | undefined) => {
    if (!description?.trim()) missing.push(what);
  };
  for (const type of ownTypes(schema)) {
    need(type.name, type.description);
    if (isObjectType(type)) {
      for (const field of Object.values(type.getFields())) {
        need(`${type.name}.${field.name}`, field.description);
        for (const arg of field.args) need(`${type.name}.${field.name}(${arg.name})`, arg.description);
      }
    } else if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) need(`${type.name}.${field.name}`, field.description);
    } else if (isEnumType(type)) {
      for (const value of type.getValues()) need(`${type.name}.${value.name}`, value.description);
    }
  }
  return missing;
}

/** The schema's own named types, in the order the SDL file defines them. */
function ownTypes(schema: GraphQLSchema, sdl?: string): GraphQLNamedType[] {
  const names = sdl
    ? parse(sdl)
        .definitions.filter((d) => 'name' in d && d.name !== undefined && d.kind !== Kind.DIRECTIVE_DEFINITION)
        .map((d) => (d as { name: { value: string } }).name.value)
    : Object.keys(schema.getTypeMap()).filter((n) => !n.startsWith('__'));
  return names.map((n) => schema.getType(n)!).filter((t) => !isSpecifiedScalarType(t));
}

const anchor = (kind: string, name: string) => `#${kind.toLowerCase()}-${name.toLowerCase()}`;
const KIND = (t: GraphQLNamedType) => (isObjectType(t) ? 'Type' : isInputObjectType(t) ? 'Input' : isEnumType(t) ? 'Enum' : 'Scalar');

/** `[Client!]!`, linked to the named type's section unless it is a built-in scalar. */
function typeRef(type: GraphQLType): string {
  const named = getNamedType(type);
  const code = `\`${String(type)}\``;
  return isScalarType(named) && isSpecifiedScalarType(named) ? code : `[${code}](${anchor(KIND(named), named.name)})`;
}

/** A description as one table cell: one line, pipes escaped. */
const cell = (text: string | null | undefined) =>
  (text ?? '')
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\|/g, '\\|')
    .trim();

const defaultOf = (item: GraphQLArgument | GraphQLInputField) => (item.astNode?.defaultValue ? `\`${print(item.astNode.defaultValue)}\`` : '');

function signature(field: GraphQLField<unknown, unknown>): string {
  if (field.args.length === 0) return `${field.name}: ${String(field.type)}`;
  const args = field.args.map((a) => `  ${a.name}: ${String(a.type)}${a.astNode?.defaultValue ? ` = ${print(a.astNode.defaultValue)}` : ''}`);
  return `${field.name}(\n${args.join('\n')}\n): ${String(field.type)}`;
}

function renderOperation(kind: 'Query' | 'Mutation', field: GraphQLField<unknown, unknown>): string[] {
  const out = [`### ${kind} \`${field.name}\``, '', field.description ?? '', '', '```graphql', signature(field), '```', ''];
  if (field.args.length > 0) {
    out.push('| Argument | Type | Default | Description |', '|---|---|---|---|');
    for (const a of field.args) out.push(`| \`${a.name}\` | ${typeRef(a.type)} | ${defaultOf(a)} | ${cell(a.description)} |`);
    out.push('');
  }
  out.push(`Returns ${typeRef(field.type)}.`, '');
  return out;
}

function renderType(type: GraphQLNamedType): string[] {
  const out = [`### ${KIND(type)} \`${type.name}\``, '', type.description ?? '', ''];
  if (isObjectType(type)) {
    out.push('| Field | Type | Description |', '|---|---|---|');
    for (const f of Object.values(type.getFields())) out.push(`| \`${f.name}\` | ${typeRef(f.type)} | ${cell(f.description)} |`);
    out.push('');
  } else if (isInputObjectType(type)) {
    out.push('| Field | Type | Default | Description |', '|---|---|---|---|');
    for (const f of Object.values(type.getFields())) out.push(`| \`${f.name}\` | ${typeRef(f.type)} | ${defaultOf(f)} | ${cell(f.description)} |`);
    out.push('');
  } else if (isEnumType(type)) {
    out.push('| Value | Description |', '|---|---|');
    for (const v of type.getValues()) out.push(`| \`${v.name}\` | ${cell(v.description)} |`);
    out.push('');
  }
  return out;
}

/** The Markdown reference of one interface. Throws, naming them, when elements lack a description. */
export function renderApiDoc(doc: ApiDoc, sdl: string): string {
  const schema = buildSchema(sdl);
  const missing = missingDescriptions(schema);
  if (missing.length > 0) throw new Error(`${doc.sdl}: give these a description: ${missing.join(', ')}`);
  const roots = [
    ['Query', schema.getQueryType()],
    ['Mutation', schema.getMutationType()],
  ] as const;
  const rootNames = new Set(roots.map(([, t]) => t?.name));
  const types = ownTypes(schema, sdl).filter((t) => !rootNames.has(t.name));
  const groups = [
    ['Types', types.filter(isObjectType)],
    ['Input types', types.filter(isInputObjectType)],
    ['Enums', types.filter(isEnumType)],
    ['Scalars', types.filter(isScalarType)],
  ] as const;

  const out = [
    `# ${doc.title}: GraphQL reference`,
    '',
    `<!-- Generated by \`npm run docs\` from ${doc.sdl}. Do not edit by hand: change the descriptions in the SDL and run it again. -->`,
    '',
    ...doc.intro.flatMap((p) => [p, '']),
    '## Contents',
    '',
  ];
  for (const [kind, root] of roots) {
    if (!root) continue;
    const fields = Object.values(root.getFields()).map((f) => `[\`${f.name}\`](${anchor(kind, f.name)})`);
    out.push(`- ${kind === 'Query' ? 'Queries' : 'Mutations'}: ${fields.join(', ')}`);
  }
  for (const [title, list] of groups) {
    if (list.length > 0) out.push(`- ${title}: ${list.map((t) => `[\`${t.name}\`](${anchor(KIND(t), t.name)})`).join(', ')}`);
  }
  out.push('');
  for (const [kind, root] of roots) {
    if (!root) continue;
    out.push(`## ${kind === 'Query' ? 'Queries' : 'Mutations'}`, '', root.description ?? '', '');
    for (const field of Object.values(root.getFields())) out.push(...renderOperation(kind, field));
  }
  for (const [title, list] of groups) {
    if (list.length === 0) continue;
    out.push(`## ${title}`, '');
    for (const type of list) out.push(...renderType(type));
  }
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}

export function renderAll(): { path: string; text: string }[] {
  return API_DOCS.map((doc) => ({ path: doc.out, text: renderApiDoc(doc, readFileSync(join(ROOT, doc.sdl), 'utf8')) }));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const { path, text } of renderAll()) {
    mkdirSync(dirname(join(ROOT, path)), { recursive: true });
    writeFileSync(join(ROOT, path), text);
    process.stdout.write(`wrote ${path}\n`);
  }
}
