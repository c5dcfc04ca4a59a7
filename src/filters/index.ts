/**
 * The REST channel's filter languages (JSON, LDAP, the default expression, SCIM), all read into
 * the shared `FilterNode` tree, and its compiler to parameterized SQL over the projections.
 *
 * @example
 * ```ts
 * const { ast } = parseFilter(request.query.filter);
 * const { ast: checked, unknown } = checkAttributes(ast, caseInsensitiveAttributes(names));
 * if (strict && unknown.length > 0) throw ...; // 400 listing `unknown`
 * const where = compileFilterToSql(checked, { attributesColumn: "e.attributes", params });
 * ```
 */
export { filterAttributes, type ComparisonOp, type FilterNode } from "./ast.ts";
export { parseFilter, type ParsedFilter } from "./detect.ts";
export { parseJsonFilter } from "./json.ts";
export { parseLdapFilter } from "./ldap.ts";
export { parseExpressionFilter } from "./expression.ts";
export { parseScimFilter } from "./scim.ts";
export {
  checkAttributes,
  caseInsensitiveAttributes,
  ABSOLUTE_TRUE,
  ABSOLUTE_FALSE,
  type AttributeResolver,
  type CheckedFilter,
} from "./check.ts";
export { holdsNul, NUL_HINT } from "./nul.ts";
export { compileFilterToSql, type SqlFilterOptions } from "./sql.ts";
export {
  compileFilterToIndexedSet,
  compileFilterToIndexedSql,
  compileValueTest,
  isIndexedSet,
  isPointTest,
  typesOfSql,
  type IndexedSqlFilterOptions,
  type ValueTestNode,
  type TypesIn,
  type TypesOf,
} from "./sql-indexed.ts";
export {
  FilterSyntaxError,
  FilterUnsupportedError,
  FilterTooComplexError,
  type FilterFormat,
} from "./errors.ts";
export { MAX_FILTER_LENGTH, MAX_FILTER_DEPTH } from "./limits.ts";
