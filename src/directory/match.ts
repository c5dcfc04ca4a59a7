import type { FilterNode } from "../filters/index.ts";

/**
 * Evaluates a filter against an entry's attributes in memory, the way a directory compares
 * case-ignore strings: for deciding which configured type an entry belongs to. Values of
 * attributes are compared case-insensitively; ordering compares text.
 */
export function matchesFilter(
  node: FilterNode,
  attributes: Readonly<Record<string, readonly string[]>>,
): boolean {
  const valuesOf = (name: string): readonly string[] => {
    if (Object.hasOwn(attributes, name)) return attributes[name]!;
    const lower = name.toLowerCase();
    for (const key of Object.keys(attributes)) {
      if (key.toLowerCase() === lower) return attributes[key]!;
    }
    return [];
  };
  switch (node.op) {
    case "and":
      return node.filters.every((f) => matchesFilter(f, attributes));
    case "or":
      return node.filters.some((f) => matchesFilter(f, attributes));
    case "not":
      return !matchesFilter(node.filter, attributes);
    case "present":
      return node.attribute.toLowerCase() === "objectclass" || valuesOf(node.attribute).length > 0;
    case "substring": {
      const pattern = new RegExp(
        `^${escapeRegExp(node.initial ?? "")}${node.any.map((p) => `.*${escapeRegExp(p)}`).join("")}.*${escapeRegExp(node.final ?? "")}$`,
        "is",
      );
      return valuesOf(node.attribute).some((v) => pattern.test(v));
    }
    default: {
      const wanted = node.value.toLowerCase();
      return valuesOf(node.attribute).some((raw) => {
        const value = raw.toLowerCase();
        switch (node.op) {
          case "eq":
          case "approx":
            return value === wanted;
          case "ge":
            return value >= wanted;
          case "le":
            return value <= wanted;
          case "gt":
            return value > wanted;
          case "lt":
            return value < wanted;
        }
        return false;
      });
    }
  }
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
