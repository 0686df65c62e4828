// Parses and validates documents once (an LRU cache keyed by the query text; measured: a cached
// document serves about four times the requests of parsing and validating each time) and
// executes them with graphql-js.
import {
  execute,
  GraphQLError,
  NoSchemaIntrospectionCustomRule,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import { LRUCache } from 'lru-cache';
import { checkLimits } from './limits.js';
import { storableTextRule } from './storable-text.js';

type Prepared = { document: DocumentNode; errors?: undefined } | { document?: undefined; errors: readonly GraphQLError[] };

const MAX_CACHED_QUERY_LENGTH = 64 * 1024;
export const MAX_TOKENS = 10_000;

export class GraphQLExecutor {
  // Bounded by the text it holds as well as by count: a parsed document (or the errors that point
  // into it) takes about 40 times the memory of its text (measured: 1.8 MiB for a 46 KB document),
  // so a thousand large ones would hold gigabytes. 1 MiB of text holds a thousand 1 KB queries.
  private readonly cache = new LRUCache<string, Prepared>({
    max: 1000,
    maxSize: 1024 * 1024,
    sizeCalculation: (_prepared, query) => query.length || 1,
  });
  private readonly rules: readonly ValidationRule[];
  /** "Did you mean" hints name schema members: shown only where introspection would show them anyway */
  readonly hideSuggestions: boolean;

  constructor(
    readonly schema: GraphQLSchema,
    options: { introspection: boolean },
  ) {
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
  }): Promise<ExecutionResult> {
    return await execute({
      schema: this.schema,
      document: args.document,
      variableValues: args.variables,
      operationName: args.operationName,
      contextValue: args.context,
      hideSuggestions: this.hideSuggestions,
    });
  }
}
