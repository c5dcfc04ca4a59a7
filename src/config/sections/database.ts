import { z } from "zod";
import { integer, localPath, type SectionContext, urlWithScheme } from "../fields.ts";

/** `[database]`: the PostgreSQL that holds the event log and the projections. */
export function databaseSection(ctx: SectionContext) {
  return z
    .strictObject(
      {
        /**
         * Connection URL, e.g. `"postgres://annal:${PGPASSWORD}@db.internal:5432/annal"`. No default:
         * without it annal starts an embedded PostgreSQL with its data in `<dataDir>/postgres`.
         * The environment variable `DATABASE_URL` overrides it.
         */
        url: urlWithScheme(
          ["postgres:", "postgresql:"],
          "postgres://user:${PGPASSWORD}@host:5432/database",
        ).optional(),
        /**
         * Directory for annal's local state (the embedded PostgreSQL). Default `".annal"`.
         * A relative path is resolved against the working directory annal starts in (not the
         * configuration file's directory), so that `npm start` in a checkout keeps its data in
         * the checkout's `.annal/` whichever configuration it runs. Resolved to an absolute path.
         */
        dataDir: localPath(ctx).prefault(".annal"),
        /** Most connections this process opens. Default `10`. */
        poolSize: integer(1, 1_000).default(10),
      },
      { error: "expected a table: [database]" },
    )
    .prefault({});
}
