import t from "tap";
import {
  checkPostgresVersion,
  checkPostgresVersionNumber,
  OLDEST_POSTGRES_MAJOR,
} from "../../src/operations/index.ts";
import { testDatabase } from "../support/postgres.ts";

t.test(
  "a server older than the oldest supported major is ANNAL_POSTGRES_VERSION_TOO_OLD",
  async (t) => {
    t.throws(() => checkPostgresVersionNumber(140012, "14.12"), {
      code: "ANNAL_POSTGRES_VERSION_TOO_OLD",
      message: `annal needs PostgreSQL ${OLDEST_POSTGRES_MAJOR} or newer; the server is 14.12`,
      hint: /upgrade the server/,
    });
    t.doesNotThrow(() => checkPostgresVersionNumber(150000, "15.0"));
  },
);

t.test("the test server passes, its version read from the server itself", async (t) => {
  const { pool } = await testDatabase(t);
  const version = await checkPostgresVersion(pool);
  t.ok(Number.parseInt(version, 10) >= OLDEST_POSTGRES_MAJOR, version);
});
