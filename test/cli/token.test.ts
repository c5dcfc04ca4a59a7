import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { authenticateBearer } from "../../src/auth/index.ts";
import { ForbiddenError } from "../../src/auth/index.ts";
import {
  runTokenCommand,
  tokenAccess,
  tokenCreate,
  tokenList,
  tokenRevoke,
} from "../../src/cli/commands/token.ts";
import { EventStore } from "../../src/store/index.ts";
import { testDatabase } from "../support/postgres.ts";
import { capturedOutput } from "./support.ts";

t.setTimeout(120_000);

t.test("token create prints the token once; list never shows it; revoke ends it", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const created = capturedOutput();
  t.equal(
    await tokenCreate({ pool, store }, { name: "ci", access: "read,export" }, created.output),
    0,
  );
  t.equal(created.out.length, 1, "the token alone on standard output");
  const token = created.out[0]!;
  t.match(token, /^annal_[A-Za-z0-9_-]{40,}$/);
  t.match(created.err[0], /shown only now/);
  t.match(await authenticateBearer(pool, `Bearer ${token}`), {
    name: "ci",
    access: ["read", "export"],
  });
  const stored = await pool.query("SELECT digest, hint FROM service_account_tokens");
  t.notOk(JSON.stringify(stored.rows).includes(token), "only a digest is stored");

  const listed = capturedOutput();
  await tokenList({ pool }, {}, listed.output);
  t.match(listed.out[0], /^ci {2}access=read,export {2}active/);
  t.match(listed.out[1], /^  annal_\S{4}… {2}created \S+ {2}last used \S+$/);
  t.notOk(listed.out.join("\n").includes(token));
  const json = capturedOutput();
  await tokenList({ pool }, { json: true }, json.output);
  t.match(JSON.parse(json.out.join("\n")), [
    { name: "ci", access: ["read", "export"], tokens: [{ revoked: false }] },
  ]);

  const revoked = capturedOutput();
  await tokenRevoke({ pool, store }, "ci", revoked.output);
  t.match(revoked.out[0], /revoked service account "ci"/);
  await t.rejects(authenticateBearer(pool, `Bearer ${token}`), { code: "ANNAL_UNAUTHENTICATED" });
  await t.rejects(tokenRevoke({ pool, store }, "ci", revoked.output), {
    code: "ANNAL_ACCOUNT_NOT_FOUND",
  });
  await t.rejects(
    tokenCreate({ pool, store }, { name: "x", access: "read,fly" }, capturedOutput().output),
    {
      code: "ANNAL_ACCESS_UNKNOWN",
    },
  );
});

t.test("a second token for an account keeps the account's access", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const first = capturedOutput();
  await tokenCreate({ pool, store }, { name: "me", access: "read" }, first.output);
  // The README's order once turned this read token into a write token, silently.
  const second = capturedOutput();
  t.equal(
    await tokenCreate({ pool, store }, { name: "me", access: "read,write" }, second.output),
    0,
  );
  t.match(second.out[0], /^annal_/, "a new token all the same");
  t.match(
    second.err.join("\n"),
    /"me" keeps its access \(read\).*annal token access me --add write/s,
    "says the access was not changed and how to change it",
  );
  for (const token of [first.out[0]!, second.out[0]!]) {
    t.match(await authenticateBearer(pool, `Bearer ${token}`), { name: "me", access: ["read"] });
  }
  const same = capturedOutput();
  await tokenCreate({ pool, store }, { name: "me", access: "read" }, same.output);
  t.notMatch(same.err.join("\n"), /annal token access/, "nothing to say when --access agrees");
  const events = await pool.query<{ type: string; data: { access?: string[] } }>(
    "SELECT type, data FROM events WHERE stream_id LIKE 'service-account-%' ORDER BY position",
  );
  t.same(
    events.rows.map((row) => [row.type, row.data.access]),
    [
      ["ServiceAccountTokenIssued", ["read"]],
      ["ServiceAccountTokenIssued", ["read"]],
      ["ServiceAccountTokenIssued", ["read"]],
    ],
  );
});

t.test(
  "annal token access changes access explicitly and says what the account can do",
  async (t) => {
    const { pool } = await testDatabase(t);
    const store = await EventStore.open(pool);
    const created = capturedOutput();
    await tokenCreate({ pool, store }, { name: "me", access: "read" }, created.output);
    const token = created.out[0]!;
    const added = capturedOutput();
    t.equal(await tokenAccess({ pool, store }, "me", { add: "write,export" }, added.output), 0);
    t.match(added.out.join("\n"), /"me" can now: read \(.+\), export \(.+\), write \(.+\)/);
    t.match(await authenticateBearer(pool, `Bearer ${token}`), {
      access: ["read", "export", "write"],
    });
    const removed = capturedOutput();
    await tokenAccess({ pool, store }, "me", { remove: "export" }, removed.output);
    t.match(removed.out.join("\n"), /"me" can now: read \(.+\), write \(.+\)$/);
    const set = capturedOutput();
    await tokenAccess({ pool, store }, "me", { set: "operator" }, set.output);
    t.match(await authenticateBearer(pool, `Bearer ${token}`), { access: ["operator"] });
    const shown = capturedOutput();
    await tokenAccess({ pool, store }, "me", {}, shown.output);
    t.match(shown.out.join("\n"), /"me" can: operator/, "no change asked: shows the access");
    await t.rejects(
      tokenAccess({ pool, store }, "me", { remove: "operator" }, capturedOutput().output),
      {
        code: "ANNAL_ACCESS_EMPTY",
        hint: /annal token revoke me/,
      },
    );
    await t.rejects(
      tokenAccess({ pool, store }, "nobody", { add: "read" }, capturedOutput().output),
      {
        code: "ANNAL_ACCOUNT_NOT_FOUND",
      },
    );
    await t.rejects(
      tokenAccess({ pool, store }, "me", { add: "read", set: "read" }, capturedOutput().output),
      { code: "ANNAL_USAGE" },
    );
    const events = await pool.query<{ type: string; data: Record<string, unknown> }>(
      "SELECT type, data FROM events WHERE type = 'ServiceAccountAccessChanged' ORDER BY position",
    );
    t.match(
      events.rows.map((row) => row.data),
      [
        { name: "me", previous: ["read"], access: ["read", "export", "write"] },
        { name: "me", previous: ["read", "export", "write"], access: ["read", "write"] },
        { name: "me", previous: ["read", "write"], access: ["operator"] },
      ],
      "each change is an audited event",
    );
  },
);

t.test("a 403 names the command that adds the access, never one that removes some", async (t) => {
  const error = new ForbiddenError("write", "me");
  t.match(error.hint, "annal token access me --add write");
  t.notMatch(error.hint, /token create/);
});

t.test("annal token reads its arguments and the configuration's database", async (t) => {
  const { url } = await testDatabase(t);
  const dir = mkdtempSync(path.join(tmpdir(), "annal-token-"));
  const config = path.join(dir, "annal.toml");
  writeFileSync(config, `[database]\nurl = "${url}"\n[log]\nlevel = "silent"\n`);
  const created = capturedOutput();
  t.equal(
    await runTokenCommand(
      ["create", "--name", "ops", "--access", "read", "--config", config],
      created.output,
    ),
    0,
  );
  t.match(created.out[0], /^annal_/);
  const listed = capturedOutput();
  await runTokenCommand(["list", "--config", config], listed.output);
  t.match(listed.out[0], /^ops {2}access=read/);
  const changed = capturedOutput();
  t.equal(
    await runTokenCommand(["access", "ops", "--add", "export", "--config", config], changed.output),
    0,
  );
  t.match(changed.out.join("\n"), /"ops" can now: read .*, export /);
  const revoked = capturedOutput();
  t.equal(await runTokenCommand(["revoke", "ops", "--config", config], revoked.output), 0);
  for (const [args, message] of [
    [[], /needs a subcommand/],
    [["mint"], /unknown token subcommand "mint"/],
    [["create", "--access", "read"], /needs --name/],
    [["create", "--name", "x"], /needs --access/],
    [["revoke"], /missing the account/],
    [["access"], /missing the account/],
    [["access", "x", "--set", "read", "--add", "write"], /one of --set, --add or --remove/],
    [["list", "--colour"], /^unknown option --colour$/],
  ] as const) {
    await t.rejects(
      runTokenCommand(args, capturedOutput().output),
      { code: "ANNAL_USAGE", message },
      args.join(" "),
    );
  }
});
