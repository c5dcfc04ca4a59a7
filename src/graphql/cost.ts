import {
  getNamedType,
  getNullableType,
  GraphQLError,
  isListType,
  Kind,
  type ASTVisitor,
  type FieldNode,
  type GraphQLField,
  type ValidationContext,
  type ValueNode,
} from "graphql";
import { DEFAULT_FIRST, MAX_FIRST } from "./connection.ts";
import { GRAPHQL_CODES } from "./errors.ts";

/**
 * The query cost limit, estimated before execution from the page sizes along each path.
 *
 * Every field selected costs one for each time it may be resolved: the product of the sizes
 * of the lists above it. A Connection field (`…Connection` type) multiplies what is under it
 * by its `first` (or `paging: { first }`; a variable's value when given, else the largest
 * allowed), and by the default page size when it has none; its `nodes` and `edges` are that
 * page, not another factor. Any other list field multiplies by the default page size, the
 * size a list is assumed to have (a person's groups). Fragments count where they are spread.
 *
 * Depth and alias limits do not bound this: `groups { members { nodes { groups { members …`
 * is shallow and alias-free, and still reads every group's every member's every group.
 *
 * @example
 * // { groups(first: 100) { nodes { members(first: 100) { nodes { uid } } } } }
 * // costs 1 + 100 + 100 + 100·100 + 100·100 = 20,301
 */
export function costLimitRule(maxCost: number, variables: () => Record<string, unknown>) {
  return (context: ValidationContext): ASTVisitor => ({
    OperationDefinition: {
      enter(operation) {
        const type =
          operation.operation === "query"
            ? context.getSchema().getQueryType()
            : operation.operation === "mutation"
              ? context.getSchema().getMutationType()
              : context.getSchema().getSubscriptionType();
        if (!type) return;
        const cost = selectionCost(
          context,
          type,
          operation.selectionSet.selections,
          1,
          variables(),
        );
        if (cost > maxCost) {
          context.reportError(
            new GraphQLError(
              `the query may cost ${cost > 1e12 ? "over 10^12" : Math.ceil(cost)}, more than the limit of ${maxCost}: ask for smaller pages (first) or fewer nested lists`,
              {
                nodes: [operation],
                extensions: {
                  code: GRAPHQL_CODES.costLimit,
                  cost: Math.min(Math.ceil(cost), Number.MAX_SAFE_INTEGER),
                  limit: maxCost,
                },
              },
            ),
          );
        }
      },
    },
  });
}

type Selections = FieldNode["selectionSet"] extends infer S
  ? S extends { selections: infer L }
    ? L
    : never
  : never;

/** The cost of `selections` on `parent` (an object, interface or union type), each resolved `times`. */
function selectionCost(
  context: ValidationContext,
  parent: ReturnType<typeof getNamedType>,
  selections: Selections,
  times: number,
  variables: Record<string, unknown>,
  fragmentsSeen: ReadonlySet<string> = new Set(),
): number {
  let cost = 0;
  for (const selection of selections) {
    if (selection.kind === Kind.FRAGMENT_SPREAD) {
      const name = selection.name.value;
      const fragment = context.getFragment(name);
      if (!fragment || fragmentsSeen.has(name)) continue; // a cycle is the validator's to report
      const on = context.getSchema().getType(fragment.typeCondition.name.value) ?? parent;
      cost += selectionCost(
        context,
        on,
        fragment.selectionSet.selections,
        times,
        variables,
        new Set([...fragmentsSeen, name]),
      );
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const on = selection.typeCondition
        ? (context.getSchema().getType(selection.typeCondition.name.value) ?? parent)
        : parent;
      cost += selectionCost(
        context,
        on,
        selection.selectionSet.selections,
        times,
        variables,
        fragmentsSeen,
      );
    } else {
      cost += times;
      const field = fieldOf(parent, selection.name.value);
      if (!field || !selection.selectionSet) continue;
      const below = times * sizeOf(parent, field, selection, variables);
      cost += selectionCost(
        context,
        getNamedType(field.type),
        selection.selectionSet.selections,
        below,
        variables,
        fragmentsSeen,
      );
    }
    if (cost > Number.MAX_SAFE_INTEGER) return cost;
  }
  return cost;
}

function fieldOf(parent: unknown, name: string): GraphQLField<unknown, unknown> | undefined {
  const fields = (
    parent as { getFields?: () => Record<string, GraphQLField<unknown, unknown>> }
  ).getFields?.();
  return fields?.[name];
}

/** How many times what is under `field` may be resolved per resolution of `field`. */
function sizeOf(
  parent: ReturnType<typeof getNamedType>,
  field: GraphQLField<unknown, unknown>,
  node: FieldNode,
  variables: Record<string, unknown>,
): number {
  const named = getNamedType(field.type);
  if (named.name.endsWith("Connection")) return firstOf(node, variables) ?? DEFAULT_FIRST;
  if (!isListType(getNullableType(field.type))) return 1;
  // A connection's nodes and edges are the page its field already counted.
  if (parent?.name.endsWith("Connection")) return 1;
  return firstOf(node, variables) ?? DEFAULT_FIRST;
}

/** `first` or `paging: { first }` as the request gives it; a variable not given counts at most. */
function firstOf(node: FieldNode, variables: Record<string, unknown>): number | undefined {
  for (const argument of node.arguments ?? []) {
    if (argument.name.value === "first") return numberOf(argument.value, variables);
    if (argument.name.value === "paging" && argument.value.kind === Kind.OBJECT) {
      const first = argument.value.fields.find((f) => f.name.value === "first");
      if (first) return numberOf(first.value, variables);
    }
    if (argument.name.value === "paging" && argument.value.kind === Kind.VARIABLE) {
      const paging = variables[argument.value.name.value] as { first?: unknown } | undefined;
      if (typeof paging?.first === "number") return clamp(paging.first);
      return paging === undefined ? undefined : MAX_FIRST;
    }
  }
  return undefined;
}

function numberOf(value: ValueNode, variables: Record<string, unknown>): number {
  if (value.kind === Kind.INT) return clamp(Number(value.value));
  if (value.kind === Kind.VARIABLE) {
    const given = variables[value.name.value];
    return typeof given === "number" ? clamp(given) : MAX_FIRST;
  }
  return MAX_FIRST;
}

/** A page is 1 to MAX_FIRST (a larger `first` is refused when the field resolves). */
function clamp(first: number): number {
  return Number.isFinite(first) ? Math.min(Math.max(Math.trunc(first), 1), MAX_FIRST) : MAX_FIRST;
}
