import { writeFile } from "node:fs/promises";
import path from "node:path";
import { loadConfig, type AnnalConfig } from "../../src/config/index.ts";
import { freePort } from "../../src/ports.ts";
import type { TestDatabase } from "./postgres.ts";
import type { Slapd } from "./slapd.ts";

/**
 * The configuration `annal start` would read for a test: a free port, the test's database,
 * its slapd with one `user` type, capture every `captureInterval`, then `extraToml`
 * (`databaseToml` adds keys to `[database]`). Written
 * to an `annal.toml` in the test's directory and loaded through the real loader.
 */
export async function appConfig(
  t: { testdir(): string },
  options: {
    db: TestDatabase;
    /** The directory: the suite's slapd, or any server with a bind (389, AD). */
    slapd: Pick<Slapd, "url" | "bindDN" | "password">;
    captureInterval: string;
    /** `[directory.capture] source` (default: the default, `accesslog`). */
    captureSource?: "accesslog" | "changelog" | "poll";
    extraToml?: string;
    /** More keys of `[database]` (`poolSize = 3`). */
    databaseToml?: string;
  },
): Promise<AnnalConfig> {
  const { db, slapd } = options;
  const dir = t.testdir();
  const file = path.join(dir, "annal.toml");
  await writeFile(
    file,
    `[server]
port = ${await freePort()}

[database]
url = "${db.url}"
${options.databaseToml ?? ""}

[directory]
url = "${slapd.url}"
bindDN = "${slapd.bindDN}"
password = "\${LDAP_PASSWORD}"
base = "dc=example,dc=org"

[[directory.types]]
name = "user"
base = "ou=people,dc=example,dc=org"
filter = "(objectClass=inetOrgPerson)"

[directory.capture]
interval = "${options.captureInterval}"
${options.captureSource ? `source = "${options.captureSource}"` : ""}

${options.extraToml ?? ""}`,
  );
  return loadConfig({ configPath: file, cwd: dir, env: { LDAP_PASSWORD: slapd.password } });
}
