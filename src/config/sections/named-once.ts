import type { z } from "zod";

/**
 * A refinement of an array of named tables (`[[calendars]]`, `[[reviews]]`): a name given
 * twice is refused at the second, by its path.
 */
export function namedOnce(
  tables: readonly { readonly name: string }[],
  ctx: z.RefinementCtx,
): void {
  const seen = new Set<string>();
  for (const [index, { name }] of tables.entries()) {
    if (seen.has(name)) {
      ctx.addIssue({ code: "custom", path: [index, "name"], message: `"${name}" is named twice` });
    }
    seen.add(name);
  }
}
