import Fastify from "fastify";
import t from "tap";
import { hooksPlugin } from "../../src/hooks/index.ts";
import { change, countEvents, countJobs, deliver, hooksFixture, signed } from "./fixtures/hooks.ts";
import { createAuthentication } from "../../src/auth/index.ts";

t.test("1,000 concurrent deliveries of one change event store it exactly once", async (t) => {
  const f = await hooksFixture(t);
  const url = await f.app.listen({ host: "127.0.0.1", port: 0 });
  const request = signed(change("e-1", { value: "same" }));
  const statuses = await Promise.all(
    Array.from({ length: 1000 }, async () => {
      const response = await fetch(`${url}/-hooks/test/people`, {
        method: "POST",
        headers: request.headers,
        body: request.payload,
      });
      const body = (await response.json()) as { accepted: { stored: boolean }[] };
      return `${response.status} ${body.accepted[0]!.stored ? "stored" : "repeat"}`;
    }),
  );
  const tally = Object.fromEntries(
    [...new Set(statuses)].map((s) => [s, statuses.filter((x) => x === s).length]),
  );
  t.same(tally, { "202 stored": 1, "202 repeat": 999 });
  t.equal(await countEvents(f.store), 1);
  t.equal(await countJobs(f.db), 1);
});

t.test(
  "racing deliveries of one eventId with two contents: one content wins, the other gets 409",
  async (t) => {
    const f = await hooksFixture(t);
    const url = await f.app.listen({ host: "127.0.0.1", port: 0 });
    const variants = [signed(change("e-1", { value: "a" })), signed(change("e-1", { value: "b" }))];
    const answers = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const request = variants[i % 2]!;
        const response = await fetch(`${url}/-hooks/test/people`, {
          method: "POST",
          headers: request.headers,
          body: request.payload,
        });
        await response.arrayBuffer();
        return { variant: i % 2, status: response.status };
      }),
    );
    const winner = answers.find((a) => a.status === 202)!.variant;
    t.ok(
      answers.every((a) => a.status === (a.variant === winner ? 202 : 409)),
      "every delivery of the stored content is accepted, every other refused",
    );
    t.equal(await countEvents(f.store), 1);
    const [event] = await f.stream("source-crm");
    t.match(event!.data, { envelope: { data: { value: winner === 0 ? "a" : "b" } } });
    t.equal(await countJobs(f.db), 1);
  },
);

t.test("two annal processes taking the same change events store each once", async (t) => {
  const f = await hooksFixture(t);
  // A second webhook server on the same database: its own group commit, as another process has.
  const other = Fastify();
  await other.register(
    hooksPlugin({
      registry: f.registry,
      store: f.store,
      jobs: f.jobs,
      authentication: createAuthentication({ pool: f.store.pool }),
    }),
  );
  t.teardown(() => other.close());
  const apps = [f.app, other];
  const answers = await Promise.all(
    Array.from({ length: 400 }, (_, i) => {
      const value = i % 4 < 2 ? "a" : "b"; // per event, two contents racing on both servers
      return deliver(
        apps[i % 2]!,
        signed(change(`e-${i % 40}`, { value: `${i % 40}-${value}` })),
      ).then((response) => ({ event: i % 40, value, status: response.statusCode }));
    }),
  );
  t.ok(
    answers.every((a) => a.status === 202 || a.status === 409),
    "only 202 and 409",
  );
  for (let event = 0; event < 40; event++) {
    const mine = answers.filter((a) => a.event === event);
    const accepted = new Set(mine.filter((a) => a.status === 202).map((a) => a.value));
    t.equal(accepted.size, 1, `event ${event}: one content accepted`);
  }
  t.equal(await countEvents(f.store), 40);
  t.equal(await countJobs(f.db), 40);
});
