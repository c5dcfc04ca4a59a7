import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { run, SAMBA_INSTALL_HINT, tail, type SambaPrograms } from "./tools.ts";

export const SAMBA_REALM = "EXAMPLE.TEST";
export const SAMBA_DOMAIN = "EXAMPLE";
/** The DC's own name, given so that it does not follow the machine's host name (a NetBIOS name has at most 15 characters). */
export const SAMBA_HOST_NAME = "dc1";
export const SAMBA_BASE = "DC=example,DC=test";
export const SAMBA_ADMIN_DN = `CN=Administrator,CN=Users,${SAMBA_BASE}`;

/** Where the DC of `dir` keeps what the support and the tests name. */
export function sambaPaths(dir: string): {
  conf: string;
  samLdb: string;
  caFile: string;
  certFile: string;
} {
  return {
    conf: join(dir, "etc", "smb.conf"),
    samLdb: join(dir, "private", "sam.ldb"),
    // written by samba at its first start ("tls enabled", the default), not by provisioning
    caFile: join(dir, "private", "tls", "ca.pem"),
    certFile: join(dir, "private", "tls", "cert.pem"),
  };
}

/**
 * Provisions a throwaway domain into `dir` (`samba-tool domain provision`, about 3–5 s here),
 * with no DNS and RFC 2307 attributes, then rewrites its smb.conf for a private DC: only the
 * LDAP server runs, and every file samba writes outside `dir` by default (its pid file under
 * /run/samba, which would stop a second DC on the machine, its logs under /var/log/samba) goes
 * under `dir`. Security stays Samba's default: simple binds only over TLS.
 */
export async function provisionDomain(
  programs: SambaPrograms,
  dir: string,
  adminPassword: string,
): Promise<void> {
  const provisioned = await run(programs.sambaTool, [
    "domain",
    "provision",
    `--realm=${SAMBA_REALM}`,
    `--domain=${SAMBA_DOMAIN}`,
    `--host-name=${SAMBA_HOST_NAME}`,
    "--server-role=dc",
    "--dns-backend=NONE",
    "--use-rfc2307",
    `--adminpass=${adminPassword}`,
    `--targetdir=${dir}`,
    "--option=interfaces=lo",
    "--option=bind interfaces only=yes",
  ]);
  if (provisioned.code !== 0) {
    // A Python traceback ends the output; the lines that say what went wrong come before it
    // ("File [...] not found. Please install samba-ad-provision package").
    const said = provisioned.output
      .split("\n")
      .filter((line) => /error|install|not found/i.test(line))
      .slice(-3)
      .join(" | ");
    throw new Error(
      `samba-tool could not provision the test domain in ${dir} (exit ${provisioned.code}): ${said || tail(provisioned.output)}; if a package is missing: ${SAMBA_INSTALL_HINT}`,
    );
  }
  await mkdir(join(dir, "run"), { recursive: true });
  await mkdir(join(dir, "log"), { recursive: true });
  await setGlobalOptions(sambaPaths(dir).conf, {
    "server services": "ldap",
    "pid directory": join(dir, "run"),
    "ncalrpc dir": join(dir, "run", "ncalrpc"),
    "log file": join(dir, "log", "samba.log"),
  });
}

/**
 * Sets options in smb.conf's `[global]` section: a key already there gets the new value, a new
 * one is added at the end of the section. Keys compare as Samba compares them (case and spaces
 * ignored).
 */
export async function setGlobalOptions(
  conf: string,
  options: Readonly<Record<string, string>>,
): Promise<void> {
  const keyOf = (name: string) => name.toLowerCase().replace(/\s+/g, "");
  const wanted = new Map(
    Object.entries(options).map(([name, value]) => [keyOf(name), { name, value }]),
  );
  const lines = (await readFile(conf, "utf8")).split("\n");
  const out: string[] = [];
  let inGlobal = false;
  const addRest = () => {
    for (const { name, value } of wanted.values()) out.push(`\t${name} = ${value}`);
    wanted.clear();
  };
  for (const line of lines) {
    const section = /^\s*\[([^\]]+)\]/.exec(line);
    if (section) {
      if (inGlobal) addRest();
      inGlobal = section[1]!.trim().toLowerCase() === "global";
      out.push(line);
      continue;
    }
    const option = inGlobal ? /^\s*([^=#;]+?)\s*=/.exec(line) : null;
    const replacement = option ? wanted.get(keyOf(option[1]!)) : undefined;
    if (option && replacement) {
      out.push(`\t${replacement.name} = ${replacement.value}`);
      wanted.delete(keyOf(option[1]!));
    } else {
      out.push(line);
    }
  }
  if (inGlobal) addRest();
  if (wanted.size > 0) throw new Error(`${conf} has no [global] section`);
  await writeFile(conf, out.join("\n"));
}
