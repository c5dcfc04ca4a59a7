import t from "tap";
import { accessProjection } from "../../projections/index.ts";
import { upsertPerson } from "../../src/auth/persons.ts";
import { accessShow } from "../../src/cli/commands/access.ts";
import { withTransaction } from "../../src/db/index.ts";
import { replayProjection } from "../../src/projector/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { databaseClock, endDelegation, grantDelegation } from "../../src/workflow/index.ts";
import { capturedOutput } from "./support.ts";
import { testDatabase } from "../support/postgres.ts";

t.setTimeout(120_000);

/** `annal access show --at` lists the delegations in force at that moment, and only those. */
t.test("access show --at lists the delegations in force then", async (t) => {
  const db = await testDatabase(t);
  const store = await EventStore.open(db.pool);
  const person = async (name: string) => {
    const dn = `uid=${name},ou=people,dc=example,dc=org`;
    const account = await withTransaction(db.pool, (tx) =>
      upsertPerson(tx, store, { origin: "directory", subject: dn, name, displayName: null, dn }),
    );
    return { accountId: account.id, name, dn, principals: [], access: [] };
  };
  const olga = await person("olga");
  await person("dora");
  const rita = await person("rita");
  await replayProjection({ pool: db.pool, projection: accessProjection });
  const now = await databaseClock(db.pool);
  const hours = (n: number) => new Date(now.getTime() + n * 3_600_000);
  const tomorrow = await grantDelegation(
    { pool: db.pool, store },
    {
      as: olga,
      to: "dora",
      from: hours(24),
      until: hours(48),
    },
  );
  const ended = await grantDelegation(
    { pool: db.pool, store },
    {
      as: rita,
      to: "olga",
      until: hours(72),
    },
  );
  await endDelegation({ pool: db.pool, store }, { as: rita, id: ended.id });

  const show = async (options: { at: string; account?: string; json?: boolean }) => {
    const output = capturedOutput();
    t.equal(await accessShow(db.pool, options, output.output), 0, output.err.join("\n"));
    return output.out.join("\n");
  };
  const inForce = await show({ at: hours(30).toISOString() });
  t.match(inForce, /delegations in force:\n {2}olga -> dora {2}from \S+ until \S+ {2}id /);
  t.notMatch(inForce, /rita -> olga/, "the delegation ended early is not in force");
  t.match(await show({ at: hours(1).toISOString() }), /delegations in force: none/, "not yet");
  t.match(await show({ at: hours(49).toISOString() }), /delegations in force: none/, "over");
  t.match(
    await show({ at: hours(30).toISOString(), account: "rita" }),
    /delegations in force: none/,
  );
  const json = JSON.parse(await show({ at: hours(30).toISOString(), account: "dora", json: true }));
  t.match(json.delegations, [
    { id: tomorrow.id, delegator: { name: "olga" }, delegate: { name: "dora" } },
  ]);
  t.equal(json.delegations.length, 1);
});
