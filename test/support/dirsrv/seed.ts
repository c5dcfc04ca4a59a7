import { spawn } from "node:child_process";
import type { LdifEntry } from "../../../src/slapd/index.ts";
import { DIRSRV_ROOT_DN } from "./dse.ts";

/**
 * The suffix entry and, under it, `ou=people`, `ou=groups` and `ou=services`: for
 * `dc=example,dc=org` the same entries as the private slapd's (`baseEntries`), so a test can
 * run one story on both servers.
 */
export function suffixEntries(suffix: string): LdifEntry[] {
  const [type, value] = (suffix.split(",")[0] ?? "").split("=") as [string, string | undefined];
  if (value === undefined) throw new Error(`not a suffix: ${JSON.stringify(suffix)}`);
  const top: LdifEntry["attributes"] =
    type.toLowerCase() === "dc"
      ? { objectClass: ["dcObject", "organization"], dc: [value], o: [capitalised(value)] }
      : type.toLowerCase() === "o"
        ? { objectClass: ["organization"], o: [value] }
        : type.toLowerCase() === "ou"
          ? { objectClass: ["organizationalUnit"], ou: [value] }
          : {};
  if (Object.keys(top).length === 0)
    throw new Error(`a test suffix starts with dc=, o= or ou=, not ${type}=`);
  const ou = (name: string, description: string): LdifEntry => ({
    dn: `ou=${name},${suffix}`,
    attributes: { objectClass: ["organizationalUnit"], ou: [name], description: [description] },
  });
  return [
    { dn: suffix, attributes: top },
    ou("people", "People"),
    ou("groups", "Groups"),
    ou("services", "Service accounts"),
  ];
}

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * Adds the entries of `ldif` over LDAP with ldap-utils' `ldapadd`, as the root DN: online, so
 * that the plugins see them (an offline `ldif2db` import gives no entry an entryUUID, and it
 * costs a second more than the adds). With the Retro Changelog on, the adds are its first records.
 */
export function ldapadd(url: string, passwordFile: string, ldif: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("ldapadd", ["-x", "-H", url, "-D", DIRSRV_ROOT_DN, "-y", passwordFile], {
      stdio: ["pipe", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", (error) =>
      reject(
        new Error(`ldapadd could not run (Debian: apt-get install ldap-utils): ${error.message}`),
      ),
    );
    child.once("close", (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`ldapadd failed (status ${code}): ${stderr.trim()}`)),
    );
    child.stdin.on("error", () => {}); // an early exit closes the pipe; `close` reports why
    child.stdin.end(ldif);
  });
}
