import { z } from "zod";

/** A PostgreSQL identifier annal can use unquoted: lower case, at most 63 bytes. */
const PUBLICATION_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function eventsSection() {
  return z
    .strictObject(
      {
        publication: z
          .string({ error: "expected a publication name" })
          .regex(PUBLICATION_NAME, {
            error:
              "expected a PostgreSQL name: lower-case letters, digits and `_`, not starting with a digit, at most 63 characters",
          })
          .optional()
          .meta({
            description:
              "Name of a PostgreSQL publication of the event table that annal creates (if missing) at every start, for Debezium or any other logical-replication client (`docs/publication.md`). The server needs `wal_level = logical`, and annal's database user the right to create publications. Without it annal creates none (and drops none it made before).",
            example: "annal_events",
          }),
      },
      { error: "expected a table: [events]" },
    )
    .prefault({})
    .meta({ description: "The event log as other systems see it." });
}
