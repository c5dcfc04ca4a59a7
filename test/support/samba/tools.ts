import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { Readable } from "node:stream";

/**
 * What Debian needs for a Samba AD DC that provisions and serves LDAP (found by trying: without
 * samba-ad-provision the schema files are missing, without samba-dsdb-modules sam.ldb's modules,
 * without samba-vfs-modules provisioning fails setting the sysvol ACLs); ldb-tools for ldbadd.
 */
export const SAMBA_PACKAGES =
  "samba samba-ad-provision samba-dsdb-modules samba-vfs-modules ldb-tools";

export const SAMBA_INSTALL_HINT = `install Samba's AD DC: \`DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${SAMBA_PACKAGES}\` (Debian/Ubuntu; .ci/run does this)`;

/** The programs the test support runs. */
export interface SambaPrograms {
  readonly samba: string;
  readonly sambaTool: string;
  readonly ldbadd: string;
  /** util-linux's flock, which holds the loopback address's lock for the DC's life. */
  readonly flock: string;
}

/**
 * Finds each program in `$SAMBA_SBIN`, `PATH` and the sbin directories PATH often lacks, and
 * throws naming what is missing and how to install it: a test that wants a DC fails loudly
 * rather than skipping.
 */
export function findSambaPrograms(): SambaPrograms {
  const find = (name: string) => {
    const dirs = [
      process.env.SAMBA_SBIN,
      ...(process.env.PATH ?? "").split(delimiter),
      "/usr/sbin",
      "/usr/local/sbin",
      "/usr/bin",
    ];
    for (const dir of dirs) {
      if (!dir) continue;
      try {
        accessSync(join(dir, name), constants.X_OK);
        return join(dir, name);
      } catch {
        // not here; try the next directory
      }
    }
    return undefined;
  };
  const found = {
    samba: find("samba"),
    sambaTool: find("samba-tool"),
    ldbadd: find("ldbadd"),
    flock: find("flock"),
  };
  const missing = Object.entries(found).filter(([, path]) => path === undefined);
  if (missing.length > 0) {
    const names = missing.map(([name]) => name.replace("sambaTool", "samba-tool")).join(", ");
    throw new Error(
      `Samba's AD domain controller is needed by this test and is not installed (${names} not found); ${SAMBA_INSTALL_HINT}`,
    );
  }
  return found as SambaPrograms;
}

/** Runs a program to completion, feeding it `input`; its exit code and the end of its output. */
export function run(
  command: string,
  args: readonly string[],
  input?: string | Iterable<string>,
): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    const keep = (chunk: string) => (output = (output + chunk).slice(-8000));
    child.stdout.setEncoding("utf8").on("data", keep);
    child.stderr.setEncoding("utf8").on("data", keep);
    child.once("error", reject);
    child.once("close", (code) => resolve({ code: code ?? 1, output }));
    child.stdin.on("error", () => {}); // an early exit closes the pipe; `close` reports why
    if (input === undefined || typeof input === "string") child.stdin.end(input ?? "");
    else Readable.from(input).on("error", reject).pipe(child.stdin);
  });
}

/** The last lines of a program's output, for an error message. */
export function tail(output: string, lines = 4): string {
  return output.trim().split("\n").slice(-lines).join(" | ");
}
