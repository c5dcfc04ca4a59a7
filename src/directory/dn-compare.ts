import {
  berString,
  formatDN,
  formatRDN,
  InvalidDNError,
  parseDN,
  type AttributeTypeAndValue,
  type DN,
  type RDN,
} from "./dn-syntax.ts";

/**
 * Distinguished names as identities: the normalised form annal compares and stores them by,
 * equality, and a DN's place in the tree (its parent, its own RDN, what lies below a base).
 */

const TYPE_ALIASES: Readonly<Record<string, string>> = {
  "2.5.4.3": "cn",
  commonname: "cn",
  "2.5.4.4": "sn",
  surname: "sn",
  "0.9.2342.19200300.100.1.1": "uid",
  userid: "uid",
  "0.9.2342.19200300.100.1.25": "dc",
  domaincomponent: "dc",
  "2.5.4.11": "ou",
  organizationalunitname: "ou",
  "2.5.4.10": "o",
  organizationname: "o",
  "2.5.4.6": "c",
  countryname: "c",
  "2.5.4.7": "l",
  localityname: "l",
  "2.5.4.8": "st",
  stateorprovincename: "st",
  "2.5.4.9": "street",
  streetaddress: "street",
  "0.9.2342.19200300.100.1.3": "mail",
  rfc822mailbox: "mail",
};

/**
 * Attributes whose equality rule ignores case (caseIgnoreMatch, caseIgnoreIA5Match, or DN and
 * numeric rules where case cannot matter). Values of any other type compare exactly, after
 * insignificant-space handling, because folding a case-exact value could merge two entries.
 */
const CASE_IGNORE = new Set([
  "cn",
  "sn",
  "givenname",
  "initials",
  "displayname",
  "uid",
  "dc",
  "ou",
  "o",
  "c",
  "l",
  "st",
  "street",
  "mail",
  "title",
  "description",
  "employeenumber",
  "departmentnumber",
  "employeetype",
  "businesscategory",
  "postalcode",
  "telephonenumber",
  "mobile",
  "name",
  "gidnumber",
  "uidnumber",
  "entryuuid",
  "member",
  "uniquemember",
  "owner",
  "manager",
  "seealso",
  "serialnumber",
  "carlicense",
  "homedirectory",
  "loginshell",
  "iphostnumber",
  "macaddress",
  "reqstart",
  "krbprincipalname",
  "samaccountname",
  "userprincipalname",
  "objectclass",
]);

function normalType(type: string): string {
  const lower = type.toLowerCase();
  return TYPE_ALIASES[lower] ?? lower;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** RFC 4518 in short: compatibility forms folded, spaces trimmed and runs collapsed. */
function normalValue(type: string, value: string): string {
  if (PRINTABLE_ASCII.test(value)) {
    // NFKC leaves printable ASCII as it is, and so does lowercasing it
    const spaced = value.trim().replace(/ {2,}/g, " ");
    return CASE_IGNORE.has(type) ? spaced.toLowerCase() : spaced;
  }
  const spaced = value.normalize("NFKC").trim().replace(/\s+/g, " ");
  // lowercasing can leave combining marks out of canonical order (İ → i + U+0307): normalise again
  return CASE_IGNORE.has(type) ? spaced.toLowerCase().normalize("NFKC") : spaced;
}

function normalRDN(rdn: RDN): AttributeTypeAndValue[] {
  return rdn
    .map((ava) => {
      const type = normalType(ava.type);
      if (ava.ber === undefined) return { type, value: normalValue(type, ava.value) };
      // a #hex value compares by its string content when it has one, else by its bytes
      const text = berString(ava.ber);
      return text === undefined
        ? { type, value: ava.value, ber: ava.ber }
        : { type, value: normalValue(type, text) };
    })
    .sort((a, b) => (a.type === b.type ? compare(a.value, b.value) : compare(a.type, b.type)));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function asDN(dn: string | DN): DN {
  return typeof dn === "string" ? parseDN(dn) : dn;
}

/**
 * The form annal stores and compares DNs in: types lowercased (and `2.5.4.3`/`commonName` → `cn`),
 * values of case-ignore types lowercased, spaces made insignificant, the AVAs of a multi-valued
 * RDN sorted, no spaces around separators.
 *
 * @example normalizeDN("UID=Alice , OU=People,DC=Example,DC=org") // "uid=alice,ou=people,dc=example,dc=org"
 */
export function normalizeDN(dn: string | DN): string {
  return formatDN(asDN(dn).map(normalRDN));
}

export function dnEquals(a: string | DN, b: string | DN): boolean {
  return normalizeDN(a) === normalizeDN(b);
}

/** True when `dn` is strictly below `base` (`base` itself is not its own descendant). */
export function isDescendantOf(dn: string | DN, base: string | DN): boolean {
  const entry = asDN(dn).map(normalRDN).map(formatRDN);
  const top = asDN(base).map(normalRDN).map(formatRDN);
  if (entry.length <= top.length) return false;
  const offset = entry.length - top.length;
  return top.every((rdn, index) => entry[offset + index] === rdn);
}

/** The DN one level up, as a string; `undefined` for a DN of one RDN or the root DSE. */
export function parentDN(dn: string | DN): string | undefined {
  const parsed = asDN(dn);
  return parsed.length <= 1 ? undefined : formatDN(parsed.slice(1));
}

/** The entry's own RDN as a string, e.g. `uid=alice` for `uid=alice,ou=people,...`. */
export function rdnOf(dn: string | DN): string {
  const first = asDN(dn)[0];
  if (first === undefined) throw new InvalidDNError("", "the root DSE has no RDN");
  return formatRDN(first);
}
