import pino from "pino";
import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { createToken } from "../../src/auth/index.ts";
import { sampleLdif } from "../../src/demo/index.ts";
import { waitForProjection } from "../../src/projector/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { GATEWAY_TOML } from "../support/accounts.ts";
import { appConfig } from "../support/app-config.ts";
import { eventually } from "../support/eventually.ts";
import { armPausePoint } from "../support/pause-points.ts";
import { testDatabase } from "../support/postgres.ts";
import { startSlapd } from "../support/slapd.ts";

const PROSSI = "uid=prossi,ou=engineering,ou=people,dc=example,dc=org";

t.test(
  "during a first start, an entry GraphQL finds is not called unknown by REST: the history is still being built (503, Retry-After)",
  async (t) => {
    const slapd = await startSlapd({ seedLdif: sampleLdif() });
    t.teardown(() => slapd.stop());
    const db = await testDatabase(t);
    const config = await appConfig(t, {
      db,
      slapd,
      captureInterval: "1h",
      extraToml: GATEWAY_TOML,
    });
    const { token } = await createToken(db.pool, await EventStore.open(db.pool), {
      name: "reader",
      access: ["read"],
    });
    const headers = { authorization: `Bearer ${token}` };
    // The first start's import stands after its first page, its transaction open.
    const importing = armPausePoint(t, "capture.import.pageRead", { subject: "import" });
    const annal = await startAnnal({ config, log: pino({ level: "silent" }) });
    t.teardown(() => annal.stop());
    await importing.reached();

    const found = await fetch(`${annal.url}/graphql`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ query: '{ person(by: { uid: "prossi" }) { dn } }' }),
    });
    const body = (await found.json()) as {
      data: { person: { dn: string } | null };
      extensions?: { reads: string };
    };
    t.same(body.data, { person: { dn: PROSSI } }, "GraphQL finds the entry (in the directory)");

    const id = encodeURIComponent(PROSSI);
    for (const url of [
      `/api/entries/users/${id}?at=now`,
      `/api/entries/users/${id}`,
      `/api/entries/users/${id}/changes`,
      `/api/entries/users/${id}/memberships`,
    ]) {
      const response = await fetch(`${annal.url}${url}`, { headers });
      const problem = (await response.json()) as Record<string, unknown>;
      t.equal(response.status, 503, `${url}: not a 404`);
      t.equal(response.headers.get("retry-after"), "5", `${url}: Retry-After`);
      t.match(problem, {
        code: "ANNAL_HISTORY_BUILDING",
        detail: /still being recorded/,
        hint: /Retry-After/,
      });
      t.not(problem.reason, "unknown");
    }
    // A search would answer a page of what the history holds so far (nothing of the
    // directory): not an empty page, the same 503.
    for (const url of [
      "/api/entries/users?filter=(uid=prossi)",
      "/api/entries/users?at=now",
      "/api/entries/users?during=P1D",
    ]) {
      const response = await fetch(`${annal.url}${url}`, { headers });
      t.equal(response.status, 503, `${url}: not an empty page`);
      t.equal(response.headers.get("retry-after"), "5", `${url}: Retry-After`);
      t.match(await response.json(), {
        code: "ANNAL_HISTORY_BUILDING",
        detail: /users cannot be searched yet/,
      });
    }
    const malformed = await fetch(`${annal.url}/api/entries/users?filter=(uid=`, { headers });
    t.equal(malformed.status, 400, "a malformed search is still told what is wrong with it");

    importing.release();
    await eventually(
      async () =>
        (await db.pool.query("SELECT 1 FROM capture_checkpoints WHERE source = 'accesslog'"))
          .rowCount,
      { what: "the first start's import" },
    );
    const head = await annal.store.head();
    await waitForProjection(db.pool, "entries", head, 30_000);
    await waitForProjection(db.pool, "entry_versions", head, 30_000);
    const now = await fetch(`${annal.url}/api/entries/users/${id}?at=now`, { headers });
    t.equal(now.status, 200, "once imported, the entry is there at a moment");
    t.match(await now.json(), { dn: PROSSI });
    const nobody = await fetch(
      `${annal.url}/api/entries/users/${encodeURIComponent("uid=nobody,ou=people,dc=example,dc=org")}?at=now`,
      { headers },
    );
    const search = await fetch(`${annal.url}/api/entries/users?filter=(uid=prossi)`, { headers });
    t.equal(search.status, 200, "once imported, a search answers");
    t.match(await search.json(), { nodes: [{ dn: PROSSI }] });
    t.equal(nobody.status, 404, "and an entry the directory never had is unknown");
    t.match(await nobody.json(), { code: "ANNAL_ENTRY_NOT_FOUND", reason: "unknown" });
  },
);
