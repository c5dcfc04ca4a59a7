import path from "node:path";
import t from "tap";
import { failedWorkList, failedWorkRetry } from "../../src/cli/commands/failed-work.ts";
import { hooksSend } from "../../src/cli/commands/hooks.ts";
import { PermanentFailure } from "../../src/hooks/index.ts";
import {
  change,
  countEvents,
  deliver,
  hooksFixture,
  SECRET,
  signed,
  testHooks,
} from "../hooks/fixtures/hooks.ts";
import { eventually } from "../support/eventually.ts";
import { capturedOutput, runAnnal } from "./support.ts";

t.test("hooks send signs and posts a body; the webhook accepts it", async (t) => {
  const f = await hooksFixture(t);
  const url = await f.app.listen({ host: "127.0.0.1", port: 0 });
  const { out, output } = capturedOutput();
  const body = JSON.stringify(change("cli-1"));
  t.equal(
    await hooksSend({ url, hook: "test", webhook: "people", secret: SECRET, body }, output),
    0,
  );
  t.same(out, [`202 {"accepted":[{"source":"crm","eventId":"cli-1","stored":true}]}`]);
  t.equal(await countEvents(f.store), 1);

  await t.rejects(
    hooksSend(
      { url, hook: "test", webhook: "people", secret: "wrong", body },
      capturedOutput().output,
    ),
    {
      code: "ANNAL_WEBHOOK_REJECTED",
      message: `the webhook answered 403 {"error":"authentication_failed"}`,
    },
  );
  await t.rejects(
    hooksSend({ url, hook: "test", webhook: "people", secret: undefined, body }, output),
    {
      code: "ANNAL_WEBHOOK_SECRET_MISSING",
    },
  );
  const file = path.join(t.testdir({ "body.json": JSON.stringify(change("cli-2")) }), "body.json");
  t.equal(
    await hooksSend(
      { url, hook: "test", webhook: "people", secret: SECRET, bodyFile: file },
      output,
    ),
    0,
  );
});

t.test("hooks send without --url posts where the configuration says annal listens", async (t) => {
  const f = await hooksFixture(t);
  const url = await f.app.listen({ host: "127.0.0.1", port: 0 });
  const port = String(new URL(url).port);
  const send = (id: string, options: { cwd: string; env?: Record<string, string> }) =>
    runAnnal(["hooks", "send", "test/people", "--body", JSON.stringify(change(id))], {
      cwd: options.cwd,
      env: { WEBHOOK_SECRET: SECRET, ...options.env },
    });

  const configured = t.testdir({ "annal.toml": `[server]\nport = ${port}\n` });
  const byFile = await send("port-1", { cwd: configured });
  t.equal(byFile.code, 0, byFile.stderr);
  t.match(byFile.stdout, /^202 .*"eventId":"port-1"/, "[server] port of ./annal.toml");

  const demo = t.testdir({});
  const byEnv = await send("port-2", { cwd: demo, env: { PORT: port } });
  t.equal(byEnv.code, 0, byEnv.stderr);
  t.match(byEnv.stdout, /^202 .*"eventId":"port-2"/, "PORT over the demo's 4173");

  const wildcard = t.testdir({ "annal.toml": `[server]\nhost = "0.0.0.0"\nport = ${port}\n` });
  const onLoopback = await send("port-3", { cwd: wildcard });
  t.equal(onLoopback.code, 0, onLoopback.stderr);
  t.equal(await countEvents(f.store), 3);
});

t.test("failed-work list and retry read annal.toml's database", async (t) => {
  const f = await hooksFixture(t, {
    hooks: [
      testHooks({
        provider: {
          process() {
            throw new PermanentFailure("person p-1 is unknown", { code: "CRM_UNKNOWN" });
          },
        },
      }),
    ],
  });
  await f.startProjector();
  await f.startWorkers();
  await deliver(f.app, signed(change("e-1")));
  await eventually(async () =>
    (await f.stream("source-crm")).some((e) => e.type === "ChangeEventAbandoned"),
  );
  await f.caughtUp();

  const dir = t.testdir({
    "annal.toml": `[database]\nurl = ${JSON.stringify(f.db.url)}\n[log]\nlevel = "silent"\n`,
  });
  const config = path.join(dir, "annal.toml");
  const table = capturedOutput();
  t.equal(await failedWorkList({ config }, table.output), 0);
  t.match(table.out[0], /^id\s+state\s+webhook\s+event\s+attempts\s+failed at\s+last error$/);
  t.match(
    table.out[1],
    /^[0-9a-f-]{36}\s+failed\s+test\/people\s+crm\/e-1\s+1\s+\S+\s+CRM_UNKNOWN: person p-1 is unknown$/,
  );
  const json = capturedOutput();
  t.equal(await failedWorkList({ config, json: true, state: "all" }, json.output), 0);
  const item = JSON.parse(json.out[0]!) as { id: string; state: string };
  t.equal(item.state, "failed");

  const retried = capturedOutput();
  t.equal(await failedWorkRetry(item.id, { config }, retried.output), 0);
  t.same(retried.out, [`queued ${item.id} for processing again`]);
  await eventually(async () =>
    (await f.stream("source-crm")).some((e) => e.type === "ChangeEventRetryRequested"),
  );
  await t.rejects(failedWorkList({ config, state: "nope" }, capturedOutput().output), {
    code: "ANNAL_USAGE",
  });
});
