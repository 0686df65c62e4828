// A schema from its SDL file (the readable contract) plus a map of resolvers and scalars. Each
// interface types its map with the `Resolvers` type generated from its SDL
// (resolvers-types.generated.ts, `npm run codegen`), which checks field and argument names and the
// parent, argument and result types; here the map is taken as graphql-js takes it, and what no type
// can see (a type or field the schema lacks) is refused when the schema is built.
import { readFileSync } from 'node:fs';
import { buildSchema, GraphQLObjectType, GraphQLScalarType, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';

/** Per type name: a scalar's implementation, or the type's field resolvers by field name. */
export type ResolverMap = Record<string, GraphQLScalarType | Record<string, unknown> | undefined>;

export function loadSdl(url: URL): string {
  return readFileSync(url, 'utf8');
}

export function buildExecutableSchema(sdl: string, resolvers: ResolverMap): GraphQLSchema {
  const schema = buildSchema(sdl);
  for (const [typeName, value] of Object.entries(resolvers)) {
    const type = schema.getType(typeName);
    if (!type) throw new Error(`resolvers name a type the schema lacks: ${typeName}`);
    if (value === undefined) continue;
    if (value instanceof GraphQLScalarType) {
      if (!(type instanceof GraphQLScalarType)) throw new Error(`${typeName} is not a scalar`);
      Object.assign(type, {
        serialize: value.serialize,
        parseValue: value.parseValue,
        parseLiteral: value.parseLiteral,
      });
      continue;
    }
    if (!(type instanceof GraphQLObjectType)) throw new Error(`${typeName} is not an object type`);
    const fields = type.getFields();
    for (const [fieldName, resolve] of Object.entries(value)) {
      const field = fields[fieldName];
      if (!field) throw new Error(`resolvers name a field the schema lacks: ${typeName}.${fieldName}`);
      if (typeof resolve !== 'function') throw new Error(`the resolver of ${typeName}.${fieldName} is not a function`);
      // checked against the field by the generated types; graphql-js keeps resolvers untyped
      field.resolve = resolve as GraphQLFieldResolver<unknown, unknown>;
    }
  }
  return schema;
}
