import { escapeDNValue } from "../../../src/directory/index.ts";
import type { LdifEntry } from "../../../src/slapd/index.ts";
import { SAMBA_BASE, sambaPaths } from "./provision.ts";
import { run, tail, type SambaPrograms } from "./tools.ts";

/**
 * Loads LDIF into the stopped DC's `sam.ldb` with ldbadd, through Samba's own ldb modules, so
 * that every object gets what the DC would give it (objectGUID, objectSid from the DC's RID
 * pool, sAMAccountType, the linked attributes' back links such as memberOf).
 *
 * `batch_mode` turns off ldb's per-object sub-transactions: without it each add copies every
 * index list it touches (all users share objectClass and objectCategory), so the cost of an add
 * grows with the directory: 5,000 users took 35 s, with it 8 s. An error then leaves the
 * transaction unusable, but ldbadd stops at the first error and commits nothing (exit 68 for a
 * duplicate sAMAccountName), and this directory is thrown away with it.
 */
export async function loadLdif(
  programs: SambaPrograms,
  dir: string,
  ldif: string | Iterable<string>,
): Promise<void> {
  const { samLdb, conf } = sambaPaths(dir);
  const loaded = await run(
    programs.ldbadd,
    ["-o", "batch_mode:1", "-H", samLdb, `--configfile=${conf}`],
    ldif,
  );
  if (loaded.code !== 0) {
    throw new Error(`ldbadd could not load the seed into ${samLdb}: ${tail(loaded.output)}`);
  }
}

/** The DN of `cn` under `parent` (the domain's base unless given). */
export function adDN(cn: string, parent: string = SAMBA_BASE): string {
  return `CN=${escapeDNValue(cn)},${parent}`;
}

/** An organizational unit, `OU=<name>` under `parent`. */
export function adOrganizationalUnit(name: string, parent: string = SAMBA_BASE): LdifEntry {
  return {
    dn: `OU=${escapeDNValue(name)},${parent}`,
    attributes: { objectClass: ["organizationalUnit"], ou: [name] },
  };
}

/**
 * A user: `objectClass: user` and a sAMAccountName are all AD requires (the DC adds the rest;
 * without a password the account is disabled, userAccountControl 546). `cn` defaults to the
 * account name; `attributes` come after, e.g. `{ givenName: ["Ada"], sn: ["Lovelace"] }`.
 */
export function adUser(
  sAMAccountName: string,
  options: {
    parent?: string;
    cn?: string;
    attributes?: Readonly<Record<string, readonly (string | Buffer)[]>>;
  } = {},
): LdifEntry {
  return {
    dn: adDN(options.cn ?? sAMAccountName, options.parent),
    attributes: {
      objectClass: ["user"],
      sAMAccountName: [sAMAccountName],
      ...options.attributes,
    },
  };
}

/** A global security group (AD's default group type) with `members`, DNs of entries loaded before it. */
export function adGroup(
  sAMAccountName: string,
  members: readonly string[],
  options: {
    parent?: string;
    cn?: string;
    attributes?: Readonly<Record<string, readonly (string | Buffer)[]>>;
  } = {},
): LdifEntry {
  return {
    dn: adDN(options.cn ?? sAMAccountName, options.parent),
    attributes: {
      objectClass: ["group"],
      sAMAccountName: [sAMAccountName],
      ...(members.length > 0 ? { member: members } : {}),
      ...options.attributes,
    },
  };
}
