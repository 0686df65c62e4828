// A GraphQL interface over HTTP: POST with a JSON body {query, variables?, operationName?}.
// Authentication and the tenant context run first; the document is parsed and validated once
// (cached); results carry `data`, `errors` (each with extensions.code) and, when there are
// errors, `error: [messages]` as the specification shows. Status: 200 when the operation ran,
// 400 when the request or document was rejected before running, 401/403 from the pre-checks.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import { badInput } from '../errors.js';
import type { GraphQLContext } from '../graphql/context.js';
import { formatGraphQLError } from '../graphql/errors.js';
import type { GraphQLExecutor } from '../graphql/executor.js';
import type { Services } from '../services.js';
import type { Store } from '../store/index.js';
import { graphqlErrorHandler } from './error-handler.js';
import { bearerAuth } from './plugins/bearer-auth.js';
import { tenantContext } from './plugins/tenant-context.js';

interface Options {
  paths: string[];
  executor: GraphQLExecutor;
  services: Services;
  store: Store;
  clock: Clock;
}

function hasNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(hasNul);
  if (value && typeof value === 'object') return Object.entries(value).some(([k, v]) => k.includes('\u0000') || hasNul(v));
  return false;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export async function registerGraphQLRoute(app: FastifyInstance, opts: Options): Promise<void> {
  await app.register(async (scope) => {
    scope.setErrorHandler(graphqlErrorHandler);
    const preHandler = [bearerAuth(opts.services), tenantContext(opts.store, opts.clock)];
    for (const path of opts.paths) {
      scope.post(path, { preHandler }, (request, reply) => handle(request, reply, opts));
      scope.get(path, async (_request, reply) => {
        reply.code(405).header('allow', 'POST');
        throw badInput('Send GraphQL requests with POST and a JSON body');
      });
    }
  });
}

async function handle(request: FastifyRequest, reply: FastifyReply, opts: Options) {
  const body = request.body;
  if (!isPlainObject(body) || typeof body.query !== 'string') {
    throw badInput('The body must be a JSON object with a "query" string');
  }
  const { variables, operationName } = body;
  if (variables !== undefined && variables !== null && !isPlainObject(variables)) throw badInput('"variables" must be an object');
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') {
    throw badInput('"operationName" must be a string');
  }

  // PostgreSQL text cannot hold NUL: refuse it here, with a clear answer, before any query
  if (/\\u0000|\u0000/.test(body.query) || hasNul(variables)) throw badInput('text must not contain NUL characters');

  const prepared = opts.executor.prepare(body.query);
  const logInternal = (err: unknown) => request.log.error({ err }, 'resolver failed');
  if (prepared.errors) {
    const errors = prepared.errors.map((e) => formatGraphQLError(e, logInternal));
    return reply.code(400).send({ errors, error: errors.map((e) => e.message) });
  }

  const caller = request.caller!;
  let loaders: GraphQLContext['loaders'] | undefined;
  const context: GraphQLContext = {
    caller,
    services: opts.services,
    log: request.log,
    get loaders() {
      return (loaders ??= opts.services.loaders(caller));
    },
  };
  const result = await opts.executor.execute({
    document: prepared.document,
    variables: (variables as Record<string, unknown> | null) ?? undefined,
    operationName: (operationName as string | null) ?? undefined,
    context,
  });
  const errors = result.errors?.map((e) => formatGraphQLError(e, logInternal));
  const limited = errors?.find((e) => e.extensions.code === 'RATE_LIMITED');
  if (limited && typeof limited.extensions.retryAfter === 'number') reply.header('retry-after', String(limited.extensions.retryAfter));
  return reply.code(result.data === undefined ? 400 : 200).send({
    ...(result.data !== undefined ? { data: result.data } : {}),
    ...(errors ? { errors, error: errors.map((e) => e.message) } : {}),
  });
}
