import { z } from "zod";
import { configPath, type SectionContext } from "../fields.ts";

export function rulesSection(ctx: SectionContext) {
  return z
    .strictObject(
      {
        file: configPath(ctx).meta({
          description:
            "The rules file: a TypeScript or JavaScript module exporting `endpoints = defineEndpoints(...)`, whose routes annal serves under `/api` (see docs/endpoints.md). It is bundled with esbuild at start-up; with `annal start --dev` (or `NODE_ENV=development`) it and the files it imports are watched and reloaded on change.",
          example: "rules/index.ts",
        }),
      },
      { error: "expected a table: [rules]" },
    )
    .optional()
    .meta({
      description:
        "Custom endpoints. Without this table annal serves no routes of its own under `/api` beyond the REST channel's.",
    });
}

/** The resolved `[rules]` section. */
export type RulesConfig = NonNullable<z.output<ReturnType<typeof rulesSection>>>;
