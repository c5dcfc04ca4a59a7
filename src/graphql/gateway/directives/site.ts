import {
  getLocation,
  getNamedType,
  getNullableType,
  isAbstractType,
  isListType,
  isObjectType,
  type DirectiveNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
} from "graphql";
import type { DirectoryClient } from "../../../directory/index.ts";
import type {
  DirectiveEnvironment,
  FieldReads,
  GatewayContext,
  ReadSource,
} from "../../context.ts";
import { isEntry, valuesOf, type EntryObject } from "../entry.ts";
import { DirectoryNotConfiguredError, GatewaySchemaError } from "../../errors.ts";
import type { EntryLoaders } from "../loaders.ts";

/** Marks "nothing resolved yet": the first directive of a chain starts from it. */
export const NOTHING: unique symbol = Symbol("nothing resolved");

/** What a directive's step works on at run time. */
export interface StepInput {
  /** The value the directive before resolved, or `NOTHING`. */
  readonly value: unknown;
  readonly parent: unknown;
  readonly args: Readonly<Record<string, unknown>>;
  readonly context: GatewayContext;
  readonly info: GraphQLResolveInfo;
}

/** One directive of a field's chain, compiled. */
export type Step = (input: StepInput) => unknown;

/** One use of a directive on a field, at schema build. */
export interface DirectiveSite {
  readonly environment: DirectiveEnvironment;
  readonly owner: GraphQLObjectType;
  readonly field: GraphQLField<unknown, unknown>;
  readonly node: DirectiveNode;
  readonly args: Readonly<Record<string, unknown>>;
  /** Index in the field's chain: 0 for the first directive. */
  readonly position: number;
}

export type DirectiveCompiler = (site: DirectiveSite) => Step;

/** A schema error at the directive, naming file, line and directive. */
export function siteError(site: DirectiveSite, message: string, hint?: string): GatewaySchemaError {
  const location = site.node.loc;
  const where = location === undefined ? undefined : getLocation(location.source, location.start);
  return new GatewaySchemaError(
    `@${site.node.name.value} on ${site.owner.name}.${site.field.name}: ${message}`,
    {
      file: location?.source.name,
      line: where?.line,
      column: where?.column,
      hint,
    },
  );
}

/**
 * Records an attribute the site's field reads of an entry: entries are read with it whenever
 * a request selects the field (and with every such attribute, for a request that may run any).
 */
export function needAttribute(site: DirectiveSite, name: string, binary = false): void {
  const key = name.toLowerCase();
  if (key === "dn" || key === "entrydn") return;
  const { environment } = site;
  const reads = fieldReads(environment, site.field);
  for (const [attributes, binaryAttributes] of [
    [environment.attributes, environment.binaryAttributes],
    [reads.attributes, reads.binaryAttributes],
  ] as const) {
    if (!attributes.has(key)) attributes.set(key, name);
    if (binary && !binaryAttributes.has(key)) binaryAttributes.set(key, name);
  }
}

/**
 * Records that the site's field may read any attribute (it resolves other fields, named at
 * run time): a request that selects it reads entries with every attribute the schema names.
 */
export function needEveryAttribute(site: DirectiveSite): void {
  fieldReads(site.environment, site.field).every = true;
}

/** What a field's directives read of an entry, recorded as they are compiled. */
export function fieldReads(
  environment: DirectiveEnvironment,
  field: GraphQLField<unknown, unknown>,
): FieldReads {
  let reads = environment.fieldReads.get(field);
  if (reads === undefined) {
    reads = { attributes: new Map(), binaryAttributes: new Map(), every: false };
    environment.fieldReads.set(field, reads);
  }
  return reads;
}

/** The shape of a field's type. */
export interface FieldShape {
  readonly list: boolean;
  readonly named: GraphQLNamedType;
  /** The object type's name when the named type is one (not a union or interface). */
  readonly concrete: string | undefined;
}

export function shapeOf(field: GraphQLField<unknown, unknown>): FieldShape {
  const named = getNamedType(field.type);
  return {
    list: isListType(getNullableType(field.type)),
    named,
    concrete: isObjectType(named) ? named.name : undefined,
  };
}

/** A list for a list field, the first value (or null) for a single one. */
export function shaped(shape: FieldShape, values: readonly unknown[]): unknown {
  return shape.list ? [...values] : (values[0] ?? null);
}

/**
 * The value a transforming directive works on: the one resolved before, or (first in the
 * chain) the field's own value, a property of a plain object or the attribute of the field's
 * name of an entry.
 */
export function current(site: DirectiveSite, input: StepInput): unknown {
  if (input.value !== NOTHING) return input.value;
  const { parent } = input;
  if (isEntry(parent)) return shaped(shapeOf(site.field), parent.values(site.field.name));
  if (parent === null || typeof parent !== "object") return undefined;
  return (parent as Record<string, unknown>)[site.field.name];
}

/** Applies `transform` to each item of a list, or to the value itself. */
export function eachValue(value: unknown, transform: (item: unknown) => unknown): unknown {
  if (value === undefined || value === null) return null;
  return Array.isArray(value) ? value.map(transform) : transform(value);
}

/** A field argument that is declared on the field and given (or defaulted) in the query. */
export function fieldArgument(input: StepInput, name: string): unknown {
  const value = input.args[name];
  return value === null ? undefined : value;
}

export function directoryOf(
  context: GatewayContext,
  reads?: ReadSource,
): {
  directory: DirectoryClient;
  loaders: EntryLoaders;
} {
  if (context.directory === undefined || context.loaders === undefined) {
    throw new DirectoryNotConfiguredError();
  }
  const chosen = reads === undefined ? undefined : context.readsFrom?.(reads);
  return chosen ?? { directory: context.directory, loaders: context.loaders };
}

/** A read directive's `reads` argument (`DIRECTORY`, `PROJECTION`), if it has one. */
export function readSourceOf(site: DirectiveSite): ReadSource | undefined {
  const reads = site.args.reads;
  return reads === "DIRECTORY" ? "directory" : reads === "PROJECTION" ? "projection" : undefined;
}

/** Text values of a parent's attribute or property (Buffers and objects left out). */
export function textValuesOf(parent: unknown, name: string): string[] {
  return valuesOf(parent, name).flatMap((value) =>
    typeof value === "string" ? [value] : typeof value === "number" ? [String(value)] : [],
  );
}

/** DN strings in a resolved value: one, a list, or entries (their DNs). */
export function dnsIn(value: unknown): string[] {
  const items = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
  return items.flatMap((item) =>
    typeof item === "string" ? [item] : isEntry(item) ? [item.dn] : [],
  );
}

/** Tags entries with the field's concrete type (or the one given). */
export function typed(entry: EntryObject, typeName: string | undefined): EntryObject {
  return entry.as(typeName);
}

/** Whether a type is a union or interface (its entries' types are inferred). */
export function isAbstract(type: GraphQLNamedType): boolean {
  return isAbstractType(type);
}

/** The default values of a field's arguments, for calling it from another directive. */
export function defaultArguments(field: GraphQLField<unknown, unknown>): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const argument of field.args) {
    if (argument.defaultValue !== undefined) args[argument.name] = argument.defaultValue;
  }
  return args;
}

/**
 * Resolves another field of `type` on `parent` the way GraphQL would: its compiled chain, or
 * the property of its name.
 */
export async function resolveField(
  type: GraphQLObjectType,
  name: string,
  parent: unknown,
  input: StepInput,
  args: Record<string, unknown> = {},
): Promise<unknown> {
  const field = type.getFields()[name];
  if (field === undefined) return undefined;
  if (field.resolve !== undefined) {
    return field.resolve(
      parent,
      { ...defaultArguments(field), ...args },
      input.context,
      input.info,
    );
  }
  if (parent === null || typeof parent !== "object") return undefined;
  const value = (parent as Record<string, unknown>)[name];
  return typeof value === "function" ? (value as () => unknown).call(parent) : value;
}
