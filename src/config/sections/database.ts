import { z } from "zod";
import { duration, integer, localPath, type SectionContext, urlWithScheme } from "../fields.ts";

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
              "Connection URL. Without it annal starts an embedded PostgreSQL with its data in `<dataDir>/postgres` and connects to it over its Unix socket (in that directory). A URL may name a server's Unix socket by its directory, as libpq does: `postgresql:///annal?host=/run/postgresql` or `postgres://annal@%2Frun%2Fpostgresql/annal`; any other host is reached over TCP. `annal status` and the start's line say which.",
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
        connectionTimeout: duration().prefault("10s").meta({
          description:
            "Longest a request or a job waits for one of the pool's connections (all of them in use) before it fails with `ANNAL_DATABASE_BUSY` (a 503 with `Retry-After`) instead of waiting for good. The workflow engine's instance locks take none of the pool's connections: they share one connection of their own.",
          example: "30s",
        }),
      },
      { error: "expected a table: [database]" },
    )
    .prefault({})
    .meta({ description: "The PostgreSQL that holds the event log and the projections." });
}
