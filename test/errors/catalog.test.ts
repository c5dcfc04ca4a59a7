import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import t from "tap";
import {
  AnnalError,
  ERROR_CATALOG,
  isErrorCode,
  locate,
  type ErrorCodeSpec,
  classifyError,
} from "../../src/errors/index.ts";
import { errorReference } from "../../src/errors/reference.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
/** Environment variables, named like codes but not codes. */
const ENVIRONMENT = new Set(["ANNAL_CONFIG", "ANNAL_COMMIT", "ANNAL_DEBUG"]);

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((f) => f.isFile() && f.name.endsWith(".ts"))
    .map((f) => path.join(f.parentPath, f.name));
}

const catalog = ERROR_CATALOG as Readonly<Record<string, ErrorCodeSpec>>;

t.test("every code written in src/ is in the catalog", async (t) => {
  const unknown = new Set<string>();
  for (const file of [...sources("src"), ...sources("projections")]) {
    if (file.includes(`${path.sep}errors${path.sep}codes${path.sep}`)) continue;
    const text = readFileSync(file, "utf8");
    for (const [, code] of text.matchAll(/"((?:ANNAL|WF)_[A-Z_]*[A-Z])"/g)) {
      if (!ENVIRONMENT.has(code!) && !isErrorCode(code!)) {
        unknown.add(`${path.relative(ROOT, file)}: ${code}`);
      }
    }
  }
  t.same([...unknown], []);
});

t.test("every code of the catalog is used somewhere in src/", async (t) => {
  const text = [...sources("src"), ...sources("projections")]
    .filter((file) => !file.includes(`${path.sep}errors${path.sep}codes${path.sep}`))
    .map((file) => readFileSync(file, "utf8"))
    .join("\n");
  const unused = Object.keys(catalog).filter((code) => !text.includes(`"${code}"`));
  t.same(unused, []);
});

t.test("every entry has an error status and a meaning that says what happened", async (t) => {
  for (const [code, spec] of Object.entries(catalog)) {
    t.ok(spec.status >= 400 && spec.status <= 599, `${code}: ${spec.status}`);
    t.match(spec.meaning, /^[A-Z`a-z].{10,}[.)]$/, `${code} has a meaning`);
  }
});

t.test("an error takes its status and hint from the catalog unless it gives its own", async (t) => {
  const plain = new AnnalError("ANNAL_LDAP_NOT_A_LEAF", "uid=x has children");
  t.equal(plain.status, 409);
  t.equal(plain.hint, "move or delete its children first");
  const own = new AnnalError("ANNAL_LDAP_NOT_A_LEAF", "uid=x has children", {
    hint: "delete uid=y first",
    status: 422,
  });
  t.equal(own.hint, "delete uid=y first");
  t.equal(own.status, 422);
});

t.test("a user's own code is shown, and the catalog code kept as its kind", async (t) => {
  const error = new AnnalError("ANNAL_HOOK_PERMANENT_FAILURE", "no such employee", {
    userCode: "HR_UNKNOWN_EMPLOYEE",
  });
  t.equal(error.code, "HR_UNKNOWN_EMPLOYEE");
  t.equal(error.kind, "ANNAL_HOOK_PERMANENT_FAILURE");
  t.equal(classifyError(error, "r").status, 422);
  const located = locate(error, { parameter: "id" }) as AnnalError;
  t.equal(located.code, "HR_UNKNOWN_EMPLOYEE");
  t.same(located.details, { parameter: "id" });
});

t.test("the classifier reads an error the same for every surface", async (t) => {
  const refused = classifyError(
    new AnnalError("ANNAL_UNAUTHENTICATED", "no token", {
      headers: { "www-authenticate": 'Bearer realm="annal"' },
      details: { realm: "annal" },
    }),
    "r1",
  );
  t.match(refused, {
    code: "ANNAL_UNAUTHENTICATED",
    status: 401,
    graphqlCode: "UNAUTHENTICATED",
    headers: { "www-authenticate": 'Bearer realm="annal"' },
    details: { realm: "annal" },
    internal: false,
  });
  const framework = classifyError(
    Object.assign(new Error("Body is too large"), {
      statusCode: 413,
      code: "FST_ERR_CTP_BODY_TOO_LARGE",
    }),
    "r2",
  );
  t.match(framework, { code: "ANNAL_BODY_TOO_LARGE", status: 413, internal: false });
  const bug = classifyError(new Error("relation secret_table does not exist"), "r3");
  t.match(bug, { code: "ANNAL_INTERNAL", status: 500, internal: true });
  t.notMatch(bug.message, /secret_table/);
  t.match(bug.message, /r3/);
  t.equal(
    classifyError(new AnnalError("ANNAL_LDAP_TIMEOUT", "slow"), "r").graphqlCode,
    "SERVICE_UNAVAILABLE",
  );
});

t.test("docs/errors.md is what the catalog writes", async (t) => {
  const committed = readFileSync(path.join(ROOT, "docs/errors.md"), "utf8");
  t.equal(committed, errorReference(), "run npm run docs");
});

t.test("a code that answers the status its error sets says so in docs/errors.md", async (t) => {
  const row = errorReference()
    .split("\n")
    .find((line) => line.startsWith("| `ANNAL_ENDPOINT_HTTP_EXCEPTION` |"));
  // It answers an HTTPException's own status (a 418, a 503), never a fixed 500.
  t.match(row, /^\| `ANNAL_ENDPOINT_HTTP_EXCEPTION` \| the exception's \|/);
  const error = new AnnalError("ANNAL_ENDPOINT_HTTP_EXCEPTION", "brews tea only", { status: 418 });
  t.equal(classifyError(error, "r").status, 418);
});
