import {
  getDirectiveValues,
  isAbstractType,
  isObjectType,
  type GraphQLField,
  type GraphQLFieldResolver,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
} from "graphql";
import { assertAccess, assertAuthority } from "../../auth/index.ts";
import { AnnalError } from "../../errors/index.ts";
import type { DirectiveEnvironment, GatewayContext } from "../context.ts";
import {
  FIELD_DIRECTIVES,
  fieldReads,
  MUTATION_DIRECTIVES,
  NOTHING,
  type Step,
} from "./directives/index.ts";
import { isEntry } from "./entry.ts";
import { GatewaySchemaError } from "../errors.ts";
import { answerAccess } from "./mutation-answer.ts";
import { accessField, viewerField } from "../viewer.ts";
import { attachWorkflowResolvers } from "../operations/index.ts";

/**
 * Gives every field that carries directives its resolver: the directives' steps, run left to
 * right, each on the value the one before resolved. Root fields check the caller's access
 * first (`read` for queries, `write` for mutations). Unions and interfaces tell an entry's
 * type from the field that produced it or from the entry itself.
 */
export function attachResolvers(environment: DirectiveEnvironment): void {
  const { schema, entryTypes } = environment;
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith("__")) continue;
    if (isObjectType(type)) {
      for (const field of Object.values(type.getFields())) attachField(environment, type, field);
    } else if (isAbstractType(type)) {
      type.resolveType = (value) => {
        const candidates = schema.getPossibleTypes(type).map((member) => member.name);
        if (isEntry(value)) {
          if (value.typeName !== undefined && candidates.includes(value.typeName))
            return value.typeName;
          const inferred = entryTypes.infer(value, candidates);
          if (inferred !== undefined) return inferred;
          throw new AnnalError(
            "ANNAL_GRAPHQL_TYPE_UNKNOWN",
            `cannot tell which of ${candidates.join(", ")} the entry ${value.dn} is`,
            {
              status: 500,
              hint: `configure [graphql.types.<Type>] objectClass or filter for the types of ${type.name}`,
            },
          );
        }
        const typename = (value as { __typename?: unknown } | null)?.__typename;
        return typeof typename === "string" ? typename : undefined;
      };
    }
  }
  const query = schema.getQueryType();
  const viewer = query?.getFields().viewer;
  if (viewer !== undefined) {
    viewer.resolve = (_parent, _args, context: GatewayContext) => viewerField(context.viewer);
  }
  const access = query?.getFields().access;
  if (access !== undefined) access.resolve = accessField;
  attachWorkflowResolvers(schema);
}

function rootAccess(schema: GraphQLSchema, type: GraphQLObjectType): "read" | "write" | undefined {
  if (type === schema.getQueryType()) return "read";
  if (type === schema.getMutationType()) return "write";
  return undefined;
}

function attachField(
  environment: DirectiveEnvironment,
  owner: GraphQLObjectType,
  field: GraphQLField<unknown, unknown>,
): void {
  const nodes = (field.astNode?.directives ?? []).filter(
    (node) => node.name.value in FIELD_DIRECTIVES,
  );
  if (nodes.length === 0) return;
  fieldReads(environment, field); // even if it names no attribute: see EntryReads
  const steps: Step[] = nodes.map((node, position) => {
    const definition = environment.schema.getDirective(node.name.value);
    if (!definition) throw new GatewaySchemaError(`directive @${node.name.value} is not defined`);
    let args: Record<string, unknown>;
    try {
      args = getDirectiveValues(definition, { directives: [node] }) ?? {};
    } catch (error) {
      const location = node.loc;
      throw new GatewaySchemaError(
        `@${node.name.value} on ${owner.name}.${field.name}: ${(error as Error).message}`,
        {
          file: location?.source.name,
          cause: error,
        },
      );
    }
    return FIELD_DIRECTIVES[node.name.value]!({ environment, owner, field, node, args, position });
  });
  const access = rootAccess(environment.schema, owner);
  const checkAnswer =
    access === "write" && nodes.some((node) => MUTATION_DIRECTIVES.has(node.name.value))
      ? answerAccess(field)
      : undefined;
  const resolve: GraphQLFieldResolver<unknown, GatewayContext> = (parent, args, context, info) => {
    if (access !== undefined) assertAccess(context.viewer, access);
    // A mutation is a command: it needs authority confirmed by the account's provider.
    if (access === "write") assertAuthority(context.viewer);
    // What it answers is a read: before anything is written.
    checkAnswer?.(context.viewer, info);
    return runSteps(steps, 0, NOTHING, parent, args, context, info);
  };
  field.resolve = resolve as GraphQLFieldResolver<unknown, unknown>;
}

/**
 * Runs `steps` from `from` on, each on the value the one before resolved. Synchronously while
 * the steps answer synchronously (reading attributes of an entry at hand, converting values):
 * a promise for each of the thousands of such fields in a page of entries would cost more
 * than the fields themselves. The first step that answers with a promise continues the chain
 * when it settles.
 */
function runSteps(
  steps: readonly Step[],
  from: number,
  before: unknown,
  parent: unknown,
  args: Record<string, unknown>,
  context: GatewayContext,
  info: GraphQLResolveInfo,
): unknown {
  let value = before;
  for (let index = from; index < steps.length; index++) {
    const result = steps[index]!({ value, parent, args, context, info });
    if (isPromiseLike(result)) {
      return Promise.resolve(result).then((resolved) =>
        runSteps(steps, index + 1, resolved, parent, args, context, info),
      );
    }
    value = result;
  }
  return value === NOTHING ? null : value;
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function"
  );
}
