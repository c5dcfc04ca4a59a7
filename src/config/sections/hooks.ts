import { z } from "zod";
import { configPath, integer, type SectionContext } from "../fields.ts";

/**
 * `[hooks]`: the change-event webhook's hooks files. Optional: without the table annal loads
 * no hooks (and `/-hooks/...` answers 404 `webhook_not_found`).
 */
export function hooksSection(ctx: SectionContext) {
  return z
    .strictObject(
      {
        /**
         * The directory of hooks files: every `.ts`/`.js` file in it is imported at start-up
         * and must export `defineHooks({...})` by default. Default `"hooks"`, relative to the
         * configuration file's directory; it must exist.
         */
        dir: configPath(ctx).prefault("hooks"),
        /** Change events this process's workers process at once. Default `10`. */
        concurrency: integer(1, 1_000).default(10),
      },
      { error: "expected a table: [hooks]" },
    )
    .optional();
}

/** The resolved `[hooks]` section. */
export type HooksConfig = NonNullable<z.output<ReturnType<typeof hooksSection>>>;
