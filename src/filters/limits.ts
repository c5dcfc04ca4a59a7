import type { FilterNode } from "./ast.ts";
import { FilterTooComplexError } from "./errors.ts";

/** Longest filter text accepted, in UTF-16 code units (what `text.length` counts). */
export const MAX_FILTER_LENGTH = 4096;

/**
 * Deepest nesting accepted: at most this many `and`/`or`/`not` operators on any path from the
 * root of the filter tree to a comparison, whatever the language.
 */
export const MAX_FILTER_DEPTH = 32;

/**
 * The parsers are recursive, so they also stop at this many nested brackets (parentheses,
 * `NOT`, JSON objects and arrays) before the tree exists. It is loose enough that no filter
 * within {@link MAX_FILTER_DEPTH} meets it (JSON spends two brackets per level:
 * `{"$and": [...]}`), and tight enough that thousands of `(` never exhaust the stack.
 */
export const MAX_BRACKET_NESTING = 2 * MAX_FILTER_DEPTH + 1;

export function checkFilterLength(text: string): void {
  if (text.length > MAX_FILTER_LENGTH) {
    throw new FilterTooComplexError("length", MAX_FILTER_LENGTH, text.length);
  }
}

/** For the parsers: call with the new nesting level on entering each bracket. */
export function checkNesting(level: number): void {
  if (level > MAX_BRACKET_NESTING) throw new FilterTooComplexError("depth", MAX_FILTER_DEPTH);
}

/** Number of `and`/`or`/`not` operators on the longest root-to-leaf path. */
export function filterDepth(node: FilterNode): number {
  switch (node.op) {
    case "and":
    case "or":
      return 1 + Math.max(0, ...node.filters.map(filterDepth));
    case "not":
      return 1 + filterDepth(node.filter);
    default:
      return 0;
  }
}

export function checkFilterDepth(node: FilterNode): FilterNode {
  if (filterDepth(node) > MAX_FILTER_DEPTH) {
    throw new FilterTooComplexError("depth", MAX_FILTER_DEPTH);
  }
  return node;
}
