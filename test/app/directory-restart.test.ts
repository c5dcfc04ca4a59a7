import t from "tap";
import { createToken } from "../../src/auth/index.ts";
import { sampleLdif } from "../../src/demo/index.ts";
import { PROSSI, startAccountsAnnal } from "../support/accounts.ts";
import { eventually } from "../support/eventually.ts";
import { restartableSlapd } from "../support/restartable.ts";

t.setTimeout(240_000);

const title = (value: string) =>
  `mutation { updatePerson(dn: "${PROSSI}", input: [{ operation: replace, changes: { title: "${value}" } }]) { title } }`;

/**
 * slapd stopped under a running annal and started again on the same port and database: writes
 * to the directory answer 503 with `Retry-After` and `ANNAL_LDAP_UNAVAILABLE` meanwhile (never a
 * 500), reads of the projections are served all along, and afterwards writes go through and
 * capture records them again, on its own.
 */
t.test("while slapd restarts, writes are 503 with a code and reads keep working", async (t) => {
  const slapd = await restartableSlapd(t, { seedLdif: sampleLdif() });
  const app = await startAccountsAnnal(t, { slapd, captureInterval: "1s" });
  const { token } = await createToken(app.db.pool, app.store, {
    name: "editor",
    access: ["read", "write"],
  });
  const headers = { authorization: `Bearer ${token}` };
  const read = () =>
    fetch(`${app.url}/api/entries/users`, { headers, signal: AbortSignal.timeout(15_000) });
  const write = async (value: string) => {
    const response = await fetch(`${app.url}/graphql`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", origin: app.url },
      body: JSON.stringify({ query: title(value) }),
      signal: AbortSignal.timeout(30_000),
    });
    return {
      status: response.status,
      body: (await response.json()) as {
        data?: { updatePerson: { title: string } | null };
        errors?: { extensions: Record<string, unknown> }[];
      },
    };
  };
  await eventually(
    async () =>
      (await app.db.pool.query("SELECT 1 FROM capture_checkpoints WHERE source = 'accesslog'"))
        .rowCount,
    { what: "the first start's import" },
  );
  t.same((await write("Before")).body.data, { updatePerson: { title: "Before" } });

  await slapd.stop();
  for (let n = 0; n < 3; n++) {
    const refused = await write(`During ${n}`);
    t.match(
      refused.body.errors?.[0]?.extensions,
      { code: "SERVICE_UNAVAILABLE", annalCode: "ANNAL_LDAP_UNAVAILABLE", retryAfter: 5 },
      `write ${n}: the code (${JSON.stringify(refused.body)})`,
    );
    const listed = await read();
    t.equal(listed.status, 200, `read ${n}: the projections still serve`);
  }

  await slapd.start();
  const after = await eventually(
    async () => {
      const answer = await write("After");
      return answer.body.data?.updatePerson?.title === "After" ? answer : undefined;
    },
    { what: "a write goes through once slapd is back", timeout: 60_000, interval: 500 },
  );
  t.ok(after, "writes go through again");
  await eventually(
    async () =>
      (
        await app.db.pool.query(
          "SELECT 1 FROM projection_entries.entries WHERE dn = $1 AND attributes->'title' ? 'After'",
          [PROSSI],
        )
      ).rowCount,
    { what: "capture records the change made after the restart", timeout: 60_000 },
  );
});
