import { parseLdapFilter, type FilterNode } from "../../filters/index.ts";

/**
 * An RFC 4515 filter from the configuration with `{name}` placeholders in its values, filled
 * in after parsing: a value becomes a value in the tree and is escaped when the filter is
 * sent, so no login or claim can change the filter's structure. A placeholder with no value
 * leaves the filter matching nothing for that term (an empty string).
 *
 * @example
 * fillFilterTemplate("(|(uid={login})(mail={login}))", { login: "alice" });
 */
export function fillFilterTemplate(
  template: string,
  values: Readonly<Record<string, string | undefined>>,
): FilterNode {
  const fill = (text: string) =>
    text.replace(/\{([A-Za-z0-9_.-]+)\}/g, (_, name: string) => values[name] ?? "");
  const visit = (node: FilterNode): FilterNode => {
    switch (node.op) {
      case "and":
      case "or":
        return { op: node.op, filters: node.filters.map(visit) };
      case "not":
        return { op: "not", filter: visit(node.filter) };
      case "present":
        return node;
      case "substring":
        return {
          ...node,
          ...(node.initial === undefined ? {} : { initial: fill(node.initial) }),
          any: node.any.map(fill),
          ...(node.final === undefined ? {} : { final: fill(node.final) }),
        };
      default:
        return { ...node, value: fill(node.value) };
    }
  };
  return visit(parseLdapFilter(template));
}
