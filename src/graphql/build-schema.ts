// A schema from its SDL file (the readable contract) plus a map of resolvers and scalars.
import { readFileSync } from 'node:fs';
import { buildSchema, GraphQLObjectType, GraphQLScalarType, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';

export type Resolvers = Record<string, Record<string, GraphQLFieldResolver<any, any, any>> | GraphQLScalarType>;

export function loadSdl(url: URL): string {
  return readFileSync(url, 'utf8');
}

export function buildExecutableSchema(sdl: string, resolvers: Resolvers): GraphQLSchema {
  const schema = buildSchema(sdl);
  for (const [typeName, value] of Object.entries(resolvers)) {
    const type = schema.getType(typeName);
    if (!type) throw new Error(`resolvers name a type the schema lacks: ${typeName}`);
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
      field.resolve = resolve;
    }
  }
  return schema;
}

/** Resolvers that read snake_case wire fields from camelCase domain properties. */
export function renamed<T>(map: Record<string, keyof T & string>): Record<string, GraphQLFieldResolver<T, unknown>> {
  return Object.fromEntries(Object.entries(map).map(([field, prop]) => [field, (source: T) => source[prop]]));
}
