import t from "tap";
import { deadlineStatus } from "../../src/web/client/deadlines.ts";
import { languagesOf, pickLanguage } from "../../src/web/client/languages.ts";
import { diffAttributes, valueChanges } from "../../src/web/client/versions.ts";
import { namedKeys } from "../../src/web/client/dn.ts";

// The web application's pure parts, in Node: what its pages in Chromium are drawn from.

t.test(
  "a multi-valued attribute's diff lists the values added and removed, not both lists",
  async (t) => {
    const members = Array.from({ length: 36 }, (_, i) => `uid=u${i},ou=people,dc=example,dc=org`);
    const joined = [...members.slice(1), "uid=krossi,ou=sales,ou=people,dc=example,dc=org"];
    const [row] = diffAttributes({ member: members }, { member: joined });
    t.equal(row?.kind, "changed");
    t.same(row?.addedValues, ["uid=krossi,ou=sales,ou=people,dc=example,dc=org"]);
    t.same(row?.removedValues, [members[0]]);
    t.equal(row?.kept, 35);
    t.same(valueChanges(["a", "a", "b"], ["b", "a"]), {
      addedValues: [],
      removedValues: ["a"],
      kept: 2,
    });
    t.equal(diffAttributes({ cn: ["x", "y"] }, { cn: ["y", "x"] })[0]?.kind, "same", "order only");
  },
);

t.test("a completed instance's deadlines are met or missed, never pending", async (t) => {
  const completed = { state: "COMPLETED", updatedAt: "2026-01-02T10:00:00Z" };
  const calls = [
    { seq: 2, state: "completed", endedAt: "2026-01-02T09:00:00Z" },
    { seq: 3, state: "timed_out", endedAt: "2026-01-05T00:00:00Z" },
    { seq: 4, state: "completed", endedAt: "2026-01-09T00:00:00Z" },
  ];
  const due = (seq: number | null, dueAt: string, passed = true) => ({
    kind: "dialog",
    seq,
    name: "approve",
    dueAt,
    passed,
  });
  t.equal(deadlineStatus(due(2, "2026-01-05T00:00:00Z"), calls, completed), "met");
  t.equal(deadlineStatus(due(3, "2026-01-05T00:00:00Z"), calls, completed), "missed");
  t.equal(deadlineStatus(due(4, "2026-01-05T00:00:00Z"), calls, completed), "missed", "late");
  t.equal(deadlineStatus(due(null, "2026-01-12T00:00:00Z"), calls, completed), "met");
  t.equal(deadlineStatus(due(null, "2026-01-01T00:00:00Z"), calls, completed), "missed");
  t.equal(deadlineStatus(due(9, "2026-01-12T00:00:00Z"), calls, completed), "void");
  const waiting = { state: "WAITING", updatedAt: "2026-01-02T10:00:00Z" };
  t.equal(deadlineStatus(due(9, "2099-01-01T00:00:00Z", false), calls, waiting), "pending");
  t.equal(deadlineStatus(due(9, "2026-01-01T00:00:00Z", true), calls, waiting), "passed");
});

t.test("a multi-language value is read in the viewer's language, else English", async (t) => {
  const parts = languagesOf("en~Sales|de~Vertrieb|fr~Ventes")!;
  t.same(
    parts.map((p) => p.language),
    ["en", "de", "fr"],
  );
  t.equal(pickLanguage(parts, ["de-AT", "en"]).text, "Vertrieb");
  t.equal(pickLanguage(parts, ["fr"]).text, "Ventes");
  t.equal(pickLanguage(parts, ["ja"]).text, "Sales");
  t.equal(languagesOf("a~b in a sentence"), undefined, "not every tilde");
  t.equal(languagesOf("Sales"), undefined);
});

t.test("a workflow's data names an entry once: its DN by the name given beside it", async (t) => {
  const group = "cn=on-call,ou=groups,dc=example,dc=org";
  const found = namedKeys({ group, groupName: "on-call", reason: "the rota" });
  t.same(found.shown, ["group", "reason"], "groupName is not shown again");
  t.same([...found.names], [["group", "on-call"]]);
  // A name beside a value that is no DN is data of its own.
  t.same(namedKeys({ group: "on-call", groupName: "on-call" }).shown, ["group", "groupName"]);
});
