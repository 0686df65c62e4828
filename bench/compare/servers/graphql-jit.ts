// (f) The reference for Gatehouse's `clients` query: Fastify + graphql-jit over 10 in-memory
// objects of 8 fields, documents parsed, validated and compiled once and cached by their text.
// No authentication and no database: it shows what the GraphQL layer itself can do on this box.
import Fastify from 'fastify';
import { buildSchema, type ExecutionResult, parse, validate } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { portFromEnv } from '../fixtures.js';

const schema = buildSchema(`
  type Client { id: ID! name: String! client_id: String! roles: [String!]! tenant_id: ID!
                created_at: String updated_at: String created_by: String }
  type Query { clients: [Client!]! }
`);
const now = new Date().toISOString();
const clients = Array.from({ length: 10 }, (_, i) => ({
  id: `00000000-0000-4000-8000-00000000000${i}`,
  name: `client ${i}`,
  client_id: `${i}`.padStart(32, '0'),
  roles: ['Analyst'],
  tenant_id: '1',
  created_at: now,
  updated_at: now,
  created_by: '00000000-0000-4000-8000-000000000000',
}));
// graphql-jit reads root fields as values (a function here would not be called)
const root = { clients };

type Compiled = {
  query: (root: unknown, ctx: unknown, vars: unknown) => Promise<ExecutionResult> | ExecutionResult;
  stringify: (r: unknown) => string;
};
const cache = new Map<string, Compiled>();
function compiled(query: string): Compiled | { errors: unknown } {
  const hit = cache.get(query);
  if (hit) return hit;
  const doc = parse(query);
  const errors = validate(schema, doc);
  if (errors.length) return { errors };
  const c = compileQuery(schema, doc);
  if (!isCompiledQuery(c)) return { errors: c.errors };
  if (cache.size > 100) cache.clear();
  cache.set(query, c as Compiled);
  return c as Compiled;
}

const app = Fastify({ logger: false });
app.get('/healthz', async () => ({ status: 'ok' }));
app.post('/graphql', async (req, reply) => {
  const { query, variables } = req.body as { query: string; variables?: unknown };
  const c = compiled(query);
  if ('errors' in c) return reply.code(400).send({ errors: c.errors });
  const result = await c.query(root, {}, variables ?? {});
  reply.header('content-type', 'application/json; charset=utf-8');
  return c.stringify(result);
});
await app.listen({ port: portFromEnv(), host: '127.0.0.1' });
