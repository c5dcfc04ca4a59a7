import { z } from "zod";
import { configPath, integer, type SectionContext } from "../fields.ts";

export function hooksSection(ctx: SectionContext) {
  return z
    .strictObject(
      {
        dir: configPath(ctx).prefault("hooks").meta({
          description:
            "The directory of hooks files: every `.ts` or `.js` file in it is imported at start-up and must export `defineHooks({...})` by default. It must exist.",
        }),
        concurrency: integer(1, 1_000).default(10).meta({
          description: "Change events this process's workers process at once.",
          example: 4,
        }),
      },
      { error: "expected a table: [hooks]" },
    )
    .optional()
    .meta({
      description:
        "The change-event webhook's hooks files. Without this table annal loads no hooks, and `/-hooks/...` answers 404 `webhook_not_found`.",
    });
}

/** The resolved `[hooks]` section. */
export type HooksConfig = NonNullable<z.output<ReturnType<typeof hooksSection>>>;
