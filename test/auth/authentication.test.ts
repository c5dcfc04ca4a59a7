import t from "tap";
import {
  callerOf,
  createAuthentication,
  createToken,
  revokeAccount,
  type AccessFunction,
} from "../../src/auth/index.ts";
import { eventually } from "../support/eventually.ts";
import { testServer } from "../http/support.ts";
import { testDatabase } from "../support/postgres.ts";
import { EventStore } from "../../src/store/index.ts";

t.test("the factory checks its options and its guards when they are created", async (t) => {
  t.throws(() => createAuthentication({} as never), { code: "ANNAL_INTERNAL" });
  const db = await testDatabase(t);
  const authentication = createAuthentication({ pool: db.pool });
  t.throws(() => (authentication.require as (...a: string[]) => unknown)(), {
    message: /must name the access/,
  });
  t.throws(() => authentication.require("admin" as AccessFunction), {
    message: /unknown access: admin/,
  });
});

t.test(
  "a guarded route answers 401 without credentials, 403 without the access, and names the caller",
  async (t) => {
    const db = await testDatabase(t);
    const store = await EventStore.open(db.pool);
    const authentication = createAuthentication({ pool: db.pool });
    const { server } = testServer(t, { pool: db.pool });
    void server.register(async (scope) => {
      scope.addHook("onRequest", authentication.require("operator"));
      scope.get("/ops", async (request) => ({ caller: callerOf(request).account.name }));
    });
    // A route no guard protects cannot learn a caller: it is refused, never let through.
    server.get("/unguarded", async (request) => ({ caller: callerOf(request).account.name }));
    const reader = (await createToken(db.pool, store, { name: "reader", access: ["read"] })).token;
    const operator = (await createToken(db.pool, store, { name: "ops", access: ["operator"] }))
      .token;
    const get = (url: string, token?: string) =>
      server.inject({
        method: "GET",
        url,
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });

    const none = await get("/ops");
    t.equal(none.statusCode, 401);
    t.match(none.headers["www-authenticate"], /^Bearer realm="annal"/);
    const forbidden = await get("/ops", reader);
    t.equal(forbidden.statusCode, 403);
    t.match(forbidden.json(), { code: "ANNAL_FORBIDDEN", hint: /--add operator/ });
    const allowed = await get("/ops", operator);
    t.equal(allowed.statusCode, 200);
    t.same(allowed.json(), { caller: "ops" });
    t.equal((await get("/unguarded", operator)).statusCode, 401);
  },
);

/**
 * A bearer token's verification is kept `tokensTtlMs` (1 s unless set), as the active grants
 * are: within it a request costs no look-up of its token, and a token revoked meanwhile (by
 * `annal token revoke`, another process) is refused once it has passed, never later.
 */
t.test("a revoked token is refused once tokensTtlMs has passed since its revocation", async (t) => {
  const db = await testDatabase(t);
  const store = await EventStore.open(db.pool);
  const { token } = await createToken(db.pool, store, { name: "svc", access: ["read"] });
  const request = { headers: { authorization: `Bearer ${token}` } };
  const kept = createAuthentication({ pool: db.pool, tokensTtlMs: 600_000 });
  const short = createAuthentication({ pool: db.pool, tokensTtlMs: 200 });
  const byDefault = createAuthentication({ pool: db.pool });
  for (const authentication of [kept, short, byDefault]) {
    t.equal((await authentication.authenticate(request)).account.name, "svc");
  }
  await revokeAccount(db.pool, store, "svc");
  const revoked = Date.now();
  // Within its bound the verification stands: the token is not looked up again.
  t.equal((await kept.authenticate(request)).account.name, "svc", "kept for tokensTtlMs");
  await eventually(() => Date.now() - revoked > 200, { what: "200 ms since the revocation" });
  await t.rejects(short.authenticate(request), { code: "ANNAL_UNAUTHENTICATED", status: 401 });
  await eventually(() => Date.now() - revoked > 1000, { what: "1 s since the revocation" });
  await t.rejects(byDefault.authenticate(request), { code: "ANNAL_UNAUTHENTICATED" });
  // A refusal is not kept: the next request looks the token up again, and is refused again.
  await t.rejects(short.authenticate(request), { code: "ANNAL_UNAUTHENTICATED" });
});
