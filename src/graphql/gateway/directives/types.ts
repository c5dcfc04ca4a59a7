import { isAbstractType, type GraphQLNamedType, type GraphQLSchema } from "graphql";

/** The object types a named type stands for: itself, or a union's or interface's members. */
export function getPossibleTypeNames(schema: GraphQLSchema, type: GraphQLNamedType): string[] {
  if (isAbstractType(type)) return schema.getPossibleTypes(type).map((member) => member.name);
  return [type.name];
}
