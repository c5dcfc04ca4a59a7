import t from "tap";
import { createPatch } from "rfc6902";
import {
  applyPatch,
  attributesOfNode,
  diffAttributes,
  membershipIn,
  versionsOf,
  type Attributes,
} from "../../src/web/client/versions.ts";

// The history page rebuilds an entry's versions from its changes' RFC 6902 patches, which
// capture makes with rfc6902's createPatch over the attribute maps: the same here.

t.test("applying each change's patch in order gives every version of the entry", async (t) => {
  const states: Attributes[] = [
    { cn: ["Ada"], objectClass: ["inetOrgPerson"], sn: ["Lovelace"] },
    { cn: ["Ada"], objectClass: ["inetOrgPerson"], sn: ["Lovelace"], title: ["Analyst"] },
    { cn: ["Ada", "Ada L."], objectClass: ["inetOrgPerson"], sn: ["Lovelace"], title: ["Lead"] },
    { cn: ["Ada L."], objectClass: ["inetOrgPerson"], sn: ["King"] },
  ];
  const changes = states.map((state, i) => ({
    changeId: String(i),
    type: i === 0 ? "add" : "modify",
    dn: "uid=ada",
    occurredAt: new Date(2026, 0, i + 1).toISOString(),
    patch: createPatch(i === 0 ? {} : states[i - 1], state),
  }));
  t.same(versionsOf({}, changes), states);
});

t.test("a patch leaves the state it was applied to as it was", async (t) => {
  const before: Attributes = { mail: ["a@example.org"] };
  const after = applyPatch(before, [{ op: "add", path: "/mail/1", value: "b@example.org" }]);
  t.same(before, { mail: ["a@example.org"] });
  t.same(after, { mail: ["a@example.org", "b@example.org"] });
});

t.test(
  "an operation that does not fit the state is skipped, and a delete empties it",
  async (t) => {
    t.same(
      applyPatch({ cn: ["x"] }, [
        { op: "remove", path: "/title" },
        { op: "test", path: "/cn", value: ["x"] },
      ]),
      { cn: ["x"] },
    );
    t.same(
      versionsOf({ cn: ["x"] }, [{ changeId: "1", type: "delete", dn: "cn=x", occurredAt: "" }]),
      [{}],
    );
  },
);

t.test("a REST entry node reads as attributes of text values", async (t) => {
  t.same(
    attributesOfNode({
      id: "VXNlcjox",
      entryUUID: "u",
      dn: "uid=a",
      type: "User",
      cn: "A",
      employeeNumber: 7,
      mail: ["a@x", "b@x"],
      locked: false,
      title: null,
    }),
    { cn: ["A"], employeeNumber: ["7"], mail: ["a@x", "b@x"], locked: ["FALSE"] },
  );
});

t.test(
  "the diff names what was added, removed and changed, values in any order being the same",
  async (t) => {
    t.same(
      diffAttributes(
        { cn: ["a", "b"], sn: ["x"], title: ["t"] },
        { cn: ["b", "a"], mail: ["m"], title: ["u"] },
      ),
      [
        {
          name: "cn",
          before: ["a", "b"],
          after: ["b", "a"],
          kind: "same",
          addedValues: [],
          removedValues: [],
          kept: 2,
        },
        {
          name: "mail",
          before: [],
          after: ["m"],
          kind: "added",
          addedValues: ["m"],
          removedValues: [],
          kept: 0,
        },
        {
          name: "sn",
          before: ["x"],
          after: [],
          kind: "removed",
          addedValues: [],
          removedValues: ["x"],
          kept: 0,
        },
        {
          name: "title",
          before: ["t"],
          after: ["u"],
          kind: "changed",
          addedValues: ["u"],
          removedValues: ["t"],
          kept: 0,
        },
      ],
    );
  },
);

t.test("a group's patch that adds a DN to member is a membership of that DN", async (t) => {
  const dn = "uid=lnovak,ou=people,dc=example,dc=org";
  t.equal(
    membershipIn(
      [{ op: "add", path: "/member/3", value: "UID=lnovak,ou=people,dc=example,dc=org" }],
      "member",
      dn,
    ),
    "added",
  );
  t.equal(membershipIn([{ op: "add", path: "/member", value: [dn] }], "member", dn), "added");
  t.equal(membershipIn([{ op: "add", path: "/owner/0", value: dn }], "member", dn), undefined);
});
