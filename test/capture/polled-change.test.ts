import t from "tap";
import { polledChangeId } from "../../src/capture/polled-change.ts";
import type { EntryState } from "../../src/events/index.ts";

const UUID = "6e2d0c8e-0000-4000-8000-000000000001";
const state = (title: string, operational: Record<string, string[]> = {}): EntryState => ({
  dn: "uid=a,ou=people,dc=example,dc=org",
  type: "user",
  attributes: { cn: ["a"], title: [title] },
  operational,
});

t.test("a polled change is known by the version it follows and the state it left", async (t) => {
  t.equal(
    polledChangeId(UUID, 3, state("A")),
    polledChangeId(UUID, 3, state("A", { modifyTimestamp: ["20261122043501Z"] })),
    "the same state read twice from one version is one change, whatever its time",
  );
  t.not(
    polledChangeId(UUID, 3, state("A")),
    polledChangeId(UUID, 3, state("B")),
    "two writes in one second leave different states",
  );
  t.not(
    polledChangeId(UUID, 2, state("A")),
    polledChangeId(UUID, 4, state("A")),
    "a write back to an earlier state follows a later version",
  );
  t.equal(
    polledChangeId(UUID, 3, { ...state("A"), attributes: { title: ["A"], cn: ["a"] } }),
    polledChangeId(UUID, 3, state("A")),
    "the attributes' order as jsonb keeps it does not count",
  );
  t.match(polledChangeId(UUID, 3, state("A")), new RegExp(`^${UUID}:3:[0-9a-f]{64}$`));
  t.equal(polledChangeId(UUID, 5, null), `${UUID}:5:deleted`);
});
