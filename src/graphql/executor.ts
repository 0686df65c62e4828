// Parses and validates documents once (an LRU cache keyed by the query text; measured: a cached
// document serves about four times the requests of parsing and validating each time) and
// executes them with graphql-js. A query document that comes back (its second execution) is
// compiled with graphql-jit, as Mercurius does for Fastify, and runs compiled from then on:
// the same resolvers, scalars and error mapping, after the same parse, limits and validation;
// for the `clients` query it serves about 1.6 times the requests (docs/benchmarks.md). A document
// seen once is never compiled, so a stream of new documents costs no compilation; mutations and
// documents graphql-jit declines run on graphql-js.
import {
  execute,
  getOperationAST,
  getVariableValues,
  GraphQLError,
  NoSchemaIntrospectionCustomRule,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
  type ValidationRule,
  type VariableDefinitionNode,
} from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { LRUCache } from 'lru-cache';
import { checkLimits } from './limits.js';
import { storableTextRule } from './storable-text.js';

type Prepared = { document: DocumentNode; errors?: undefined } | { document?: undefined; errors: readonly GraphQLError[] };

const MAX_CACHED_QUERY_LENGTH = 64 * 1024;
export const MAX_TOKENS = 10_000;
/** executions of a query document after which it runs compiled */
const COMPILE_AFTER = 2;

/** A query compiled by graphql-jit, with the variables its operation declares. */
interface Compiled {
  query: CompiledQuery;
  variables: readonly VariableDefinitionNode[];
}

/** A cached document's executions, and its compiled form per operation name once it has one. */
interface Runs {
  count: number;
  /** null: graphql-jit declined it, or it is not a query */
  compiled: Map<string, Compiled | null>;
}

export class GraphQLExecutor {
  // Bounded by the text it holds as well as by count: a parsed document (or the errors that point
  // into it) takes about 40 times the memory of its text (measured: 1.8 MiB for a 46 KB document),
  // so a thousand large ones would hold gigabytes. 1 MiB of text holds a thousand 1 KB queries.
  private readonly cache = new LRUCache<string, Prepared>({
    max: 1000,
    maxSize: 1024 * 1024,
    sizeCalculation: (_prepared, query) => query.length || 1,
  });
  /** per cached document (dies with it): how often it ran, and what it compiled to */
  private readonly runs = new WeakMap<DocumentNode, Runs>();
  private readonly compileAfter: number;
  private readonly rules: readonly ValidationRule[];
  /** "Did you mean" hints name schema members: shown only where introspection would show them anyway */
  readonly hideSuggestions: boolean;

  constructor(
    readonly schema: GraphQLSchema,
    options: { introspection: boolean /** 0: never compile; tests pass 1 to compile every query */; compileAfter?: number },
  ) {
    this.compileAfter = options.compileAfter ?? COMPILE_AFTER;
    this.rules = [...specifiedRules, storableTextRule, ...(options.introspection ? [] : [NoSchemaIntrospectionCustomRule])];
    this.hideSuggestions = !options.introspection;
  }

  prepare(query: string): Prepared {
    const cached = this.cache.get(query);
    if (cached) return cached;
    const prepared = this.parseAndValidate(query);
    if (query.length <= MAX_CACHED_QUERY_LENGTH) this.cache.set(query, prepared);
    return prepared;
  }

  private parseAndValidate(query: string): Prepared {
    let document: DocumentNode;
    try {
      document = parse(query, { maxTokens: MAX_TOKENS });
      // The limits run alone first: graphql-js's rules do work that grows with the square of a
      // selection's size, so a document they would choke on must be refused before they see it.
      // Called directly, not through validate(): that walks every node with type information
      // even when the rule has already answered.
      const tooBig = checkLimits(document);
      if (tooBig.length > 0) return { errors: tooBig.map((message) => new GraphQLError(message)) };
    } catch (err) {
      if (err instanceof GraphQLError) return { errors: [err] };
      // Parsing and measuring recurse once per nesting level; a document nested some thousand
      // levels deep exhausts the stack there. Both are pure, so the document is simply refused.
      if (err instanceof RangeError) return { errors: [new GraphQLError('The document is nested too deeply')] };
      throw err;
    }
    const errors = validate(this.schema, document, this.rules, { hideSuggestions: this.hideSuggestions });
    return errors.length > 0 ? { errors } : { document };
  }

  async execute(args: {
    document: DocumentNode;
    variables: Record<string, unknown> | undefined;
    operationName: string | undefined;
    context: unknown;
    /** told (at debug level) when this execution compiled its document */
    log?: { debug(obj: object, msg: string): void };
  }): Promise<ExecutionResult> {
    const compiled = this.compiled(args.document, args.operationName, args.log);
    if (compiled) {
      // graphql-js coerces the variables first, so a bad one is refused in the very words (and
      // with the hints, or without) that the uncompiled path gives
      if (compiled.variables.length > 0) {
        const coerced = getVariableValues(this.schema, compiled.variables, args.variables ?? {}, {
          maxErrors: 50,
          hideSuggestions: this.hideSuggestions,
        });
        if (coerced.errors) return { errors: coerced.errors };
      }
      return await compiled.query.query(undefined, args.context, args.variables ?? {});
    }
    return await execute({
      schema: this.schema,
      document: args.document,
      variableValues: args.variables,
      operationName: args.operationName,
      contextValue: args.context,
      hideSuggestions: this.hideSuggestions,
    });
  }

  /** The compiled form of a query that has run often enough; undefined: run it on graphql-js. */
  private compiled(
    document: DocumentNode,
    operationName: string | undefined,
    log: { debug(obj: object, msg: string): void } | undefined,
  ): Compiled | undefined {
    if (this.compileAfter === 0) return undefined;
    let runs = this.runs.get(document);
    if (!runs) {
      runs = { count: 0, compiled: new Map() };
      this.runs.set(document, runs);
    }
    const key = operationName ?? '';
    const known = runs.compiled.get(key);
    if (known !== undefined) return known ?? undefined;
    if (++runs.count < this.compileAfter) return undefined;
    const compiled = this.compile(document, operationName);
    runs.compiled.set(key, compiled);
    log?.debug({ operationName: operationName ?? null }, compiled ? 'query document compiled with graphql-jit' : 'document left to graphql-js');
    return compiled ?? undefined;
  }

  private compile(document: DocumentNode, operationName: string | undefined): Compiled | null {
    const operation = getOperationAST(document, operationName);
    // an unknown operation name, or several operations and none named: graphql-js says so
    if (operation?.operation !== 'query') return null;
    try {
      const compiled = compileQuery(this.schema, document, operationName);
      return isCompiledQuery(compiled) ? { query: compiled, variables: operation.variableDefinitions ?? [] } : null;
    } catch {
      return null; // graphql-js runs what graphql-jit cannot compile
    }
  }
}
