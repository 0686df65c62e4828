// What a document may cost to answer, estimated before it runs (OWASP GraphQL cheat sheet, "cost
// analysis"; GitHub's node limit is the model): the objects it can return. An object field counts
// its object and what is selected in it; a list counts that times its size: a page's size from
// its arguments (`maxResults`, `perPage`, `first`, defaults included), a list with a known bound
// its bound, any other list LIST_SIZE_GUESS. `child_tenants` is bounded by the answer, not by
// its parent: one answer lists at most MAX_CHILD_TENANTS of them at every depth together
// (tenants/loaders.ts), so they count that many times the dearest of them, once, however deeply
// they nest. Scalars cost nothing: the objects are what the database reads. Each root mutation
// field adds MUTATION_COST: it writes, and may hash.
//
// Two uses: a document estimated over MAX_COST is refused before it runs (graphql-route.ts), and
// each request's estimate is charged to its caller's and its account's budgets (budget.ts); what
// the answer holds beyond it (countObjects) is charged after it has run. The
// estimate is an upper bound wherever a list is bounded (pages, environments, secrets, child
// tenants); the guess stands in for the others (labels, subscriptions, role assignments).
import {
  getArgumentValues,
  getNamedType,
  getNullableType,
  getVariableValues,
  isCompositeType,
  isListType,
  Kind,
  type DocumentNode,
  type FieldNode,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { DEFAULT_PER_PAGE, MAX_PER_PAGE } from '../paging.js';
import { MAX_CHILD_TENANTS } from '../tenants/loaders.js';

/** The estimate above which a document is refused unrun: 100,000 objects. */
export const MAX_COST = 100_000;
/** The size assumed of a list the schema does not bound (labels, subscriptions, child tenants, ...). */
export const LIST_SIZE_GUESS = 10;
/** Added for each root field of a mutation. */
export const MUTATION_COST = 10;
/** The least a request costs: introspection and `__typename` return no object of the schema's. */
export const MIN_COST = 1;

/** Fields whose page size comes from an argument, with the default when it is not given. */
const PAGES: Record<string, (args: Record<string, unknown>) => unknown> = {
  'Query.tenants': (a) => (a.tenantsQuery as { maxResults?: unknown } | undefined)?.maxResults ?? 10,
  'Query.auditEvents': (a) => a.first ?? DEFAULT_PER_PAGE,
  'Query.clients': (a) => a.perPage ?? DEFAULT_PER_PAGE,
  'Query.users': (a) => a.perPage ?? DEFAULT_PER_PAGE,
};

/** Lists with a known size: the page of a paged field above (counted there), or a fixed bound. */
const LIST_SIZES: Record<string, number> = {
  'TenantResults.results': 1,
  'AuditEventPage.events': 1,
  /** echo, delta, pilot */
  'Tenant.environments': 3,
  /** at most two secrets work at a time */
  'Client.secrets': 2,
};

/** A page size as the services will take it: out-of-range sizes are refused there, so cap them here. */
function pageSize(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) ? Math.min(Math.max(value, 1), MAX_PER_PAGE) : 1;
}

/**
 * The estimated cost of the operation `operationName` picks (with `variables`), or undefined when
 * the variables do not fit it: execution then refuses the request without running anything.
 * `document` must have passed validation (no fragment cycles, every field known).
 */
export function estimateCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown> | undefined,
): number | undefined {
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {}, { maxErrors: 1 });
  if (coerced.errors) return undefined;
  const fragments = new Map<string, { on: string; set: SelectionSetNode }>();
  for (const def of document.definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, { on: def.typeCondition.name.value, set: def.selectionSet });
  }
  const fragmentCosts = new Map<string, number>();
  // the dearest child tenant selected anywhere (its own child_tenants not included: they are
  // among the MAX_CHILD_TENANTS too)
  let perChild = 0;

  const argsOf = (parent: GraphQLCompositeType, field: FieldNode): Record<string, unknown> => {
    const def = 'getFields' in parent ? parent.getFields()[field.name.value] : undefined;
    if (!def) return {};
    try {
      return getArgumentValues(def, field, coerced.coerced);
    } catch {
      return {}; // refused by execution; the defaults stand in for the estimate
    }
  };

  const costOf = (set: SelectionSetNode, parent: GraphQLCompositeType): number => {
    let total = 0;
    for (const sel of set.selections) {
      if (sel.kind === Kind.INLINE_FRAGMENT) {
        const on = sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : parent;
        if (on && isCompositeType(on)) total += costOf(sel.selectionSet, on);
      } else if (sel.kind === Kind.FRAGMENT_SPREAD) {
        total += fragmentCost(sel.name.value);
      } else if (sel.selectionSet && 'getFields' in parent) {
        const def = parent.getFields()[sel.name.value];
        const type = def && getNamedType(def.type);
        if (!def || !type || !isCompositeType(type)) continue; // introspection: bounded by its own depth limit
        const name = `${parent.name}.${sel.name.value}`;
        if (name === 'Partnership.child_tenants') {
          const child = 1 + costOf(sel.selectionSet, type); // first: it may raise perChild itself
          perChild = Math.max(perChild, child);
          continue;
        }
        const page = PAGES[name];
        const times = page ? pageSize(page(argsOf(parent, sel))) : isListType(getNullableType(def.type)) ? (LIST_SIZES[name] ?? LIST_SIZE_GUESS) : 1;
        total += times * (1 + costOf(sel.selectionSet, type));
      }
      if (total > MAX_COST) return total; // refused whatever follows: stop counting
    }
    return total;
  };

  const fragmentCost = (name: string): number => {
    const known = fragmentCosts.get(name);
    if (known !== undefined) return known;
    const fragment = fragments.get(name);
    const on = fragment && schema.getType(fragment.on);
    const cost = fragment && on && isCompositeType(on) ? costOf(fragment.set, on) : 0;
    fragmentCosts.set(name, cost);
    return cost;
  };

  const root = schema.getRootType(operation.operation);
  if (!root) return undefined;
  const roots = operation.operation === 'mutation' ? countRootFields(operation.selectionSet, fragments) : 0;
  const fields = costOf(operation.selectionSet, root);
  return Math.max(MIN_COST, fields + MAX_CHILD_TENANTS * perChild + roots * MUTATION_COST);
}

/** The root fields of a selection, those inside fragments included (each spread counted). */
function countRootFields(set: SelectionSetNode, fragments: Map<string, { set: SelectionSetNode }>, seen = new Set<string>()): number {
  let n = 0;
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) n++;
    else if (sel.kind === Kind.INLINE_FRAGMENT) n += countRootFields(sel.selectionSet, fragments, seen);
    else if (!seen.has(sel.name.value)) {
      const fragment = fragments.get(sel.name.value);
      if (fragment) n += countRootFields(fragment.set, fragments, new Set([...seen, sel.name.value]));
    }
  }
  return n;
}

/** The objects an answer's `data` holds, counted as the estimate counts them (the root not included). */
export function countObjects(data: unknown): number {
  let n = 0;
  const walk = (value: unknown) => {
    if (Array.isArray(value)) for (const item of value) walk(item);
    else if (value !== null && typeof value === 'object') {
      n++;
      for (const inner of Object.values(value)) walk(inner);
    }
  };
  if (data !== null && typeof data === 'object') for (const inner of Object.values(data)) walk(inner);
  return n;
}
