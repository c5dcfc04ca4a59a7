import t from "tap";
import {
  callerOf,
  createAuthentication,
  createToken,
  type AccessFunction,
} from "../../src/auth/index.ts";
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
