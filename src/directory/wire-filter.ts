import {
  AndFilter,
  ApproximateFilter,
  EqualityFilter,
  GreaterThanEqualsFilter,
  LessThanEqualsFilter,
  NotFilter,
  OrFilter,
  PresenceFilter,
  SubstringFilter,
  type Filter,
} from "ldapts";
import type { FilterNode } from "../filters/index.ts";
import { assertAttributeName, InvalidFilterValueError } from "./filter.ts";

/**
 * The same filter as `renderFilter`, built as ldapts filter objects for the wire. Handing
 * ldapts the string would make it parse it again, and its parser rejects numeric-OID attribute
 * names and reads a `\xx` escape as one Latin-1 character.
 */
export function toWireFilter(node: FilterNode): Filter {
  switch (node.op) {
    case "and":
      return new AndFilter({ filters: node.filters.map(toWireFilter) });
    case "or":
      return new OrFilter({ filters: node.filters.map(toWireFilter) });
    case "not":
      return new NotFilter({ filter: toWireFilter(node.filter) });
    case "present":
      return new PresenceFilter({ attribute: assertAttributeName(node.attribute) });
    case "substring": {
      const attribute = assertAttributeName(node.attribute);
      const any = node.any.filter((part) => part !== "");
      const initial = node.initial ?? "";
      const final = node.final ?? "";
      if (!initial && any.length === 0 && !final) return new PresenceFilter({ attribute });
      for (const part of [initial, ...any, final]) checked(attribute, part);
      return new SubstringFilter({ attribute, initial, any, final });
    }
    case "gt":
    case "lt": {
      const attribute = assertAttributeName(node.attribute);
      const value = checked(attribute, node.value);
      const bound =
        node.op === "gt"
          ? new GreaterThanEqualsFilter({ attribute, value })
          : new LessThanEqualsFilter({ attribute, value });
      return new AndFilter({
        filters: [bound, new NotFilter({ filter: new EqualityFilter({ attribute, value }) })],
      });
    }
    case "eq":
      return new EqualityFilter(equality(node.attribute, node.value, node.binary));
    case "approx":
      return new ApproximateFilter(comparison(node.attribute, node.value, node.binary));
    case "ge":
      return new GreaterThanEqualsFilter(comparison(node.attribute, node.value, node.binary));
    case "le":
      return new LessThanEqualsFilter(comparison(node.attribute, node.value, node.binary));
  }
}

function checked(attribute: string, value: string): string {
  if (!value.isWellFormed()) throw new InvalidFilterValueError(attribute);
  return value;
}

function comparison(
  attribute: string,
  value: string,
  binary?: true,
): { attribute: string; value: string } {
  if (binary) throw new Error(`bytes of ${attribute} are compared for equality only`);
  const name = assertAttributeName(attribute);
  return { attribute: name, value: checked(name, value) };
}

/** An equality's attribute and value: bytes as they are (`eqBytes`), text checked. */
function equality(
  attribute: string,
  value: string,
  binary?: true,
): { attribute: string; value: string | Buffer } {
  if (!binary) return comparison(attribute, value);
  return { attribute: assertAttributeName(attribute), value: Buffer.from(value, "base64") };
}
