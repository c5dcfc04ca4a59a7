import path from "node:path";
import t from "tap";
import type { DirectoryEntry, Modification } from "../../src/directory/index.ts";
import type { FilterNode } from "../../src/filters/index.ts";
import {
  listFailedWork,
  loadHooks,
  retryFailedWork,
  type DirectoryAccess,
} from "../../src/hooks/index.ts";
import type { RecordedEvent } from "../../src/store/index.ts";
import { deliver, hooksFixture, signed } from "./fixtures/hooks.ts";
import { eventually } from "../support/eventually.ts";

const DEMO_HOOKS = path.resolve(import.meta.dirname, "../../ops/demo/hooks");
const DEMO_SECRET = "demo-hr-secret"; // the demo file's fallback when HR_WEBHOOK_SECRET is unset
const BASE = "dc=example,dc=org";

/** Just enough of a directory for the demo provider: people found by uid, titles set. */
function fakeDirectory(people: Record<string, string>) {
  const modified: { dn: string; changes: readonly Modification[] }[] = [];
  const client = {
    async *search(_base: string, options: { filter?: FilterNode }) {
      const uid = (options.filter as { value?: string } | undefined)?.value ?? "";
      const dn = people[uid];
      if (dn) yield [{ dn, attributes: {} } satisfies DirectoryEntry];
    },
    async modify(dn: string, changes: readonly Modification[]) {
      modified.push({ dn, changes });
    },
  };
  const access = { client: client as unknown as DirectoryAccess["client"], base: BASE };
  return { access, modified, people };
}

const employee = (id: string, uid: string, title = "Head of Research") => ({
  id,
  kind: "employee.updated",
  at: "2026-11-22T08:30:00Z",
  employee: { uid, title },
});

function outcome(events: readonly RecordedEvent[], eventId: string, type: string) {
  const received = events.find(
    (e) =>
      e.type === "ChangeEventReceived" &&
      (e.data as { envelope: { eventId: string } }).envelope.eventId === eventId,
  );
  return received && events.find((e) => e.type === type && e.metadata.causationId === received.id);
}

t.test(
  "the demo HR hooks file, end to end: accepted, stored, processed, failed, retried",
  async (t) => {
    const registry = await loadHooks({ dir: DEMO_HOOKS, env: {} });
    const f = await hooksFixture(t, { registry });
    const directory = fakeDirectory({ aturing: `uid=aturing,ou=research,ou=people,${BASE}` });
    await f.startProjector();
    await f.startWorkers({ directory: directory.access });

    const accepted = await deliver(
      f.app,
      signed(employee("hr-1", "aturing"), { secret: DEMO_SECRET }),
      "/-hooks/hr/employees",
    );
    t.equal(accepted.statusCode, 202);
    t.same(accepted.json(), { accepted: [{ source: "hr", eventId: "hr-1", stored: true }] });

    const processed = await eventually(async () =>
      outcome(await f.stream("source-hr"), "hr-1", "ChangeEventProcessed"),
    );
    t.ok(processed, "processed");
    t.match(processed!.data, {
      result: { directory: "title set", dn: `uid=aturing,ou=research,ou=people,${BASE}` },
      directoryWrites: [
        {
          operation: "modify",
          dn: `uid=aturing,ou=research,ou=people,${BASE}`,
          attributes: ["title"],
        },
      ],
    });
    t.same(directory.modified, [
      {
        dn: `uid=aturing,ou=research,ou=people,${BASE}`,
        changes: [{ operation: "replace", attribute: "title", values: "Head of Research" }],
      },
    ]);
    t.ok(
      outcome(await f.stream("source-hr"), "hr-1", "EmployeeChangeNoted"),
      "the note is in the log",
    );

    // Someone HR knows and the directory does not: failed work, then retried once they exist.
    const unknown = await deliver(
      f.app,
      signed({ events: [employee("hr-2", "ghopper", "Rear Admiral")] }, { secret: DEMO_SECRET }),
      "/-hooks/hr/employees",
    );
    t.equal(unknown.statusCode, 202);
    await eventually(async () =>
      outcome(await f.stream("source-hr"), "hr-2", "ChangeEventAbandoned"),
    );
    await f.caughtUp();
    const [failed] = await listFailedWork(f.db.pool);
    t.match(failed, {
      hook: "hr",
      webhook: "employees",
      source: "hr",
      eventId: "hr-2",
      subject: "ghopper",
      state: "failed",
      reason: "permanent_failure",
      lastError: {
        code: "HR_UNKNOWN_EMPLOYEE",
        message: "no person with uid ghopper in the directory",
      },
    });

    directory.people.ghopper = `uid=ghopper,ou=engineering,ou=people,${BASE}`;
    t.same(await retryFailedWork({ store: f.store, jobs: f.jobs, registry }, failed!.id), {
      id: failed!.id,
      queued: true,
    });
    t.ok(
      await eventually(async () =>
        outcome(await f.stream("source-hr"), "hr-2", "ChangeEventProcessed"),
      ),
    );
    t.equal(directory.modified.at(-1)!.dn, `uid=ghopper,ou=engineering,ou=people,${BASE}`);
  },
);

t.test("the demo hooks file without a directory only notes the change", async (t) => {
  const registry = await loadHooks({ dir: DEMO_HOOKS, env: { HR_WEBHOOK_SECRET: "s3cret" } });
  const f = await hooksFixture(t, { registry });
  await f.startWorkers();
  const refused = await deliver(
    f.app,
    signed(employee("hr-1", "aturing"), { secret: DEMO_SECRET }),
    "/-hooks/hr/employees",
  );
  t.equal(refused.statusCode, 403, "the fallback secret is gone once HR_WEBHOOK_SECRET is set");
  const accepted = await deliver(
    f.app,
    signed(employee("hr-1", "aturing"), { secret: "s3cret" }),
    "/-hooks/hr/employees",
  );
  t.equal(accepted.statusCode, 202);
  const processed = await eventually(async () =>
    outcome(await f.stream("source-hr"), "hr-1", "ChangeEventProcessed"),
  );
  t.match(processed!.data, { result: { directory: "unchanged" }, directoryWrites: [] });
});
