import t from "tap";
import { change, deliver, hooksFixture, signed, testHooks } from "./fixtures/hooks.ts";
import { eventually } from "../support/eventually.ts";

t.test(
  "a provider call that hangs for one subject does not hold back the other subjects",
  async (t) => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    t.teardown(() => release());
    const processed: string[] = [];
    const f = await hooksFixture(t, {
      hooks: [
        testHooks({
          provider: {
            timeout: "60s",
            async process(envelope) {
              // The first subject's call hangs (a provider waiting on a slow backend).
              if (envelope.subject === "stuck") await released;
              processed.push(envelope.eventId);
            },
          },
        }),
      ],
    });
    await f.startWorkers();
    t.equal((await deliver(f.app, signed(change("hangs", { person: "stuck" })))).statusCode, 202);
    // The hanging call is under way before the others arrive: the worker fetched it alone.
    await eventually(
      async () =>
        (
          await f.db.pool.query(
            `SELECT 1 FROM pgboss.job WHERE state = 'active' AND data->>'receivedEventId' IS NOT NULL`,
          )
        ).rowCount === 1,
      { what: "the hanging job is active" },
    );
    for (const [i, person] of ["a", "b", "a", "c"].entries()) {
      const response = await deliver(f.app, signed(change(`e-${i}`, { person })));
      t.equal(response.statusCode, 202);
    }
    await eventually(() => processed.length === 4, {
      what: "the other subjects' change events are processed while one call hangs",
      timeout: 20_000,
    });
    t.same(processed.sort(), ["e-0", "e-1", "e-2", "e-3"]);
    release();
    await eventually(() => processed.includes("hangs"), { what: "the hanging call ends" });
  },
);
