import t from "tap";
import { configDir, runAnnal } from "./support.ts";

const WITH_LITERAL_PASSWORD = `
[directory]
url = "ldap://127.0.0.1:389"
bindDN = "cn=admin,dc=example,dc=org"
password = "hunter2-literal"
base = "dc=example,dc=org"
`;

for (const command of ["verify", "start"]) {
  t.test(`annal ${command} refuses a literal password, naming its key path`, async (t) => {
    const { file } = await configDir(t, WITH_LITERAL_PASSWORD);
    const run = await runAnnal([command, "--config", file]);
    t.equal(run.code, 1);
    t.match(
      run.stderr,
      /^annal: ANNAL_CONFIG_SECRET_LITERAL: directory\.password in .+\nannal: hint: .+\n$/,
    );
    t.notMatch(run.stderr + run.stdout, /hunter2/, "the secret is not repeated");
  });
}

t.test("a missing --config file is ANNAL_CONFIG_NOT_FOUND", async (t) => {
  const run = await runAnnal(["verify", "--config", "/nonexistent/annal.toml"]);
  t.equal(run.code, 1);
  t.match(run.stderr, /^annal: ANNAL_CONFIG_NOT_FOUND: /);
});
