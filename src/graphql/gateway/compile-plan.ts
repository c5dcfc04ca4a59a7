/**
 * The compiler's first half: which operations it knows, read from the validated document into a
 * `Plan` (the search, its page, the nodes' fields and lookups), once per document and operation.
 * `compile.ts` makes the plan's statement and answers from it.
 */

import {
  getDirectiveValues,
  getNamedType,
  getNullableType,
  GraphQLID,
  GraphQLString,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  type ExecutionArgs,
  type FieldNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";
import { FIELD_DIRECTIVES, type DirectiveSite } from "./directives/index.ts";
import { searchSpec, type SearchSpec } from "./directives/search-spec.ts";
import { type ProjectionSource } from "./projection-reads.ts";
import { COMPUTED } from "./row-values.ts";

/** What a request's context gives the compiler: where it reads, and its entry budget. */
export interface CompiledReads {
  readonly source: ProjectionSource;
  /** `[directory] base`: the base of a search directive that names none. */
  readonly directoryBase: string | undefined;
  readonly maxEntries: number;
  readonly spent: { read: number };
}

/** A value field of an entry: `@ldapField(attribute, fallbackAttributes)` (`@ensureArray`). */
export interface Leaf {
  readonly kind: "leaf";
  readonly key: string;
  /** The attributes in order, by the projection's (canonical) names; `dn` the entry's DN. */
  readonly names: readonly string[];
  readonly list: boolean;
  readonly required: boolean;
}

export interface Typename {
  readonly kind: "typename";
  readonly key: string;
  readonly name: string;
}

/** `@ldapField(attribute: "dn") @ldapFindByAttribute(...)`: the entries naming this one. */
export interface Lookup {
  readonly kind: "lookup";
  readonly key: string;
  readonly spec: SearchSpec;
  readonly attribute: string;
  readonly fields: readonly (Leaf | Typename)[];
}

export type NodeField = Leaf | Typename | Lookup;

/** A root `@ldapSearch` connection field. */
export interface Search {
  readonly node: FieldNode;
  readonly field: GraphQLField<unknown, unknown>;
  readonly owner: string;
  readonly key: string;
  readonly spec: SearchSpec;
  readonly nodeFields: readonly NodeField[] | undefined;
  /** The connection's fields in the order asked. */
  readonly parts: readonly (
    | { readonly kind: "nodes"; readonly key: string }
    | { readonly kind: "totalCount"; readonly key: string }
    | { readonly kind: "typename"; readonly key: string; readonly name: string }
    | {
        readonly kind: "pageInfo";
        readonly key: string;
        readonly fields: readonly { readonly key: string; readonly name: string }[];
      }
  )[];
}

export interface Plan {
  readonly operation: OperationDefinitionNode;
  /** The root fields in order: the search, and constant `__typename`s. */
  readonly roots: readonly (
    | { readonly kind: "search"; readonly search: Search }
    | { readonly kind: "typename"; readonly key: string }
  )[];
  readonly search: Search;
}

/** Why an operation is not compiled: no plan. */
const NONE = Symbol("not compiled");

const plans = new WeakMap<object, Map<string, Plan | typeof NONE>>();

export function planOf(args: ExecutionArgs, reads: CompiledReads): Plan | undefined {
  let byOperation = plans.get(args.document);
  if (byOperation === undefined) plans.set(args.document, (byOperation = new Map()));
  const name = args.operationName ?? "";
  let plan = byOperation.get(name);
  if (plan === undefined) {
    plan = NONE;
    try {
      plan = buildPlan(args, reads) ?? NONE;
    } catch {
      plan = NONE;
    }
    byOperation.set(name, plan);
  }
  return plan === NONE ? undefined : plan;
}

/** The one operation the request runs, as graphql-js picks it. */
function operationOf(args: ExecutionArgs): OperationDefinitionNode | undefined {
  const operations = args.document.definitions.filter(
    (definition): definition is OperationDefinitionNode =>
      definition.kind === Kind.OPERATION_DEFINITION,
  );
  if (args.operationName == null) return operations.length === 1 ? operations[0] : undefined;
  return operations.find((operation) => operation.name?.value === args.operationName);
}

/** Plain fields only: no fragment, no directive, no response key twice. */
function plainFields(set: SelectionSetNode | undefined): FieldNode[] | undefined {
  if (set === undefined) return undefined;
  const keys = new Set<string>();
  const fields: FieldNode[] = [];
  for (const selection of set.selections) {
    if (selection.kind !== Kind.FIELD || selection.directives?.length) return undefined;
    const key = selection.alias?.value ?? selection.name.value;
    if (keys.has(key)) return undefined;
    keys.add(key);
    fields.push(selection);
  }
  return fields;
}

/** The field's read directives with their arguments, as `attachResolvers` reads them. */
function directivesOf(
  schema: GraphQLSchema,
  field: GraphQLField<unknown, unknown>,
): { name: string; args: Record<string, unknown>; site: DirectiveSite }[] {
  return (field.astNode?.directives ?? [])
    .filter((node) => node.name.value in FIELD_DIRECTIVES)
    .map((node, position) => {
      const args = getDirectiveValues(schema.getDirective(node.name.value)!, {
        directives: [node],
      });
      return { name: node.name.value, args: args ?? {}, site: { node, args, position } as never };
    });
}

function buildPlan(args: ExecutionArgs, reads: CompiledReads): Plan | undefined {
  const { schema } = args;
  const operation = operationOf(args);
  if (operation?.operation !== "query" || operation.directives?.length) return undefined;
  const query = schema.getQueryType();
  const rootFields = plainFields(operation.selectionSet);
  if (query === undefined || query === null || rootFields === undefined) return undefined;
  const roots: Plan["roots"][number][] = [];
  let search: Search | undefined;
  for (const node of rootFields) {
    const key = node.alias?.value ?? node.name.value;
    if (node.name.value === "__typename") {
      roots.push({ kind: "typename", key });
      continue;
    }
    if (search !== undefined) return undefined; // one search a statement
    const field = query.getFields()[node.name.value];
    if (field === undefined) return undefined;
    search = searchPlan(schema, query, field, node, key, reads);
    if (search === undefined) return undefined;
    roots.push({ kind: "search", search });
  }
  return search === undefined ? undefined : { operation, roots, search };
}

/** A site as the directives' compilers see it, for reading their specs again. */
function siteOf(
  schema: GraphQLSchema,
  owner: GraphQLObjectType,
  field: GraphQLField<unknown, unknown>,
  directive: ReturnType<typeof directivesOf>[number],
  reads: CompiledReads,
): DirectiveSite {
  const base = directive.args.base;
  // A base read from the parent's attribute is the resolvers' (it records what it reads).
  if (typeof base === "string" && base.startsWith("attribute:")) throw new Error("attribute base");
  if (directive.args.reads !== undefined && directive.args.reads !== null) {
    throw new Error("a read source of its own");
  }
  const site = directive.site as unknown as { node: DirectiveSite["node"]; position: number };
  return {
    environment: { schema, directoryBase: reads.directoryBase } as DirectiveSite["environment"],
    owner,
    field,
    node: site.node,
    args: directive.args,
    position: site.position,
  };
}

function searchPlan(
  schema: GraphQLSchema,
  query: GraphQLObjectType,
  field: GraphQLField<unknown, unknown>,
  node: FieldNode,
  key: string,
  reads: CompiledReads,
): Search | undefined {
  const directives = directivesOf(schema, field);
  if (directives.length !== 1 || directives[0]!.name !== "ldapSearch") return undefined;
  const spec = searchSpec(siteOf(schema, query, field, directives[0]!, reads));
  if (spec.base.kind === "attribute") return undefined;
  const connection = getNullableType(field.type);
  if (!isObjectType(connection)) return undefined;
  const fields = connection.getFields();
  const nodesField = fields.nodes;
  const nodeType = nodesField && getNamedType(nodesField.type);
  if (!isObjectType(nodeType)) return undefined;
  const selections = plainFields(node.selectionSet);
  if (selections === undefined) return undefined;
  const parts: Search["parts"][number][] = [];
  let nodeFields: NodeField[] | undefined;
  for (const selection of selections) {
    const part = selection.alias?.value ?? selection.name.value;
    const name = selection.name.value;
    if (name === "__typename") {
      parts.push({ kind: "typename", key: part, name: connection.name });
      continue;
    }
    const partField = fields[name];
    if (partField === undefined || partField.resolve !== undefined) return undefined;
    if (name === "nodes") {
      if (nodeFields !== undefined) return undefined;
      nodeFields = entryFields(schema, nodeType, selection.selectionSet, reads, true);
      if (nodeFields === undefined) return undefined;
      parts.push({ kind: "nodes", key: part });
    } else if (name === "totalCount") {
      parts.push({ kind: "totalCount", key: part });
    } else if (name === "pageInfo") {
      const infoType = getNamedType(partField.type);
      const infoFields = plainFields(selection.selectionSet);
      if (!isObjectType(infoType) || infoFields === undefined) return undefined;
      const wanted: { key: string; name: string }[] = [];
      for (const info of infoFields) {
        const infoName = info.name.value;
        const definition = infoType.getFields()[infoName];
        if (infoName !== "__typename" && (definition === undefined || definition.resolve)) {
          return undefined;
        }
        if (
          !["hasNextPage", "hasPreviousPage", "startCursor", "endCursor", "__typename"].includes(
            infoName,
          )
        ) {
          return undefined;
        }
        wanted.push({ key: info.alias?.value ?? infoName, name: infoName });
      }
      parts.push({ kind: "pageInfo", key: part, fields: wanted });
    } else {
      return undefined;
    }
  }
  return { node, field, owner: query.name, key, spec, nodeFields, parts };
}

/** The fields of an entry's selection, or undefined when one is not compiled. */
function entryFields(
  schema: GraphQLSchema,
  type: GraphQLObjectType,
  set: SelectionSetNode | undefined,
  reads: CompiledReads,
  lookups: boolean,
): NodeField[] | undefined {
  const selections = plainFields(set);
  if (selections === undefined) return undefined;
  const fields: NodeField[] = [];
  const { schema: directorySchema } = reads.source;
  for (const selection of selections) {
    const key = selection.alias?.value ?? selection.name.value;
    if (selection.name.value === "__typename") {
      fields.push({ kind: "typename", key, name: type.name });
      continue;
    }
    const field = type.getFields()[selection.name.value];
    if (field === undefined) return undefined;
    const directives = directivesOf(schema, field);
    const first = directives[0];
    if (first?.name !== "ldapField" || first.args.binary === true) return undefined;
    const attribute = typeof first.args.attribute === "string" ? first.args.attribute : field.name;
    const fallbacks = Array.isArray(first.args.fallbackAttributes)
      ? (first.args.fallbackAttributes as string[])
      : [];
    const nullable = getNullableType(field.type);
    const list = isListType(nullable);
    if (directives.length === 2 && directives[1]!.name === "ldapFindByAttribute" && lookups) {
      // The entries whose attribute holds this entry's DN.
      const dn = attribute.toLowerCase();
      if ((dn !== "dn" && dn !== "entrydn") || fallbacks.length > 0 || !list) return undefined;
      const itemType = getNamedType(field.type);
      if (!isObjectType(itemType)) return undefined;
      const spec = searchSpec(siteOf(schema, type, field, directives[1]!, reads));
      if (spec.base.kind === "attribute") return undefined;
      const lookupFields = entryFields(schema, itemType, selection.selectionSet, reads, false);
      if (lookupFields === undefined) return undefined;
      fields.push({
        kind: "lookup",
        key,
        spec,
        attribute: String(directives[1]!.args.attribute),
        fields: lookupFields as (Leaf | Typename)[],
      });
      continue;
    }
    const arrayed = directives.length === 2 && directives[1]!.name === "ensureArray";
    if (directives.length !== 1 && !arrayed) return undefined;
    if (arrayed && !list) return undefined;
    // Text values, as the resolvers hand them over: String or ID, one or a list of them.
    const item = isListType(nullable) ? getNullableType(nullable.ofType) : nullable;
    if (item !== GraphQLString && item !== GraphQLID) return undefined;
    const names: string[] = [];
    for (const name of [attribute, ...fallbacks]) {
      if (name.includes(";")) return undefined;
      const lower = name.toLowerCase();
      if (lower === "dn" || lower === "entrydn") {
        names.push("dn");
        continue;
      }
      if (COMPUTED.has(lower)) return undefined;
      const canonical = directorySchema.canonical(lower);
      // Unknown to the schema, one of its other names (the entry holds it by the first, under
      // which the field would not find it), or shown otherwise than stored (AD's SIDs, GUIDs).
      if (
        canonical === undefined ||
        canonical.toLowerCase() !== lower ||
        directorySchema.shownAs(canonical) !== undefined
      ) {
        return undefined;
      }
      names.push(canonical);
    }
    fields.push({ kind: "leaf", key, names, list, required: isNonNullType(field.type) });
  }
  return fields;
}
