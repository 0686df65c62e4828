// A GraphQL interface over HTTP, as the GraphQL-over-HTTP specification describes it
// (docs/graphql.md): POST with a JSON body; GET with the parameters in the query string, for
// queries only; every other method 405. Each request is one list of steps: response headers and
// media type, Bearer authentication, the tenant context, the parameters, parse and validate
// (cached), then execute. Results carry `data`, `errors` (each with extensions.code) and, when
// there are errors, `error: [messages]` as the specification of this service shows. routes.ts
// registers the routes of each interface, in a scope set up by graphqlScope.
import { type DocumentNode, getOperationAST, GraphQLError, Kind, type ExecutionResult } from 'graphql';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RefusalChannel } from '../audit/service.js';
import { badInput, ForbiddenError, rateLimited } from '../errors.js';
import { accountOf, type CostBudget } from '../graphql/budget.js';
import { countObjects, estimateCost, MAX_COST, MIN_COST } from '../graphql/cost.js';
import type { GraphQLContext } from '../graphql/context.js';
import { formatGraphQLError, type PublicGraphQLError } from '../graphql/errors.js';
import type { GraphQLExecutor } from '../graphql/executor.js';
import { NUL_MESSAGE } from '../graphql/storable-text.js';
import { runKeyed } from '../idempotency/context.js';
import { accessOf, callerKey, fingerprint, KEY_PROBLEM, keyOf, LEASE_SECONDS } from '../idempotency/model.js';
import type { Services } from '../services.js';
import { graphqlErrorHandler } from './error-handler.js';
import { GRAPHQL_RESPONSE_JSON, negotiateMediaType } from './graphql-media-type.js';
import { paramsFromBody, paramsFromQueryString, type GraphQLParams } from './graphql-params.js';
import { bearerAuth, REALM } from './plugins/bearer-auth.js';
import { tenantContext } from './plugins/tenant-context.js';

interface Options {
  executor: GraphQLExecutor;
  services: Services;
  /** the cost budgets, shared by both interfaces */
  budget: CostBudget;
  /** which interface, as the audit trail names it */
  name: Exclude<RefusalChannel, 'console'>;
}

/** The methods other than GET and POST: answered 405 (routes.ts registers them with `methodNotAllowed`). */
export const OTHER_METHODS = ['HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * Sets up the scope of one GraphQL interface (before its routes: routes.ts registers them) and
 * returns the routes' options: GET and POST authenticate the token and the tenant context, then
 * run; any other method is 405.
 */
export function graphqlScope(scope: FastifyInstance, opts: Options) {
  scope.setErrorHandler(graphqlErrorHandler);
  // JSON bodies only. text/plain, forms and multipart are what a page on another site can make
  // a browser send without asking (no CORS preflight), so they must never reach execution.
  scope.removeContentTypeParser('text/plain');
  scope.addHook('onRequest', responseHeaders);
  const preHandler = [bearerAuth(opts.services), tenantContext(opts.services)];
  return {
    post: { preHandler, handler: (request: FastifyRequest, reply: FastifyReply) => run(request, reply, paramsFromBody(request.body), opts) },
    // HEAD is not derived from GET: it would run the query only to throw the result away
    get: {
      preHandler,
      exposeHeadRoute: false,
      handler: (request: FastifyRequest, reply: FastifyReply) => run(request, reply, paramsFromQueryString(request.query), opts),
    },
    methodNotAllowed,
  };
}

/** Every GraphQL response: never cached (results may carry client secrets), and the media type chosen. */
async function responseHeaders(request: FastifyRequest, reply: FastifyReply) {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache').header('vary', 'Accept');
  const mediaType = negotiateMediaType(request.headers.accept);
  if (!mediaType) {
    reply.code(406);
    throw badInput(`Not acceptable: this endpoint answers ${GRAPHQL_RESPONSE_JSON} or application/json`);
  }
  request.graphqlMediaType = mediaType;
}

async function methodNotAllowed(_request: FastifyRequest, reply: FastifyReply) {
  reply.code(405).header('allow', 'GET, POST');
  throw badInput('Send GraphQL requests with POST (or GET for queries)');
}

/** RFC 6750 section 3.1: the request needs more than the token's roles allow. */
const INSUFFICIENT_SCOPE = `Bearer realm="${REALM}", error="insufficient_scope", error_description="the token's roles do not allow an operation of this request (see errors[].extensions.code FORBIDDEN)"`;

async function run(request: FastifyRequest, reply: FastifyReply, params: GraphQLParams, opts: Options) {
  const logInternal = (err: unknown) => request.log.error({ err }, 'resolver failed');
  const format = (errors: readonly GraphQLError[]) =>
    errors.map((e) => formatGraphQLError(e, logInternal, { hideSuggestions: opts.executor.hideSuggestions }));

  // PostgreSQL text cannot hold NUL: refuse it here, with a clear answer, before any query
  if (params.hasNul) {
    return send(reply, { errors: format([new GraphQLError(NUL_MESSAGE)]) });
  }
  const prepared = opts.executor.prepare(params.query);
  if (prepared.errors) return send(reply, { errors: format(prepared.errors) });

  const operation = getOperationAST(prepared.document, params.operationName);
  if (request.method === 'GET') {
    // GET is safe and may be sent by a browser on any page's behalf: it never runs a mutation
    if (operation && operation.operation !== 'query') {
      reply.code(405).header('allow', 'POST');
      throw badInput(`Send ${operation.operation}s with POST`);
    }
  }

  const caller = request.caller!;
  // what the document can cost, estimated before it runs: refused over the limit, else drawn
  // from the caller's and its account's budgets (docs/graphql.md "Cost and budgets"); a request
  // without an estimate (its variables do not fit, no operation picked) is refused unrun: the least
  const estimate = operation ? estimateCost(opts.executor.schema, prepared.document, operation, params.variables) : undefined;
  if (estimate !== undefined && estimate > MAX_COST) return send(reply, { errors: format([new GraphQLError(TOO_COSTLY)]) });
  const cost = estimate ?? MIN_COST;
  const account = accountOf(
    (caller.tenant.id === caller.principal.tenantId ? caller.tenant : await opts.services.tenants.actingTenant(caller.principal, undefined)).path,
  );
  chargeBudget(reply, caller, account, cost, opts.budget);
  // a mutation sent with an Idempotency-Key runs once per key (docs/graphql.md "Safe retries")
  const keyed = operation?.operation === 'mutation' ? await claimKey(request, reply, params, opts) : undefined;
  if (keyed?.kind === 'replay') {
    reply.header('idempotent-replayed', 'true');
    await auditStaffAccess(request, operation, opts);
    return answer(reply, keyed.answer as Answer, { replay: true });
  }
  let loaders: GraphQLContext['loaders'] | undefined;
  const context: GraphQLContext = {
    caller,
    services: opts.services,
    log: request.log,
    get loaders() {
      loaders ??= opts.services.loaders(caller);
      return loaders;
    },
  };
  const execute = () =>
    opts.executor.execute({
      document: prepared.document,
      variables: params.variables,
      operationName: params.operationName,
      context,
    });
  let result: ExecutionResult;
  // a keyed request holds its key while it runs: the lease is extended every quarter of it
  const holding = keyed
    ? setInterval(
        () =>
          void opts.services.idempotency
            .extend(keyed.request)
            .catch((err: unknown) => request.log.warn({ err }, 'the hold on an Idempotency-Key was not extended')),
        (LEASE_SECONDS * 1000) / 4,
      )
    : undefined;
  try {
    result = keyed ? await runKeyed(keyed.request, execute) : await execute();
  } catch (err) {
    if (keyed)
      await opts.services.idempotency.abandon(keyed.request).catch((e: unknown) => request.log.error({ err: e }, 'an idempotency key was not freed'));
    throw err;
  } finally {
    clearInterval(holding);
  }
  // an answer that held more than was estimated (a list longer than its guess) pays the rest
  opts.budget.settle(callerKey(caller.principal), account, countObjects(result.data) - cost);
  const errors = result.errors ? format(result.errors) : undefined;
  await auditRefusedMutations(request, prepared.document, params.operationName, result.errors, opts);
  await auditStaffAccess(request, operation, opts);
  const body: Answer = { data: result.data, errors };
  if (keyed) {
    // refused for now (rate-limited, the database unreachable, a fault) and nothing committed:
    // the key is freed and a retry runs; any other answer is what a retry gets
    const retryable = errors?.some((e) => e.extensions.code === 'RATE_LIMITED' || e.extensions.code === 'INTERNAL') ?? false;
    // the answer goes to the caller even if it cannot be stored: a retry then hears the change
    // was made (answer_lost), never runs it twice
    await opts.services.idempotency
      .finish(keyed.request, body, retryable)
      .catch((err: unknown) => request.log.error({ err }, 'the answer of a request with an Idempotency-Key was not stored'));
  }
  return answer(reply, body);
}

const TOO_COSTLY = `This document could return more than ${MAX_COST} objects (estimated from its page sizes and nested lists before it runs): ask for smaller pages (maxResults, perPage, first) or fewer nested lists`;

/** Draws the request's cost from its caller's and its account's budgets, or refuses it (429, thrown). */
function chargeBudget(reply: FastifyReply, caller: NonNullable<FastifyRequest['caller']>, account: string, cost: number, budget: CostBudget) {
  const charged = budget.charge(callerKey(caller.principal), account, cost);
  if (charged.ok) return;
  const whose =
    charged.which === 'caller'
      ? `This ${caller.principal.kind === 'client' ? 'API client' : 'user'} has spent its GraphQL budget`
      : `The API clients and users of tenant ${account} and of the tenants below it have spent their GraphQL budget together`;
  reply.code(429);
  throw rateLimited(
    `${whose} (${charged.perMinute} a minute; this request's cost is ${cost}): try again in ${charged.retryAfterSeconds} s, or ask for less at a time`,
    charged.retryAfterSeconds,
  );
}

/** Vendor staff acting through Support access: every request, a replayed one included, is in the tenant's trail. */
async function auditStaffAccess(request: FastifyRequest, operation: ReturnType<typeof getOperationAST>, opts: Options) {
  await opts.services.audit
    .staffAccess(request.caller!, rootFields(operation), opts.name)
    .catch((err: unknown) => request.log.error({ err }, 'the audit event of a support access was not written'));
}

/** The root fields an operation selects, by name (a fragment's as `...Name`). */
function rootFields(operation: ReturnType<typeof getOperationAST>): string[] {
  return (operation?.selectionSet.selections ?? []).map((sel) =>
    sel.kind === Kind.FIELD ? sel.name.value : sel.kind === Kind.FRAGMENT_SPREAD ? `...${sel.name.value}` : '...',
  );
}

type Answer = { data?: ExecutionResult['data']; errors?: PublicGraphQLError[] | undefined };

/**
 * An executed request's answer (or its replay): the headers its errors call for, then its status
 * and body. A replay is the request's outcome as it was: never 503 nor Retry-After, which would
 * send the client round the same key again for as long as it is kept.
 */
function answer(reply: FastifyReply, body: Answer, { replay = false } = {}) {
  const { errors } = body;
  // a field the token's roles do not allow: the answer says so in the body (FORBIDDEN) and, as RFC
  // 6750 names it, in a challenge a client library can read without parsing GraphQL
  if (errors?.some((e) => e.extensions.code === 'FORBIDDEN')) reply.header('www-authenticate', INSUFFICIENT_SCOPE);
  const unavailable = (e: { extensions: { code: string; retryAfter?: unknown } }) =>
    e.extensions.code === 'INTERNAL' && typeof e.extensions.retryAfter === 'number';
  if (replay) return send(reply, body);
  const limited = errors?.find((e) => e.extensions.code === 'RATE_LIMITED' || unavailable(e));
  if (limited && typeof limited.extensions.retryAfter === 'number') reply.header('retry-after', String(limited.extensions.retryAfter));
  // the database could not be reached for some field: the answer as a whole is 503, so that
  // clients, proxies and load balancers retry (what data there is stays in the body)
  if (errors?.some(unavailable)) return send(reply, body, 503);
  return send(reply, body);
}

/**
 * The Idempotency-Key of a mutation, if it has one: taken for this request (run it keyed), or the
 * first answer to replay; refused (thrown) when it is malformed, serves another request, is still
 * running, or its change was made and its answer lost.
 */
async function claimKey(request: FastifyRequest, reply: FastifyReply, params: GraphQLParams, opts: Options) {
  const header = request.headers['idempotency-key'];
  if (header === undefined) return undefined;
  const key = keyOf(Array.isArray(header) ? header.join(', ') : header);
  if (key === undefined) throw badInput(KEY_PROBLEM);
  const tenantHeader = request.headers['x-tenant-context'];
  const caller = request.caller!;
  const begun = await opts.services.idempotency.begin({
    caller: callerKey(caller.principal),
    key,
    fingerprint: fingerprint({
      path: request.routeOptions.url ?? request.url,
      tenantContext: Array.isArray(tenantHeader) ? tenantHeader.join(', ') : tenantHeader,
      query: params.query,
      operationName: params.operationName ?? undefined,
      variables: params.variables,
      access: accessOf(caller.principal, caller.tenant, opts.services.clock.now()),
    }),
  });
  if (begun.kind === 'refused') {
    reply.code(begun.status);
    const retryAfter = begun.error.details.retryAfter;
    if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter));
    throw begun.error;
  }
  return begun;
}

/**
 * The mutation fields refused because the caller's roles do not allow them (FORBIDDEN) are an
 * audit event (audit/service.ts: one per tenant judged, however many fields were refused).
 * Queries are not: a read refused changes nothing. A write that fails is logged; the answer stands.
 */
async function auditRefusedMutations(
  request: FastifyRequest,
  document: DocumentNode,
  operationName: string | null | undefined,
  errors: readonly GraphQLError[] | undefined,
  opts: Options,
): Promise<void> {
  const refusals = (errors ?? []).flatMap((e) =>
    e.originalError instanceof ForbiddenError && e.path?.length === 1
      ? [{ operation: String(e.path[0]), reason: e.originalError.message, tenantId: e.originalError.decidedIn }]
      : [],
  );
  if (refusals.length === 0 || getOperationAST(document, operationName)?.operation !== 'mutation') return;
  await opts.services.audit
    .refused(request.caller!, refusals, opts.name)
    .catch((err: unknown) => request.log.error({ err }, 'the audit event of a refused mutation was not written'));
}

/**
 * Status by media type (GraphQL over HTTP, "Response"): application/json answers every
 * well-formed request 200, errors or not; application/graphql-response+json answers 400 when the
 * request never ran (no `data`: a syntax, validation or variable error) and 200 once it ran.
 */
function send(reply: FastifyReply, result: Answer, status?: number) {
  const mediaType = reply.request.graphqlMediaType!;
  const { errors } = result;
  const ran = result.data !== undefined;
  return reply
    .code(status ?? (mediaType === GRAPHQL_RESPONSE_JSON && !ran ? 400 : 200))
    .header('content-type', `${mediaType}; charset=utf-8`)
    .send({
      ...(ran ? { data: result.data } : {}),
      ...(errors ? { errors, error: errors.map((e) => e.message) } : {}),
    });
}
