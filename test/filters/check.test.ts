import t from "tap";
import {
  ABSOLUTE_FALSE,
  ABSOLUTE_TRUE,
  caseInsensitiveAttributes,
  checkAttributes,
  parseFilter,
} from "../../src/filters/index.ts";
import { and, eq, not, or, present, substring } from "./fixtures/ast.ts";

const known = caseInsensitiveAttributes(["cn", "sn", "givenName", "mail"]);
const check = (text: string) => checkAttributes(parseFilter(text).ast, known);

t.test("attribute names are resolved to their canonical spelling", async (t) => {
  t.same(check("CN = a AND GIVENNAME = b* AND Mail = *"), {
    ast: and(eq("cn", "a"), substring("givenName", { initial: "b" }), present("mail")),
    unknown: [],
  });
});

t.test("a condition on an unknown attribute matches nothing; its NOT matches all", async (t) => {
  t.same(check("shoeSize = 9"), { ast: ABSOLUTE_FALSE, unknown: ["shoeSize"] });
  t.same(check("shoeSize = *"), { ast: ABSOLUTE_FALSE, unknown: ["shoeSize"] });
  t.same(check("shoeSize != 9"), { ast: ABSOLUTE_TRUE, unknown: ["shoeSize"] });
  t.same(check("cn = a OR shoeSize = 9"), { ast: eq("cn", "a"), unknown: ["shoeSize"] });
  t.same(check("cn = a AND shoeSize = 9"), { ast: ABSOLUTE_FALSE, unknown: ["shoeSize"] });
  t.same(check("cn = a AND shoeSize != 9"), { ast: eq("cn", "a"), unknown: ["shoeSize"] });
  t.same(check("cn = a OR shoeSize != 9"), { ast: ABSOLUTE_TRUE, unknown: ["shoeSize"] });
  t.same(check("cn = a AND sn = b AND NOT (x = 1 AND sn = c)"), {
    ast: and(eq("cn", "a"), eq("sn", "b")),
    unknown: ["x"],
  });
  t.same(check("NOT (cn = a OR x = 1)"), { ast: not(eq("cn", "a")), unknown: ["x"] });
});

t.test("unknown names are listed once each, as written, in order", async (t) => {
  t.same(check("b = 1 OR a = 1 OR B = 2 OR b = 3 OR cn = x").unknown, ["b", "a", "B"]);
});

t.test(
  "absolute true and false written in the filter simplify like unknown conditions",
  async (t) => {
    t.same(check("(&)").ast, and());
    t.same(check("(|)").ast, or());
    t.same(check("(&(cn=a)(|))").ast, ABSOLUTE_FALSE);
    t.same(check("(|(cn=a)(&))").ast, ABSOLUTE_TRUE);
    t.same(check("(&(cn=a)(&))").ast, eq("cn", "a"));
  },
);
