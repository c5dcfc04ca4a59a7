import t from "tap";
import {
  assertAccess,
  assertAuthority,
  buildCaller,
  createAuthentication,
  normalizeGrants,
  normalizePrincipal,
  type ActiveGrants,
} from "../../src/auth/index.ts";
import { testDatabase } from "../support/postgres.ts";

const OPS = "cn=annal-operators,ou=roles,dc=example,dc=org";
const ENG = "cn=engineering,ou=groups,dc=example,dc=org";
const grants = (byAccess: Record<string, string[]>): ActiveGrants => {
  const normalized = normalizeGrants(byAccess);
  const byPrincipal = new Map<string, Set<string>>();
  for (const [access, principals] of Object.entries(normalized)) {
    for (const p of principals)
      byPrincipal.set(p, new Set([...(byPrincipal.get(p) ?? []), access]));
  }
  return { version: 1, byPrincipal };
};
const person = (principals: string[], active: ActiveGrants | undefined, extra = {}) =>
  buildCaller({
    account: { id: "a1", kind: "person", name: "prossi", origin: "directory", dn: "uid=prossi" },
    credential: "session",
    principals: principals.map(normalizePrincipal),
    ownAccess: [],
    grants: active,
    authority: "confirmed",
    ...extra,
  });

t.test("the viewer API: has, hasEvery, hasSome, hasRole and hasGroup", async (t) => {
  const active = grants({ read: [ENG], operator: [OPS], "approve-leave": [OPS, "account:a1"] });
  const caller = person([ENG, OPS, "account:a1"], active);
  t.same(caller.access, ["approve-leave", "operator", "read"], "open strings beside the built-ins");
  t.ok(caller.has("operator"));
  t.notOk(caller.has("write"));
  t.ok(caller.hasEvery(["read", "operator"]));
  t.notOk(caller.hasEvery(["read", "write"]));
  t.ok(caller.hasSome(["write", "read"]));
  t.notOk(caller.hasSome([]));
  t.ok(caller.hasRole({ access: "operator" }));
  t.ok(
    caller.hasRole({
      access: "operator",
      principal: "CN=Annal-Operators,OU=Roles,DC=example,DC=org",
    }),
    "held through that group",
  );
  t.notOk(caller.hasRole({ access: "operator", principal: ENG }), "not through Engineering");
  t.ok(caller.hasRole({ access: "approve-leave", principal: "account:a1" }));
  t.ok(
    caller.hasGroup({ dn: "cn=Engineering, ou=Groups, dc=Example, dc=org" }),
    "DNs compared normalised",
  );
  t.notOk(caller.hasGroup({ dn: "cn=sales,ou=groups,dc=example,dc=org" }));
  t.notOk(caller.hasGroup({ dn: "not a dn" }));
});

t.test("a service account's tokens' access is its own role; grants add to it", async (t) => {
  const service = buildCaller({
    account: { id: "s1", kind: "service", name: "ci", origin: "service", dn: null },
    credential: "bearer",
    principals: ["account:s1", "service:ci"],
    ownAccess: ["read"],
    grants: grants({ auditor: ["service:ci"] }),
    authority: "confirmed",
  });
  t.same(service.access, ["auditor", "read"]);
  t.ok(service.hasRole({ access: "read", principal: "service:ci" }));
  t.ok(service.hasRole({ access: "auditor", principal: "service:ci" }));
  t.notOk(service.hasRole({ access: "read", principal: "account:s1" }));
});

t.test(
  "refusals: the principal limit first, then no active configuration, then forbidden",
  async (t) => {
    const over = person([ENG], grants({ read: [ENG] }), { principalLimit: { count: 8, limit: 7 } });
    t.same(over.access, []);
    t.notOk(over.hasRole({ access: "read" }));
    t.throws(() => assertAccess(over, "read"), {
      code: "AUTHORIZATION_PRINCIPAL_LIMIT_EXCEEDED",
      status: 403,
      details: { count: 8, limit: 7 },
    });
    t.throws(() => assertAccess(person([ENG], undefined), "read"), {
      code: "ANNAL_ACCESS_NOT_ACTIVE",
    });
    t.throws(() => assertAccess(person([ENG], grants({ read: [ENG] })), "write"), {
      code: "ANNAL_FORBIDDEN",
      hint: /\[authorization\.grants\]/,
    });
    const unconfirmed = person([ENG], grants({ read: [ENG] }), { authority: "unconfirmed" });
    t.doesNotThrow(() => assertAccess(unconfirmed, "read"), "reads go on");
    t.throws(() => assertAuthority(unconfirmed), { code: "WF_AUTHORIZATION_DENIED", status: 403 });
    t.doesNotThrow(() => assertAuthority(person([ENG], undefined)));
  },
);

t.test(
  "grants name DNs, account:, service: and group: principals; anything else is refused",
  async (t) => {
    t.same(
      normalizeGrants({
        read: ["CN=Ops, DC=Example", "service:ci", "account:x", "group:staff", "cn=ops,dc=example"],
      }),
      {
        read: ["account:x", "cn=ops,dc=example", "group:staff", "service:ci"],
      },
    );
    t.throws(() => normalizeGrants({ read: ["not a principal"] }), {
      code: "ANNAL_CONFIG_INVALID",
    });
  },
);

t.test("guards may name declared access functions, and no others", async (t) => {
  const db = await testDatabase(t);
  const authentication = createAuthentication({ pool: db.pool, declaredAccess: ["approve-leave"] });
  t.doesNotThrow(() => authentication.require("approve-leave"));
  t.doesNotThrow(() => authentication.require("auditor"));
  t.throws(() => authentication.require("approve-leav"), {
    message: /unknown access: approve-leav/,
  });
  t.equal(authentication.sessions, false, "without people, only bearer tokens");
});
