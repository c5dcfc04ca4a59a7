import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import t from "tap";
import { createDirectoryClient } from "../../src/directory/index.ts";
import { loadInstance } from "../../src/workflow/index.ts";
import { startAccountsAnnal } from "../support/accounts.ts";
import { eventually } from "../support/eventually.ts";
import { graphql } from "../../src/cli/commands/graphql.ts";
import { refresh } from "../../src/cli/commands/refresh.ts";
import type { Output } from "../../src/cli/output.ts";
import type { AnnalError } from "../../src/errors/index.ts";
import { capturedOutput, runAnnal } from "./support.ts";

/**
 * `annal refresh`, `annal graphql --as` and the tutorial they serve, against annal as `npm
 * start` runs it: the demo's hooks and workflows over the demo organisation in a real slapd,
 * a database of the test's own, sign-in through annal's page and the demo OpenID provider.
 * The commands run as a user runs them (bin/annal.js in a process of its own), and find annal
 * as `annal stop` does: by the pid file in the configuration's data directory.
 *
 * The subtests share one annal and run in order, as the tutorial does: hire, the laptop, the
 * access request in the owner's inbox, a leaver who can no longer sign in.
 */

// Each command is a Node.js process of its own, a few seconds each on a loaded machine.
t.setTimeout(600_000);

const REPO = path.resolve(import.meta.dirname, "../..");
const ENGINEER = "uid=znguyen,ou=engineering,ou=people,dc=example,dc=org";
/** Whom `refresh transfer` moves when no --uid is given. */
const MOVER = "uid=hivanova,ou=engineering,ou=people,dc=example,dc=org";

// The demo's outbox (the ticket system's stand-in) in this test's own folder.
process.env.ANNAL_DEMO_OUTBOX = t.testdir({});

const app = await startAccountsAnnal(t, {
  extraToml: `[hooks]
dir = "${path.join(REPO, "ops/demo/hooks")}"

[workflows]
dir = "${path.join(REPO, "ops/demo/workflows")}"
timerInterval = "100ms"
`,
});
const dir = t.testdirName;
const config = path.join(dir, "annal.toml");
const env = { LDAP_PASSWORD: app.slapd.password };
// The commands this test runs in its own process read the configuration with its environment.
process.env.LDAP_PASSWORD = app.slapd.password;
const annal = (...args: string[]) => runAnnal([...args, "--config", config], { cwd: dir, env });

/** Runs a command's function in this process, as `annal` would, and resolves with its failure. */
async function failure(run: (output: Output) => Promise<number>) {
  const captured = capturedOutput();
  try {
    await run(captured.output);
  } catch (error) {
    return { error: error as AnnalError, ...captured };
  }
  throw new Error(`it succeeded: ${captured.out.join("\n")}`);
}

t.test("with no annal started here, refresh is ANNAL_NOT_RUNNING", async (t) => {
  const run = await annal("refresh", "hire");
  t.equal(run.code, 1);
  t.match(run.stderr, /^annal: ANNAL_NOT_RUNNING: no annal started from here runs .*no pid file/);
});

t.test("an unknown scenario is ANNAL_UNKNOWN_SCENARIO, listing them", async (t) => {
  const run = await annal("refresh", "fire");
  t.equal(run.code, 1);
  t.match(
    run.stderr,
    /^annal: ANNAL_UNKNOWN_SCENARIO: no scenario fire; the scenarios are hire, ticket-done, ticket-rejected, leave, rehire, transfer, promote\n/,
  );
});

let joiner = "";

t.test(
  "refresh hire sends HR's signed change event and prints the joiner it started",
  async (t) => {
    // annal found as `annal stop` finds it: the pid file its start left in the data directory
    // (this test's process runs it) and the configuration's port.
    await mkdir(path.join(dir, ".annal"), { recursive: true });
    await writeFile(
      path.join(dir, ".annal", "annal.process"),
      JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString(), log: "annal.log" }),
    );
    const run = await annal("refresh", "hire");
    t.equal(run.code, 0, run.stderr);
    const line =
      /^hire alovelace: hr\/refresh-hire-alovelace-\d+ processed: joiner (\S+) \(started\)$/m.exec(
        run.stdout,
      );
    t.ok(line, run.stdout);
    joiner = line![1]!;
    t.match(run.stderr, /accepted, waiting for it to be processed/, "progress on standard error");
    const state = await loadInstance(app.db.pool, joiner);
    t.equal(state?.definition.name, "joiner");
    t.match(state?.parameters, { uid: "alovelace", department: "engineering" });
  },
);

t.test(
  "refresh ticket-done --as answers the joiner's laptop ticket, as the person sees it",
  async (t) => {
    const run = await annal("refresh", "ticket-done", "--as", "prossi");
    t.equal(run.code, 0, run.stderr);
    t.match(
      run.stdout,
      new RegExp(
        `^ticket-done alovelace: tickets/refresh-ticket-done-alovelace-\\d+ processed: instance ${joiner} \\(answered\\)\\n  as prossi: joiner ${joiner} (RUNNING|COMPLETED)\\n`,
      ),
    );
    const state = await loadInstance(app.db.pool, joiner);
    const request = [...state!.calls.values()].find((call) => call.kind === "request");
    t.equal(request?.state, "answered", "the ticket's answer reached the joiner");
  },
);

t.test(
  "graphql --as runs the tutorial's access request: the owner sees it in her inbox",
  async (t) => {
    const started = await annal(
      "graphql",
      'mutation { startWorkflow(name: "access-request", parameters: { group: "on-call", reason: "I join the rota" }) { id state startedBy { name } } }',
      "--as",
      "krossi",
    );
    t.equal(started.code, 0, started.stderr);
    const { startWorkflow } = JSON.parse(started.stdout);
    t.match(startWorkflow, { id: String, state: String });

    const inbox = await annal(
      "graphql",
      "query($first: Int) { myDialogs(first: $first) { nodes { id name data } } }",
      "--variables",
      '{"first": 10}',
      "--as",
      "prossi",
    );
    t.equal(inbox.code, 0, inbox.stderr);
    const dialogs = JSON.parse(inbox.stdout).myDialogs.nodes as { id: string; name: string }[];
    t.ok(
      dialogs.some((d) => d.id.startsWith(`${startWorkflow.id}.`) && d.name === "approve"),
      "the request waits in the owner's inbox",
    );

    const none = await failure((output) =>
      graphql(
        { query: "{ myDialogs { nodes { id } } }", as: "nobody", url: app.url, config },
        output,
      ),
    );
    t.equal(none.error.code, "ANNAL_UNKNOWN_FIXTURE_ACCOUNT");
    t.equal(none.error.message, "the demo directory has no person with login nobody");

    const refused = await failure((output) =>
      graphql({ query: "{ myDialogs { nodes { id } } }", url: app.url, config }, output),
    );
    t.equal(refused.error.code, "ANNAL_QUERY_FAILED", "without --as nobody is signed in");
    t.match(refused.error.message, /^GraphQL answered \d+ with /);

    const bad = await failure((output) =>
      graphql(
        { query: "{ myDialogs { nodes { id } } }", variables: "[1]", url: app.url, config },
        output,
      ),
    );
    t.equal(bad.error.code, "ANNAL_USAGE");
  },
);

t.test(
  "refresh leave disables a person (ANNAL_LOGIN_FAILED as them); rehire restores them",
  async (t) => {
    const run = await annal("refresh", "leave", "--uid", "znguyen");
    t.equal(run.code, 0, run.stderr);
    t.match(
      run.stdout,
      /^leave znguyen: hr\/refresh-leave-znguyen-\d+ processed: leaver \S+ \(started\)$/m,
    );
    const directory = createDirectoryClient({
      url: app.slapd.url,
      bindDN: app.slapd.bindDN,
      password: app.slapd.password,
    });
    t.teardown(() => directory.close());
    // The leaver disables the account in its first step, after the change event's processing.
    await eventually(
      async () => {
        const entry = await directory.get(ENGINEER, { attributes: ["employeeType"] });
        return entry?.attributes.employeeType?.map(String).includes("disabled") || undefined;
      },
      { what: "the leaver disabled znguyen", timeout: 60_000 },
    );

    const login = await failure((output) =>
      graphql(
        { query: "{ viewer { authInfo { authority } } }", as: "znguyen", url: app.url, config },
        output,
      ),
    );
    t.equal(login.error.code, "ANNAL_LOGIN_FAILED");
    t.equal(
      login.error.message,
      "the provider refused znguyen: The login or the password is wrong. (HTTP 401)",
    );

    // HR hires them again: the leaver waiting for HR's answer restores the account.
    const rehired = capturedOutput();
    t.equal(
      await refresh({ scenario: "rehire", uid: "znguyen", url: app.url, config }, rehired.output),
      0,
    );
    t.match(
      rehired.out[0],
      /^rehire znguyen: hr\/refresh-rehire-znguyen-\d+ processed: leaver \S+ \(rehired\)$/,
    );
    await eventually(
      async () => {
        const entry = await directory.get(ENGINEER, { attributes: ["employeeType"] });
        return !entry?.attributes.employeeType?.map(String).includes("disabled") || undefined;
      },
      { what: "the leaver enabled znguyen again", timeout: 60_000 },
    );
    const back = capturedOutput();
    const asked = { query: "{ viewer { authInfo { authority } } }", as: "znguyen", url: app.url };
    t.equal(await graphql({ ...asked, config }, back.output), 0, "signs in again");
  },
);

t.test(
  "refresh transfer moves a person to Support: the department and its head as manager",
  async (t) => {
    const directory = createDirectoryClient({
      url: app.slapd.url,
      bindDN: app.slapd.bindDN,
      password: app.slapd.password,
    });
    t.teardown(() => directory.close());
    const support = await directory.get("cn=support,ou=groups,dc=example,dc=org", {
      attributes: ["owner"],
    });
    const head = String(support!.attributes.owner![0]);
    const before = await directory.get(MOVER, { attributes: ["ou", "manager"] });
    t.notSame(before?.attributes.manager, [head], "not Support's before");

    const run = await annal("refresh", "transfer");
    t.equal(run.code, 0, run.stderr);
    t.match(
      run.stdout,
      new RegExp(
        `^transfer hivanova: hr/refresh-transfer-hivanova-\\d+ processed: transferred ${MOVER}, department support, manager ${head}$`,
        "m",
      ),
    );
    // Processed means written: the hook's directory writes are part of its processing.
    const after = await directory.get(MOVER, {
      attributes: ["ou", "manager", "departmentNumber"],
    });
    t.same(after?.attributes.ou, ["support"]);
    t.same(after?.attributes.manager, [head]);
    t.notOk(after?.attributes.departmentNumber, "the old department's team is gone");
  },
);

t.test("what goes wrong with the change event is said with its code", async (t) => {
  const unknown = await failure((output) =>
    refresh({ scenario: "promote", uid: "nobody", url: app.url, config }, output),
  );
  t.equal(unknown.error.code, "ANNAL_SOURCE_CHANGE_FAILED");
  t.match(
    unknown.error.message,
    /^change event hr\/refresh-promote-nobody-\d+ failed after 1 attempt\(s\): HR_UNKNOWN_EMPLOYEE: no person with uid nobody in the directory$/,
  );

  // Signed with a secret other than the one annal runs with.
  process.env.HR_WEBHOOK_SECRET = "not-the-secret-annal-runs-with";
  const wrong = await failure((output) =>
    refresh({ scenario: "promote", url: app.url, config }, output),
  );
  delete process.env.HR_WEBHOOK_SECRET;
  t.equal(wrong.error.code, "ANNAL_WEBHOOK_REJECTED");
  t.equal(wrong.error.message, 'hr/employees answered HTTP 403 {"error":"authentication_failed"}');

  // A configuration without the demo's hooks has no secret to sign with.
  const bare = path.join(dir, "bare.toml");
  await writeFile(bare, `[database]\nurl = "${app.db.url}"\n`);
  const missing = await failure((output) =>
    refresh({ scenario: "hire", url: app.url, config: bare }, output),
  );
  t.equal(missing.error.code, "ANNAL_WEBHOOK_SECRET_MISSING");
  t.match(missing.error.message, /no webhook hr\/employees/);

  const early = await failure((output) =>
    refresh({ scenario: "ticket-done", uid: "prossi", url: app.url, config }, output),
  );
  t.equal(early.error.code, "ANNAL_SOURCE_CHANGE_FAILED");
  t.match(early.error.message, /^no joiner of prossi waits for a laptop ticket/);
});
