import { pino } from "pino";
import t from "tap";
import { erasureRoutes } from "../../src/app/erasure.ts";
import { createAuthentication, createToken } from "../../src/auth/index.ts";
import { createServer } from "../../src/http/index.ts";
import { addPeople, testConfig } from "../rest/fixtures/harness.ts";
import { EntryHistory } from "../support/entries.ts";
import { EventStore } from "../../src/store/index.ts";
import { testDatabase } from "../support/postgres.ts";

t.setTimeout(300_000);

t.test("POST /api/erasures erases for operators only", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const history = await EntryHistory.start(t, pool, store);
  const ids = await addPeople(history, new Date("2026-11-01T09:00:00Z"));
  await history.delete(ids.bob!, { at: new Date("2026-11-02T09:00:00Z") });
  await history.settled();
  const config = testConfig();
  const app = createServer({
    config,
    pool,
    projectorStatus: async () => [],
    log: pino({ level: "silent" }),
  });
  await app.register(
    erasureRoutes({ config, pool, authentication: createAuthentication({ pool }) }),
  );
  await app.ready();
  t.teardown(() => app.close());
  const bearer = async (access: ("read" | "operator")[], name: string) => ({
    authorization: `Bearer ${(await createToken(pool, store, { name, access })).token}`,
  });
  const post = async (headers: Record<string, string>, payload: unknown) =>
    app.inject({ method: "POST", url: "/api/erasures", headers, payload: payload as object });

  const reader = await post(await bearer(["read"], "reader"), { entry: ids.bob, reason: "x" });
  t.equal(reader.statusCode, 403);
  const operator = await bearer(["operator"], "operator");
  const bad = await post(operator, { reason: "x" });
  t.equal(bad.statusCode, 400);
  t.match(bad.json(), { code: "ANNAL_BAD_REQUEST" });
  const present = await post(operator, { entry: ids.alice, reason: "x" });
  t.equal(present.statusCode, 409);
  t.match(present.json(), { code: "ANNAL_ERASURE_ENTRY_PRESENT" });
  const done = await post(operator, { entry: ids.bob, reason: "order 9", attributes: ["mail"] });
  t.equal(done.statusCode, 201, done.body);
  t.match(done.json(), { entryUUID: ids.bob, attributes: ["mail"], positions: [Number] });
  const left = await pool.query("SELECT 1 FROM events WHERE data::text LIKE '%bob@example.org%'");
  t.equal(left.rows.length, 0, "bob's mail is gone from the log");
});
