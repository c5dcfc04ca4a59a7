import type { Projection } from "../../src/projector/index.ts";

/** A small projection for the projector's tests: per stream, how many Ticks and in what order. */
export function tallyProjection(version = 1): Projection<"Tick"> {
  return {
    name: "tally",
    version,
    handles: ["Tick"],
    tables: (table) => [
      `CREATE TABLE ${table("streams")} (
         stream_id text PRIMARY KEY,
         ticks integer NOT NULL,
         versions bigint[] NOT NULL,
         last jsonb NOT NULL${version > 1 ? ", doubled integer NOT NULL" : ""})`,
    ],
    async apply(events, { tx, table }) {
      for (const event of events) {
        await tx.query(
          `INSERT INTO ${table("streams")} AS s (stream_id, ticks, versions, last${version > 1 ? ", doubled" : ""})
           VALUES ($1, 1, ARRAY[$2::bigint], $3${version > 1 ? ", 2" : ""})
           ON CONFLICT (stream_id) DO UPDATE SET ticks = s.ticks + 1,
             versions = s.versions || $2::bigint, last = $3${version > 1 ? ", doubled = s.doubled + 2" : ""}`,
          [event.streamId, event.streamVersion, JSON.stringify(event.data)],
        );
      }
    },
  };
}
