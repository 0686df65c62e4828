// Bounds on the work one document can ask for (OWASP GraphQL cheat sheet), checked before
// graphql-js's own rules run (executor.ts): selection depth, a separate depth for introspection,
// aliases, directives, fragments, fields selected with every fragment expanded, and how often one
// response name repeats in one selection.
//
// Everything is measured in time linear in the document: each fragment's shape is computed once
// and reused at every spread, so a fragment spread twice by the next one, 22 times over, costs
// 23 small sums instead of 2^22 walks. Because this runs before graphql-js's rules, it stands on
// its own against documents they would refuse: a fragment cycle counts nothing past the cycle,
// an unknown fragment counts nothing.
import { BREAK, Kind, visit, type DocumentNode, type SelectionSetNode } from 'graphql';

/** Nesting of fields, counting a leaf field as 1 (`{ tenants { results { id } } }` is 3). */
export const MAX_DEPTH = 12;
/**
 * Nesting of a selection below `__schema` / `__type`, counted instead of MAX_DEPTH. The standard
 * introspection query (graphql-js's getIntrospectionQuery) needs 15: __schema, types, fields,
 * args, type, then ten levels of TypeRef's ofType chain. Depth alone multiplies nothing there
 * (ofType is one object); the lists that do (fields, inputFields, interfaces, possibleTypes) are
 * held to two nested levels by graphql-js's MaxIntrospectionDepthRule, one of its specified rules.
 */
export const MAX_INTROSPECTION_DEPTH = 20;
/** Aliased fields written in the document (fields with the same response name run once). */
export const MAX_ALIASES = 30;
/**
 * Directives written in the document (`@include`, `@skip` and any unknown one, which graphql-js
 * refuses only after walking them all), as graphql-armor's default: each is evaluated for every
 * field it sits on, and a few thousand of them would be work the tokens limit alone allows.
 */
export const MAX_DIRECTIVES = 50;
/** Fragment definitions in the document. graphql-js compares every pair of fragments spread in one selection. */
export const MAX_FRAGMENTS = 50;
/**
 * Fields selected with every fragment spread expanded: summed over the operations, and for each
 * fragment on its own. The standard introspection query with every option selects 230; a page of
 * tenants with every field, labels, environments and partnership selects 61.
 */
export const MAX_FIELDS = 500;
/**
 * Fields with one response name in one selection, counting those that fragments and inline
 * fragments bring to that level. graphql-js's OverlappingFieldsCanBeMergedRule compares every pair
 * of them (measured: 250 copies of one field with arguments took 70 ms to validate).
 */
export const MAX_REPEATS = 25;

interface Shape {
  depth: number;
  introspectionDepth: number;
  fields: number;
}

const EMPTY: Shape = { depth: 0, introspectionDepth: 0, fields: 0 };
// field counts are only compared with MAX_FIELDS: stop them there rather than let 2^n grow
const add = (a: number, b: number) => Math.min(a + b, MAX_FIELDS + 1);
const isIntrospectionRoot = (name: string) => name === '__schema' || name === '__type';

/** Memoises one value per fragment name; a fragment met again while being computed (a cycle) or an unknown one gets `empty`. */
function fragmentMemo<T>(fragments: Map<string, SelectionSetNode>, empty: T, compute: (set: SelectionSetNode) => T) {
  const memo = new Map<string, T | null>(); // null: being computed
  return (name: string): T => {
    const known = memo.get(name);
    if (known !== undefined) return known ?? empty;
    const set = fragments.get(name);
    if (!set) return empty;
    memo.set(name, null);
    const value = compute(set);
    memo.set(name, value);
    return value;
  };
}

/** Depth, introspection depth and expanded field count of a selection set; each set is measured once. */
function shapes(fragments: Map<string, SelectionSetNode>) {
  const measure = (set: SelectionSetNode): Shape => {
    let depth = 0;
    let introspectionDepth = 0;
    let fields = 0;
    for (const sel of set.selections) {
      let inner: Shape;
      if (sel.kind === Kind.FIELD) {
        const below = sel.selectionSet ? measure(sel.selectionSet) : EMPTY;
        inner = isIntrospectionRoot(sel.name.value)
          ? { depth: 0, introspectionDepth: 1 + Math.max(below.depth, below.introspectionDepth), fields: add(1, below.fields) }
          : {
              depth: 1 + below.depth,
              introspectionDepth: below.introspectionDepth > 0 ? 1 + below.introspectionDepth : 0,
              fields: add(1, below.fields),
            };
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        inner = measure(sel.selectionSet);
      } else {
        inner = fragment(sel.name.value);
      }
      depth = Math.max(depth, inner.depth);
      introspectionDepth = Math.max(introspectionDepth, inner.introspectionDepth);
      fields = add(fields, inner.fields);
    }
    return { depth, introspectionDepth, fields };
  };
  const fragment = fragmentMemo(fragments, EMPTY, measure);
  return { measure, fragment };
}

/**
 * The greatest number of fields sharing one response name in one selection. Run only once the
 * field counts are within bounds: merging a fragment's names at a spread then costs at most the
 * fields that spread brings.
 */
function maxRepeats(document: DocumentNode, fragments: Map<string, SelectionSetNode>): number {
  let max = 0;
  const countLevel = (set: SelectionSetNode, into: Map<string, number>) => {
    const bump = (name: string, n: number) => {
      const c = (into.get(name) ?? 0) + n;
      into.set(name, c);
      if (c > max) max = c;
    };
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        bump(sel.alias?.value ?? sel.name.value, 1);
        if (sel.selectionSet) countLevel(sel.selectionSet, new Map());
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        countLevel(sel.selectionSet, into);
      } else {
        for (const [name, n] of fragmentLevel(sel.name.value)) bump(name, n);
      }
    }
  };
  const fragmentLevel = fragmentMemo(fragments, new Map<string, number>(), (set) => {
    const level = new Map<string, number>();
    countLevel(set, level);
    return level;
  });
  for (const def of document.definitions) {
    if (def.kind === Kind.OPERATION_DEFINITION) countLevel(def.selectionSet, new Map());
    else if (def.kind === Kind.FRAGMENT_DEFINITION) fragmentLevel(def.name.value);
  }
  return max;
}

/** What is wrong with the document's size, as messages; empty when it is within every bound. */
export function checkLimits(document: DocumentNode): string[] {
  const fragments = new Map<string, SelectionSetNode>();
  let aliases = 0;
  for (const def of document.definitions) {
    if (def.kind !== Kind.FRAGMENT_DEFINITION) continue;
    // measured under one definition while graphql-js would spread another: refuse the ambiguity
    if (fragments.has(def.name.value)) return [`The document defines fragment "${def.name.value.slice(0, 64)}" more than once`];
    fragments.set(def.name.value, def.selectionSet);
  }
  if (fragments.size > MAX_FRAGMENTS) return [`The document defines more than ${MAX_FRAGMENTS} fragments`];
  if (countDirectives(document) > MAX_DIRECTIVES) return [`The document uses more than ${MAX_DIRECTIVES} directives`];

  const { measure, fragment } = shapes(fragments);
  let depth = 0;
  let introspectionDepth = 0;
  let fields = 0;
  for (const def of document.definitions) {
    if (def.kind !== Kind.OPERATION_DEFINITION) continue;
    const shape = measure(def.selectionSet);
    depth = Math.max(depth, shape.depth);
    introspectionDepth = Math.max(introspectionDepth, shape.introspectionDepth);
    fields = add(fields, shape.fields);
  }
  // a fragment no operation uses is refused later, but graphql-js's rules still walk it first
  for (const name of fragments.keys()) fields = Math.max(fields, fragment(name).fields);
  for (const def of document.definitions) {
    if (def.kind === Kind.OPERATION_DEFINITION || def.kind === Kind.FRAGMENT_DEFINITION) aliases += countAliases(def.selectionSet);
  }

  const problems: string[] = [];
  if (depth > MAX_DEPTH) problems.push(`The document is nested deeper than ${MAX_DEPTH} levels`);
  if (introspectionDepth > MAX_INTROSPECTION_DEPTH) {
    problems.push(`The introspection selection is nested deeper than ${MAX_INTROSPECTION_DEPTH} levels`);
  }
  if (aliases > MAX_ALIASES) problems.push(`The document uses more than ${MAX_ALIASES} aliases`);
  if (fields > MAX_FIELDS) problems.push(`The document selects more than ${MAX_FIELDS} fields (counting every fragment spread in full)`);
  else if (maxRepeats(document, fragments) > MAX_REPEATS) {
    problems.push(`The document selects one field more than ${MAX_REPEATS} times in one selection`);
  }
  return problems;
}

function countAliases(set: SelectionSetNode): number {
  let n = 0;
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) {
      if (sel.alias) n++;
      if (sel.selectionSet) n += countAliases(sel.selectionSet);
    } else if (sel.kind === Kind.INLINE_FRAGMENT) {
      n += countAliases(sel.selectionSet);
    }
  }
  return n;
}

/** Directives anywhere in the document, counted up to one past the limit. */
function countDirectives(document: DocumentNode): number {
  let n = 0;
  visit(document, {
    Directive() {
      n++;
      return n > MAX_DIRECTIVES ? BREAK : undefined;
    },
  });
  return n;
}
