import type { FilterNode } from "./ast.ts";
import { FilterSyntaxError, FilterTooComplexError, type FilterFormat } from "./errors.ts";
import { parseExpressionFilter } from "./expression.ts";
import { parseJsonFilter } from "./json.ts";
import { parseLdapFilter, startsLikeLdap } from "./ldap.ts";
import { checkFilterLength } from "./limits.ts";
import { skipBlanks } from "./scan.ts";
import { parseScimFilter } from "./scim.ts";

export type ParsedFilter = { format: FilterFormat; ast: FilterNode };

/** Rule 3's languages, in the order they are tried. */
const UNBRACKETED = [
  ["expression", parseExpressionFilter],
  ["scim", parseScimFilter],
] as const;

/**
 * Reads the REST channel's `filter` parameter in whichever of its four languages it is written.
 *
 * The rule, by the first non-blank character (blanks: space, tab, CR, LF):
 *
 * 1. `{` or `[`: JSON.
 * 2. `(` directly followed by `&`, `|`, `!`, `:`, or by an attribute name and `=`, `~=`, `>=`,
 *    `<=` or `:`: LDAP (RFC 4515). Every LDAP filter starts so. Inside an LDAP item everything up
 *    to `)` is the value: `(cn=a OR b)` asks for cn "a OR b".
 * 3. Anything else, parenthesised or not: the default expression when it parses as one,
 *    otherwise SCIM. `(sn = Smith) OR (cn = Ann)` and `(age>5)` are expressions,
 *    `(title pr) and (sn eq "x")` is SCIM.
 *
 * No text is both an expression and a SCIM filter: every expression comparison has a symbol
 * operator (`=`, `!=`, `>=`, ...) right after the attribute and every SCIM comparison a word
 * (`eq`, `pr`, ...). So `sn eq "x"` is SCIM and `sn = x` the expression, whatever else they hold.
 *
 * When neither reads a rule-3 filter, the error is the one of the language that read further
 * into it (the expression on a tie), so it points where the writer most plausibly went wrong;
 * a filter too deeply nested for the expression is reported as too complex unless SCIM reads
 * it. An unsupported feature (LDAP extensible match, a SCIM value path) is final.
 *
 * @example
 * ```ts
 * parseFilter('sn = "Smith" AND givenName = Ann*');
 * // { format: "expression", ast: { op: "and", filters: [
 * //     { op: "eq", attribute: "sn", value: "Smith" },
 * //     { op: "substring", attribute: "givenName", initial: "Ann", any: [] } ] } }
 * ```
 * @throws FilterSyntaxError (`ANNAL_FILTER_SYNTAX`), FilterUnsupportedError
 *   (`ANNAL_FILTER_UNSUPPORTED`), FilterTooComplexError (`ANNAL_FILTER_TOO_COMPLEX`); all 400.
 */
export function parseFilter(text: string): ParsedFilter {
  checkFilterLength(text);
  const start = skipBlanks(text, 0);
  const first = text[start];
  if (first === undefined) {
    throw new FilterSyntaxError({
      format: "expression",
      text,
      position: start,
      expected: "a filter",
      hint: 'Leave out the filter parameter to match every entry, or give a filter such as sn = "Smith".',
    });
  }
  if (first === "{" || first === "[") return { format: "json", ast: parseJsonFilter(text) };
  if (startsLikeLdap(text, start)) return { format: "ldap", ast: parseLdapFilter(text) };
  let furthest: FilterSyntaxError | undefined;
  let tooComplex: FilterTooComplexError | undefined;
  for (const [format, parse] of UNBRACKETED) {
    try {
      return { format, ast: parse(text) };
    } catch (error) {
      if (error instanceof FilterTooComplexError) {
        tooComplex ??= error;
      } else if (!(error instanceof FilterSyntaxError)) {
        throw error;
      } else if (furthest === undefined || error.position > furthest.position) {
        furthest = error;
      }
    }
  }
  if (tooComplex !== undefined) throw tooComplex;
  throw furthest ?? new Error("unreachable: no filter language was tried");
}
