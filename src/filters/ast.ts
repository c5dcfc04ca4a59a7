/**
 * One filter tree for every filter language annal reads (JSON, LDAP, the default expression,
 * SCIM) and every target it compiles to (parameterized SQL over the projections, escaped
 * RFC 4515 LDAP filters). Values are always plain data here: they are escaped or bound as
 * parameters by the compiler, never spliced as text.
 */
export type FilterNode =
  | { readonly op: "and"; readonly filters: readonly FilterNode[] }
  | { readonly op: "or"; readonly filters: readonly FilterNode[] }
  | { readonly op: "not"; readonly filter: FilterNode }
  | {
      readonly op: ComparisonOp;
      readonly attribute: string;
      /** The value; with `binary`, its bytes as base64 (as the log stores binary values). */
      readonly value: string;
      /**
       * The value is bytes (an octet string such as objectGUID's), written base64 in `value`:
       * an LDAP filter sends the bytes themselves (`\xx` each in RFC 4515's text form). For
       * equality only (`eqBytes`).
       */
      readonly binary?: true;
    }
  | { readonly op: "present"; readonly attribute: string }
  | {
      readonly op: "substring";
      readonly attribute: string;
      readonly initial?: string;
      readonly any: readonly string[];
      readonly final?: string;
    };

/** `eq` equality, `approx` LDAP `~=`, `ge`/`le` LDAP `>=`/`<=`, `gt`/`lt` strict (SCIM). */
export type ComparisonOp = "eq" | "approx" | "ge" | "le" | "gt" | "lt";

/** Every attribute name a filter mentions, in order of first appearance. */
export function filterAttributes(node: FilterNode): string[] {
  const seen = new Set<string>();
  const visit = (n: FilterNode): void => {
    switch (n.op) {
      case "and":
      case "or":
        n.filters.forEach(visit);
        return;
      case "not":
        visit(n.filter);
        return;
      default:
        seen.add(n.attribute);
    }
  };
  visit(node);
  return [...seen];
}
