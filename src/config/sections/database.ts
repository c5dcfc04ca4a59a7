import { z } from "zod";
import { integer, localPath, type SectionContext, urlWithScheme } from "../fields.ts";

export function databaseSection(ctx: SectionContext) {
  return z
    .strictObject(
      {
        url: urlWithScheme(
          ["postgres:", "postgresql:"],
          "postgres://user:${PGPASSWORD}@host:5432/database",
        )
          .optional()
          .meta({
            description:
              "Connection URL. Without it annal starts an embedded PostgreSQL with its data in `<dataDir>/postgres`.",
            example: "postgres://annal:${PGPASSWORD}@db.internal:5432/annal",
          }),
        dataDir: localPath(ctx).prefault(".annal").meta({
          description:
            "Directory for annal's local state (the embedded PostgreSQL). It is relative to the directory annal starts in, not to the configuration file's, so that `npm start` in a checkout keeps its data in the checkout's `.annal/` whichever configuration it runs.",
          example: "/var/lib/annal",
        }),
        poolSize: integer(1, 1_000)
          .default(10)
          .meta({ description: "Most connections this process opens.", example: 20 }),
      },
      { error: "expected a table: [database]" },
    )
    .prefault({})
    .meta({ description: "The PostgreSQL that holds the event log and the projections." });
}
