import t from "tap";
import { captureOnce } from "../../src/capture/index.ts";
import { Projector, waitForProjection } from "../../src/projector/index.ts";
import { allProjections } from "../../projections/index.ts";
import { captureFixture, peopleLdif, quietLog } from "../support/capture.ts";
import { compareWithReplay } from "../support/projection-replay.ts";

const PEOPLE = 40;
const MEMBERS = 3000;

/** One group of `MEMBERS` members: some 100 KB of snapshot, against a person's few hundred bytes. */
const groupLdif = `dn: cn=everyone,ou=groups,dc=example,dc=org
objectClass: groupOfNames
cn: everyone
${Array.from({ length: MEMBERS }, (_, i) => `member: uid=m${i},ou=people,dc=example,dc=org`).join("\n")}
`;

t.test(
  "the bulk build cuts its chunks by bytes as well as events: a huge group does not make a chunk of its neighbours",
  async (t) => {
    const f = await captureFixture(t, {
      seedLdif: `${peopleLdif(PEOPLE / 2)}\n${groupLdif}\n${peopleLdif(PEOPLE)
        .split("\n\n")
        .slice(PEOPLE / 2)
        .join("\n\n")}`,
    });
    const { pool } = f.db;
    await captureOnce(f.context, "accesslog");
    const sizes = await pool.query<{ person: number; group: number; events: number }>(
      `SELECT max(pg_column_size(data)) FILTER (WHERE data->'state'->>'dn' LIKE 'uid=%')::int AS person,
              max(pg_column_size(data)) FILTER (WHERE data->'state'->>'dn' LIKE 'cn=everyone,%')::int AS group,
              count(*)::int AS events
         FROM events`,
    );
    const { person, group, events } = sizes.rows[0]!;
    // A chunk of about ten people by bytes; far more by events.
    const chunkBytes = person * 10;
    t.ok(group > chunkBytes, `the group (${group} bytes) is larger than a chunk (${chunkBytes})`);

    const bulk: { projection: string; events: number; chunks: number }[] = [];
    const log = {
      ...quietLog,
      info(fields: unknown, message?: string) {
        if (message === "first snapshots applied in bulk") {
          bulk.push(fields as { projection: string; events: number; chunks: number });
        }
      },
    };
    const projector = await Projector.start({
      pool,
      projections: allProjections,
      log,
      batchSize: 10,
      firstSnapshots: { chunk: 1000, chunkBytes },
    });
    t.teardown(() => projector.stop());
    const head = await f.store.head();
    for (const projection of allProjections) {
      await waitForProjection(pool, projection.name, head, 30_000);
    }
    const entries = bulk.find((b) => b.projection === "entries");
    t.equal(entries?.events, events, "the whole import in one bulk build");
    // Forty people of at most a tenth of a chunk each, the base, its ous and the group: at
    // least four chunks of people and one ended by the group.
    t.ok(entries!.chunks >= 5, `cut into chunks by bytes (${entries?.chunks})`);
    t.ok(entries!.chunks <= 12, `not into more than the bytes ask (${entries?.chunks})`);
    for (const projection of allProjections) {
      const same = await compareWithReplay(pool, projection);
      t.same(same.differences, [], `${projection.name} equals its replay`);
    }
  },
);
