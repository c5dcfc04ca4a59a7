import t from "tap";
import {
  authenticateBearer,
  createToken,
  listAccounts,
  parseAccess,
  revokeAccount,
} from "../../src/auth/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { testDatabase } from "../support/postgres.ts";

t.test("a token authenticates its account; only its digest is stored", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const { token, account } = await createToken(pool, store, {
    name: "reporting",
    access: ["read"],
  });
  t.match(token, /^annal_[A-Za-z0-9_-]{43}$/);
  const found = await authenticateBearer(pool, `Bearer ${token}`);
  t.equal(found.id, account.id);
  t.same(found.access, ["read"]);
  const stored = await pool.query("SELECT digest::text, hint FROM service_account_tokens");
  t.notOk(JSON.stringify(stored.rows).includes(token.slice(10)), "the token is not stored");
  const events = await pool.query("SELECT data::text, metadata::text FROM events");
  t.equal(events.rowCount, 1, "issuing is recorded");
  t.notOk(events.rows[0].data.includes(token.slice(10)), "the log never sees the token");
});

t.test("missing, malformed, unknown and revoked tokens are refused with 401", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const { token } = await createToken(pool, store, { name: "svc", access: ["read", "export"] });
  await t.rejects(authenticateBearer(pool, undefined), {
    code: "ANNAL_UNAUTHENTICATED",
    status: 401,
    challenge: 'Bearer realm="annal"',
  });
  for (const header of [
    "Basic abc",
    "Bearer",
    "Bearer annal_" + "x".repeat(43),
    `Bearer ${token}x`,
    "Bearer ' OR 1=1 --",
  ]) {
    await t.rejects(authenticateBearer(pool, header), { code: "ANNAL_UNAUTHENTICATED" }, header);
  }
  await revokeAccount(pool, store, "svc");
  await t.rejects(authenticateBearer(pool, `Bearer ${token}`), { code: "ANNAL_UNAUTHENTICATED" });
  const [listed] = await listAccounts(pool);
  t.ok(listed!.revokedAt);
  t.equal(listed!.tokens[0]!.revoked, true);
  await t.rejects(revokeAccount(pool, store, "svc"), { code: "ANNAL_ACCOUNT_NOT_FOUND" });
});

t.test("access functions are checked by name", async (t) => {
  t.same(parseAccess("read, export,read"), ["read", "export"]);
  t.throws(() => parseAccess("read,admin"), { code: "ANNAL_ACCESS_UNKNOWN" });
  t.throws(() => parseAccess(""), { code: "ANNAL_ACCESS_UNKNOWN" });
});
