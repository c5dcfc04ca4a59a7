import { AnnalError } from "../errors/index.ts";
import type { FilterNode } from "../filters/index.ts";

/**
 * RFC 4515 LDAP filters from the filter tree: the only way annal builds one. Attribute names
 * are checked, every value is escaped, so no value can change the filter's structure.
 */

const DESCR = /^[A-Za-z][A-Za-z0-9-]*$/;
const NUMERIC_OID = /^(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))+$/;

export class InvalidFilterAttributeError extends AnnalError {
  readonly attribute: string;
  constructor(attribute: string) {
    super(
      "ANNAL_FILTER_ATTRIBUTE_INVALID",
      `${JSON.stringify(attribute)} is not an attribute name`,
      {
        status: 400,
        hint: "an attribute is a name such as mail or employeeNumber (letters, digits, hyphens) or a numeric OID",
      },
    );
    this.attribute = attribute;
  }
}

export class InvalidFilterValueError extends AnnalError {
  readonly attribute: string;
  constructor(attribute: string) {
    super(
      "ANNAL_FILTER_VALUE_INVALID",
      `the value compared with ${attribute} is not valid Unicode text`,
      {
        status: 400,
        hint: "the value holds an unpaired UTF-16 surrogate; send it as UTF-8 text",
      },
    );
    this.attribute = attribute;
  }
}

/** Throws `ANNAL_FILTER_ATTRIBUTE_INVALID` unless `name` is a descr or a numeric OID. */
export function assertAttributeName(name: string): string {
  if (!DESCR.test(name) && !NUMERIC_OID.test(name)) throw new InvalidFilterAttributeError(name);
  return name;
}

/**
 * Escapes an assertion value (RFC 4515 §3): `*`, `(`, `)`, `\` and NUL always, and the other
 * ASCII control characters too so that a filter never hides one. Other characters stay as
 * UTF-8: ldapts reads a `\xx` escape as one Latin-1 character, so escaping non-ASCII bytes
 * would corrupt them on their way to the server.
 */
export function escapeFilterValue(value: string): string {
  let out = "";
  for (const char of value) {
    const code = char.charCodeAt(0);
    if (
      char === "*" ||
      char === "(" ||
      char === ")" ||
      char === "\\" ||
      code < 0x20 ||
      code === 0x7f
    ) {
      out += `\\${code.toString(16).padStart(2, "0")}`;
    } else {
      out += char;
    }
  }
  return out;
}

function value(attribute: string, text: string): string {
  if (!text.isWellFormed()) throw new InvalidFilterValueError(attribute);
  return escapeFilterValue(text);
}

const OPERATORS = { eq: "=", approx: "~=", ge: ">=", le: "<=" } as const;

/**
 * Renders a filter tree as an RFC 4515 string.
 *
 * `gt`/`lt` (SCIM) have no LDAP operator: they render as `(&(a>=v)(!(a=v)))`. For a
 * multi-valued attribute that is stricter than SCIM (an entry holding `v` among other values
 * does not match). An empty `and`/`or` is the absolute true `(&)` / false `(|)` of RFC 4526.
 *
 * @example renderFilter(and(eq("objectClass", "person"), eq("cn", "a*b"))) // "(&(objectClass=person)(cn=a\2ab))"
 */
export function renderFilter(node: FilterNode): string {
  switch (node.op) {
    case "and":
      return `(&${node.filters.map(renderFilter).join("")})`;
    case "or":
      return `(|${node.filters.map(renderFilter).join("")})`;
    case "not":
      return `(!${renderFilter(node.filter)})`;
    case "present":
      return `(${assertAttributeName(node.attribute)}=*)`;
    case "substring": {
      const attribute = assertAttributeName(node.attribute);
      const any = node.any.filter((part) => part !== "");
      if (!node.initial && any.length === 0 && !node.final) return `(${attribute}=*)`;
      const parts = [node.initial ?? "", ...any, node.final ?? ""].map((part) =>
        value(attribute, part),
      );
      return `(${attribute}=${parts.join("*")})`;
    }
    case "gt":
    case "lt": {
      const attribute = assertAttributeName(node.attribute);
      const escaped = value(attribute, node.value);
      return `(&(${attribute}${node.op === "gt" ? ">=" : "<="}${escaped})(!(${attribute}=${escaped})))`;
    }
    default: {
      const attribute = assertAttributeName(node.attribute);
      if (node.binary && node.op !== "eq") {
        throw new Error(`bytes of ${attribute} are compared for equality only`);
      }
      const text = node.binary ? escapedBytes(node.value) : value(attribute, node.value);
      return `(${attribute}${OPERATORS[node.op]}${text})`;
    }
  }
}

/** Bytes (base64) as an assertion value: every byte escaped, `\01\ab...`. */
function escapedBytes(base64: string): string {
  return Buffer.from(base64, "base64").toString("hex").replace(/../g, "\\$&");
}

export function eq(attribute: string, text: string): FilterNode {
  return { op: "eq", attribute, value: text };
}
/** Equality with bytes: `eqBytes("objectGUID", guid)` is `(objectGUID=\67\45...)`. */
export function eqBytes(attribute: string, bytes: Buffer): FilterNode {
  return { op: "eq", attribute, value: bytes.toString("base64"), binary: true };
}
export function approx(attribute: string, text: string): FilterNode {
  return { op: "approx", attribute, value: text };
}
export function ge(attribute: string, text: string): FilterNode {
  return { op: "ge", attribute, value: text };
}
export function le(attribute: string, text: string): FilterNode {
  return { op: "le", attribute, value: text };
}
export function present(attribute: string): FilterNode {
  return { op: "present", attribute };
}
/** `substring("cn", { initial: "Al" })` is `(cn=Al*)`; the parts are plain text, not patterns. */
export function substring(
  attribute: string,
  parts: { initial?: string; any?: readonly string[]; final?: string },
): FilterNode {
  return {
    op: "substring",
    attribute,
    any: parts.any ?? [],
    ...(parts.initial === undefined ? {} : { initial: parts.initial }),
    ...(parts.final === undefined ? {} : { final: parts.final }),
  };
}
export function and(...filters: FilterNode[]): FilterNode {
  return { op: "and", filters };
}
export function or(...filters: FilterNode[]): FilterNode {
  return { op: "or", filters };
}
export function not(filter: FilterNode): FilterNode {
  return { op: "not", filter };
}
