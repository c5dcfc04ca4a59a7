import { AnnalError } from "../errors/index.ts";

/** The four filter languages of the REST channel's `filter` parameter. */
export type FilterFormat = "json" | "ldap" | "expression" | "scim";

const FORMAT_NAMES: Readonly<Record<FilterFormat, string>> = {
  json: "a JSON filter",
  ldap: "an LDAP filter (RFC 4515)",
  expression: "a default expression filter (attr = value, AND, OR, NOT)",
  scim: "a SCIM filter (RFC 7644)",
};

/** What stands at `position`, for a person: `"x"`, or the end of the filter. */
function describeAt(text: string, position: number): string {
  const codePoint = text.codePointAt(position);
  if (codePoint === undefined) return "the end of the filter";
  return JSON.stringify(String.fromCodePoint(codePoint));
}

/**
 * A filter that does not parse. `position` is the 0-based offset (in UTF-16 code units, as
 * JavaScript counts) of the first character that could not be read; `expected` says what would
 * have been accepted there, e.g. `")"` or `an attribute name`.
 *
 * @example
 * ```ts
 * // parseFilter('(&(cn=a)(sn=b)') throws
 * // FilterSyntaxError: filter: expected ")" at position 14
 * ```
 */
export class FilterSyntaxError extends AnnalError {
  readonly position: number;
  readonly expected: string;
  /** The language the filter was read as when it failed. */
  readonly format: FilterFormat;

  constructor(details: {
    format: FilterFormat;
    text: string;
    position: number;
    expected: string;
    hint?: string;
  }) {
    const { format, text, position, expected } = details;
    const hint =
      details.hint ??
      `The filter was read as ${FORMAT_NAMES[format]}; at position ${position} it has ${describeAt(text, position)}.`;
    super("ANNAL_FILTER_SYNTAX", `filter: expected ${expected} at position ${position}`, {
      hint,
      details: { parameter: "filter", format, position, expected },
    });
    this.position = position;
    this.expected = expected;
    this.format = format;
  }
}

/**
 * A filter that uses a feature of its language that annal does not evaluate (LDAP extensible
 * match, SCIM value paths, binary LDAP assertion values). Refused rather than misread.
 */
export class FilterUnsupportedError extends AnnalError {
  readonly position: number;
  /** The feature, e.g. `LDAP extensible match (":=")`. */
  readonly feature: string;
  readonly format: FilterFormat;

  constructor(details: { format: FilterFormat; position: number; feature: string; hint: string }) {
    super(
      "ANNAL_FILTER_UNSUPPORTED",
      `filter: ${details.feature} is not supported (at position ${details.position})`,
      {
        hint: details.hint,
        details: {
          parameter: "filter",
          format: details.format,
          position: details.position,
          feature: details.feature,
        },
      },
    );
    this.position = details.position;
    this.feature = details.feature;
    this.format = details.format;
  }
}

/** A filter longer or more deeply nested than the limits in `limits.ts`. */
export class FilterTooComplexError extends AnnalError {
  readonly limit: "length" | "depth";
  readonly maximum: number;

  constructor(limit: "length" | "depth", maximum: number, actual?: number) {
    const message =
      limit === "length"
        ? `filter: ${actual ?? "more than " + maximum} characters is longer than the limit of ${maximum}`
        : `filter: nested deeper than ${maximum} levels`;
    super("ANNAL_FILTER_TOO_COMPLEX", message, {
      details: { parameter: "filter", limit, maximum },
      hint:
        limit === "length"
          ? "Shorten the filter, or split the search into several requests."
          : "Flatten the filter: AND and OR take any number of operands, so nesting is rarely needed.",
    });
    this.limit = limit;
    this.maximum = maximum;
  }
}
