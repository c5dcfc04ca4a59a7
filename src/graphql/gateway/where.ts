import {
  getNamedType,
  getNullableType,
  isInputObjectType,
  isListType,
  isScalarType,
  type GraphQLInputField,
  type GraphQLInputObjectType,
} from "graphql";
import {
  and,
  approx,
  assertAttributeName,
  eq,
  ge,
  le,
  not,
  or,
  present,
  substring,
} from "../../directory/index.ts";
import { type FilterNode } from "../../filters/index.ts";
import { holdsNul, MAX_FILTER_DEPTH, NUL_HINT } from "../../filters/index.ts";
import { BadUserInputError } from "../errors.ts";
import { inputAttribute } from "./input-attributes.ts";

/**
 * The `where`, `by` and `q` arguments of `@ldapFind` and `@ldapSearch`, turned into filter
 * trees. Only the shape of the input type decides the tree's shape; a client's values are
 * only ever assertion values, escaped when the filter is rendered (RFC 4515). So no value can
 * add, remove or reorder a filter's parts.
 */

type MemberKind = "filter" | "equals" | "equalsAny";

interface WhereMember {
  readonly field: string;
  readonly attribute: string;
  readonly kind: MemberKind;
}

/** What a `<X>Where` input means, read once from its type. */
export interface WhereSpec {
  readonly typeName: string;
  readonly members: readonly WhereMember[];
  readonly logical: { readonly and: boolean; readonly or: boolean; readonly not: boolean };
}

const FILTER_INPUTS = new Set(["StringFilterInput", "StringMatchFilterInput"]);

/** Reads a `<X>Where` input type; throws a plain Error naming what is wrong (for schema errors). */
export function whereSpec(type: GraphQLInputObjectType): WhereSpec {
  const members: WhereMember[] = [];
  const fields = type.getFields();
  for (const field of Object.values(fields)) {
    if (field.name === "_and_" || field.name === "_or_" || field.name === "_not_") {
      if (getNamedType(field.type) !== type) {
        throw new Error(
          `${type.name}.${field.name} must be of type ${type.name} (or a list of it)`,
        );
      }
      continue;
    }
    members.push({
      field: field.name,
      attribute: inputAttribute(field),
      kind: memberKind(type, field),
    });
  }
  return {
    typeName: type.name,
    members,
    logical: { and: "_and_" in fields, or: "_or_" in fields, not: "_not_" in fields },
  };
}

function memberKind(owner: GraphQLInputObjectType, field: GraphQLInputField): MemberKind {
  const named = getNamedType(field.type);
  if (isInputObjectType(named) && FILTER_INPUTS.has(named.name)) return "filter";
  if (isScalarType(named)) return isListType(getNullableType(field.type)) ? "equalsAny" : "equals";
  throw new Error(
    `${owner.name}.${field.name} must be a StringFilterInput, a StringMatchFilterInput or a scalar`,
  );
}

/** Reads a `by` input type: every member a scalar or a list of scalars. */
export function bySpec(type: GraphQLInputObjectType): WhereSpec {
  const members = Object.values(type.getFields()).map((field) => {
    const kind = memberKind(type, field);
    if (kind === "filter") {
      throw new Error(`${type.name}.${field.name} must be a scalar or a list of scalars`);
    }
    return { field: field.name, attribute: inputAttribute(field), kind };
  });
  return { typeName: type.name, members, logical: { and: false, or: false, not: false } };
}

function invalid(name: string, hint?: string): BadUserInputError {
  return new BadUserInputError(`Invalid ${name} filter`, { argument: name, hint });
}

function text(name: string, value: unknown): string {
  const string = typeof value === "string" ? value : String(value);
  if (!string.isWellFormed()) throw invalid(name, "the value holds an unpaired UTF-16 surrogate");
  return string;
}

/**
 * The filter of a `where` value; undefined when it sets no condition. `_and_`, `_or_` and
 * `_not_` nest at most `MAX_FILTER_DEPTH` levels (the REST filters' bound): deeper is refused
 * before anything reaches the directory, as is a value holding U+0000 (the projections'
 * PostgreSQL text cannot hold it; the REST channel refuses it alike).
 */
export function whereFilter(
  spec: WhereSpec,
  where: unknown,
  name = "where",
  depth = 1,
): FilterNode | undefined {
  if (where === undefined || where === null) return undefined;
  if (typeof where !== "object" || Array.isArray(where)) throw invalid(name);
  if (depth > MAX_FILTER_DEPTH) {
    throw invalid(name, `_and_, _or_ and _not_ nest at most ${MAX_FILTER_DEPTH} levels deep`);
  }
  const input = where as Record<string, unknown>;
  const parts: FilterNode[] = [];
  for (const member of spec.members) {
    const value = input[member.field];
    if (value === undefined || value === null) continue;
    parts.push(memberFilter(member, value));
  }
  if (spec.logical.and && Array.isArray(input._and_)) {
    for (const item of input._and_) {
      const part = whereFilter(spec, item, "_and_", depth + 1);
      if (part !== undefined) parts.push(part);
    }
  }
  if (spec.logical.or && input._or_ !== undefined && input._or_ !== null) {
    const items = Array.isArray(input._or_) ? input._or_ : [input._or_];
    const alternatives = items.map((item) => whereFilter(spec, item, "_or_", depth + 1));
    if (alternatives.length === 0 || alternatives.some((part) => part === undefined)) {
      throw invalid("_or_", "each alternative of _or_ needs at least one condition");
    }
    parts.push(
      alternatives.length === 1 ? alternatives[0]! : or(...(alternatives as FilterNode[])),
    );
  }
  if (spec.logical.not && input._not_ !== undefined && input._not_ !== null) {
    const negated = whereFilter(spec, input._not_, "_not_", depth + 1);
    if (negated === undefined) throw invalid("_not_", "_not_ needs at least one condition");
    parts.push(not(negated));
  }
  if (parts.length === 0) return undefined;
  const filter = parts.length === 1 ? parts[0]! : and(...parts);
  if (depth === 1 && holdsNul(filter)) throw invalid(name, NUL_HINT);
  return filter;
}

function memberFilter(member: WhereMember, value: unknown): FilterNode {
  const { attribute, field } = member;
  if (member.kind === "equals") return eq(attribute, text(field, value));
  if (member.kind === "equalsAny") {
    const values = Array.isArray(value) ? value : [value];
    if (values.length === 0) throw invalid(field, "give at least one value");
    const each = values.map((item) => eq(attribute, text(field, item)));
    return each.length === 1 ? each[0]! : or(...each);
  }
  if (typeof value !== "object" || Array.isArray(value)) throw invalid(field);
  const conditions: FilterNode[] = [];
  for (const [operator, operand] of Object.entries(value as Record<string, unknown>)) {
    if (operand === undefined || operand === null) continue;
    conditions.push(condition(field, attribute, operator, operand));
  }
  if (conditions.length === 0) throw invalid(field, "name at least one comparison, such as eq");
  return conditions.length === 1 ? conditions[0]! : and(...conditions);
}

function condition(
  field: string,
  attribute: string,
  operator: string,
  operand: unknown,
): FilterNode {
  switch (operator) {
    case "eq":
      return eq(attribute, text(field, operand));
    case "ne":
      return not(eq(attribute, text(field, operand)));
    case "in": {
      const values = Array.isArray(operand) ? operand : [operand];
      if (values.length === 0) throw invalid(field, "in needs at least one value");
      const each = values.map((item) => eq(attribute, text(field, item)));
      return each.length === 1 ? each[0]! : or(...each);
    }
    case "present":
      return operand === true ? present(attribute) : not(present(attribute));
    case "ge":
      return ge(attribute, text(field, operand));
    case "le":
      return le(attribute, text(field, operand));
    // An empty part matches any value: the attribute need only be present.
    case "startsWith":
      return operand === ""
        ? present(attribute)
        : substring(attribute, { initial: text(field, operand) });
    case "endsWith":
      return operand === ""
        ? present(attribute)
        : substring(attribute, { final: text(field, operand) });
    case "contains":
      return operand === ""
        ? present(attribute)
        : substring(attribute, { any: [text(field, operand)] });
    case "approx":
      return approx(attribute, text(field, operand));
    default:
      throw invalid(field);
  }
}

/** `q` matched by equality against each of `attributes`. */
export function qFilter(q: unknown, attributes: readonly string[]): FilterNode | undefined {
  if (q === undefined || q === null) return undefined;
  if (typeof q !== "string" || !q.isWellFormed()) {
    throw new BadUserInputError("Invalid q", { argument: "q" });
  }
  const each = attributes.map((attribute) => eq(attribute, q));
  const filter = each.length === 1 ? each[0]! : or(...each);
  if (holdsNul(filter)) throw new BadUserInputError("Invalid q", { argument: "q", hint: NUL_HINT });
  return filter;
}

/** Checks an attribute name given in the schema; a plain Error for the schema error. */
export function checkedAttribute(name: string): string {
  try {
    return assertAttributeName(name);
  } catch {
    throw new Error(`"${name}" is not an LDAP attribute name`);
  }
}
