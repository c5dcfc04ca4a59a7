import t from "tap";
import { revokeAccount } from "../../src/auth/index.ts";
import { PEOPLE, restHarness } from "./fixtures/harness.ts";

t.setTimeout(300_000);

const ROUTES = [
  "/api/entries/users",
  "/api/entries/users/00000000-0000-4000-8000-000000000000",
  "/api/entries/users/00000000-0000-4000-8000-000000000000/changes",
  "/api/changes",
  "/api/entries/users?fields=cn&filename=p.csv",
  "/api/entries/nothing",
];

t.test(
  "without a valid bearer token every data route is a 401 with WWW-Authenticate",
  async (t) => {
    const { app, pool, store, token } = await restHarness(t);
    const revoked = await token(["read"], "gone");
    await revokeAccount(pool, store, "gone");
    for (const url of ROUTES) {
      const missing = await app.inject({ method: "GET", url });
      t.equal(missing.statusCode, 401, url);
      t.equal(missing.headers["www-authenticate"], 'Bearer realm="annal"');
      t.match(missing.headers["content-type"], /^application\/problem\+json/);
      t.match(missing.json(), {
        code: "ANNAL_UNAUTHENTICATED",
        status: 401,
        hint: /annal token create/,
      });
      for (const authorization of [
        "Bearer annal_nope",
        "Basic dXNlcjpwYXNz",
        `Bearer ${revoked}`,
        "Bearer",
      ]) {
        const invalid = await app.inject({ method: "GET", url, headers: { authorization } });
        t.equal(invalid.statusCode, 401, `${url} ${authorization}`);
        t.match(invalid.headers["www-authenticate"], /^Bearer realm="annal"/);
      }
    }
    const wrong = await app.inject({
      method: "GET",
      url: ROUTES[0]!,
      headers: { authorization: "Bearer annal_nope" },
    });
    t.equal(wrong.headers["www-authenticate"], 'Bearer realm="annal", error="invalid_token"');
  },
);

t.test("the read function opens the channel; exports need export too", async (t) => {
  const { app, token, history } = await restHarness(t);
  await history.add({
    dn: `uid=a,${PEOPLE}`,
    type: "user",
    attributes: { objectClass: ["inetOrgPerson"], cn: ["A"] },
  });
  await history.settled();
  const as = async (access: ("read" | "export" | "write")[], url: string) =>
    app.inject({ method: "GET", url, headers: { authorization: `Bearer ${await token(access)}` } });
  t.equal((await as(["read"], "/api/entries/users")).statusCode, 200);
  const noRead = await as(["write"], "/api/entries/users");
  t.equal(noRead.statusCode, 403);
  t.match(noRead.json(), { code: "ANNAL_FORBIDDEN", detail: /"read"/ });
  const noExport = await as(["read"], "/api/entries/users?fields=cn&filename=p.csv");
  t.equal(noExport.statusCode, 403);
  t.match(noExport.json(), { code: "ANNAL_FORBIDDEN", detail: /"export"/ });
  t.equal(
    (await as(["read", "export"], "/api/entries/users?fields=cn&filename=p.csv")).statusCode,
    200,
  );
  t.equal(
    (await as(["export"], "/api/entries/users?fields=cn&filename=p.csv")).statusCode,
    403,
    "export alone is not read",
  );
});

t.test("redacted attributes are never served, filtered on or described", async (t) => {
  const { get, history } = await restHarness(t);
  // Capture never records them; an entry that holds one anyway (older data) must not leak it.
  const id = await history.add({
    dn: `uid=leak,${PEOPLE}`,
    type: "user",
    attributes: {
      objectClass: ["inetOrgPerson"],
      cn: ["Leak"],
      userPassword: ["{SSHA}secret"],
      authPassword: ["MD5$x$y"],
    },
  });
  await history.modify(id, { userPassword: ["{SSHA}other"] });
  await history.settled();
  const all = await get("/api/entries/users?fields=*,%2B");
  t.notMatch(all.body, /secret|other|MD5/i);
  t.notOk("userPassword" in all.json().nodes[0]);
  const named = await get("/api/entries/users?fields=userPassword");
  t.notOk(
    "userPassword" in named.json().nodes[0],
    "asking by name is asking for an unknown attribute",
  );
  const strict = await get("/api/entries/users?fields=userPassword", { prefer: "handling=strict" });
  t.match(strict.json(), { code: "ANNAL_ATTRIBUTES_UNKNOWN", unknown: ["userPassword"] });
  const filtered = await get(`/api/entries/users?filter=${encodeURIComponent("userPassword = *")}`);
  t.same(filtered.json().nodes, [], "a filter on it matches nothing");
  const lookup = await get(`/api/entries/users/${id}?fields=*,%2B`);
  t.notMatch(lookup.body, /secret|other/);
  const patch = await get(`/api/entries/users/${id}/changes?include=patch`);
  t.notMatch(patch.body, /secret|other/, "nor in a patch");
  const exported = await get("/api/entries/users?fields=cn,userPassword&filename=p.ndjson");
  t.notMatch(exported.body, /secret/);
});
