import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { authenticateBearer } from "../../src/auth/index.ts";
import { runTokenCommand, tokenCreate, tokenList, tokenRevoke } from "../../src/rest/cli.ts";
import { EventStore } from "../../src/store/index.ts";
import { testDatabase } from "../support/postgres.ts";

t.setTimeout(120_000);

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    output: { out: (line: string) => out.push(line), err: (line: string) => err.push(line) },
  };
}

t.test("token create prints the token once; list never shows it; revoke ends it", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const created = capture();
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

  const listed = capture();
  await tokenList({ pool }, {}, listed.output);
  t.match(listed.out[0], /^ci {2}access=read,export {2}active/);
  t.match(listed.out[1], /^  annal_\S{4}… {2}created \S+ {2}last used \S+$/);
  t.notOk(listed.out.join("\n").includes(token));
  const json = capture();
  await tokenList({ pool }, { json: true }, json.output);
  t.match(JSON.parse(json.out.join("\n")), [
    { name: "ci", access: ["read", "export"], tokens: [{ revoked: false }] },
  ]);

  const revoked = capture();
  await tokenRevoke({ pool, store }, "ci", revoked.output);
  t.match(revoked.out[0], /revoked service account "ci"/);
  await t.rejects(authenticateBearer(pool, `Bearer ${token}`), { code: "ANNAL_UNAUTHENTICATED" });
  await t.rejects(tokenRevoke({ pool, store }, "ci", revoked.output), {
    code: "ANNAL_ACCOUNT_NOT_FOUND",
  });
  await t.rejects(
    tokenCreate({ pool, store }, { name: "x", access: "read,fly" }, capture().output),
    {
      code: "ANNAL_ACCESS_UNKNOWN",
    },
  );
});

t.test("annal token reads its arguments and the configuration's database", async (t) => {
  const { url } = await testDatabase(t);
  const dir = mkdtempSync(path.join(tmpdir(), "annal-token-"));
  const config = path.join(dir, "annal.toml");
  writeFileSync(config, `[database]\nurl = "${url}"\n[log]\nlevel = "silent"\n`);
  const created = capture();
  t.equal(
    await runTokenCommand(
      ["create", "--name", "ops", "--access", "read", "--config", config],
      created.output,
    ),
    0,
  );
  t.match(created.out[0], /^annal_/);
  const listed = capture();
  await runTokenCommand(["list", "--config", config], listed.output);
  t.match(listed.out[0], /^ops {2}access=read/);
  const revoked = capture();
  t.equal(await runTokenCommand(["revoke", "ops", "--config", config], revoked.output), 0);
  for (const [args, message] of [
    [[], /needs a subcommand/],
    [["mint"], /unknown token subcommand "mint"/],
    [["create", "--access", "read"], /needs --name/],
    [["create", "--name", "x"], /needs --access/],
    [["revoke"], /missing the account/],
    [["list", "--colour"], /Unknown option/],
  ] as const) {
    await t.rejects(
      runTokenCommand(args, capture().output),
      { code: "ANNAL_USAGE", message },
      args.join(" "),
    );
  }
});
