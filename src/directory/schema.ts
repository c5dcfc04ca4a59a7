import type { DirectoryClient } from "./client.ts";
import type { DirectoryEntry } from "./entry.ts";
import { DirectoryError } from "./errors.ts";
import { eq } from "./filter.ts";
import type { ShownAs } from "./shown-values.ts";

/** What annal needs to know of one attribute type from the directory's subschema. */
export interface AttributeType {
  readonly oid: string;
  /** Every name, the canonical (first) one first: `["cn", "commonName"]`. */
  readonly names: readonly string[];
  readonly syntax: string | undefined;
  readonly singleValued: boolean;
  /** `USAGE` other than userApplications, or `NO-USER-MODIFICATION`. */
  readonly operational: boolean;
  /** Values are bytes (JPEG, certificates, octet strings): served as base64. */
  readonly binary: boolean;
  /** The JSON type of one value. */
  readonly jsonType: "string" | "integer" | "boolean";
  /** `date-time` for generalized time. */
  readonly format?: "date-time";
  /**
   * Binary values the channels show as Active Directory's tools do: `sid` for AD's SID syntax
   * (attributeSyntax 2.5.5.17), `guid` for objectGUID. The log keeps the bytes.
   */
  readonly shown?: ShownAs;
}

export interface ObjectClass {
  readonly names: readonly string[];
  readonly must: readonly string[];
  readonly may: readonly string[];
  readonly superiors: readonly string[];
}

const SYNTAX = {
  binary: "1.3.6.1.4.1.1466.115.121.1.5",
  boolean: "1.3.6.1.4.1.1466.115.121.1.7",
  certificate: "1.3.6.1.4.1.1466.115.121.1.8",
  certificateList: "1.3.6.1.4.1.1466.115.121.1.9",
  certificatePair: "1.3.6.1.4.1.1466.115.121.1.10",
  generalizedTime: "1.3.6.1.4.1.1466.115.121.1.24",
  integer: "1.3.6.1.4.1.1466.115.121.1.27",
  jpeg: "1.3.6.1.4.1.1466.115.121.1.28",
  octetString: "1.3.6.1.4.1.1466.115.121.1.40",
  audio: "1.3.6.1.4.1.1466.115.121.1.4",
  fax: "1.3.6.1.4.1.1466.115.121.1.23",
} as const;

const BINARY_SYNTAXES = new Set<string>([
  SYNTAX.binary,
  SYNTAX.certificate,
  SYNTAX.certificateList,
  SYNTAX.certificatePair,
  SYNTAX.jpeg,
  SYNTAX.octetString,
  SYNTAX.audio,
  SYNTAX.fax,
]);

/**
 * The directory's schema, read once from its subschema entry: canonical attribute names,
 * which attributes are binary, single-valued or operational, and object classes.
 */
export class DirectorySchema {
  private readonly byName = new Map<string, AttributeType>();
  readonly attributeTypes: readonly AttributeType[];
  readonly objectClasses: ReadonlyMap<string, ObjectClass>;

  constructor(
    attributeTypes: readonly AttributeType[],
    objectClasses: readonly ObjectClass[] = [],
  ) {
    this.attributeTypes = attributeTypes;
    for (const type of attributeTypes) {
      for (const name of type.names) this.byName.set(name.toLowerCase(), type);
      this.byName.set(type.oid, type);
    }
    const classes = new Map<string, ObjectClass>();
    for (const oc of objectClasses)
      for (const name of oc.names) classes.set(name.toLowerCase(), oc);
    this.objectClasses = classes;
  }

  /** The attribute type for a name, alias or OID (options such as `;binary` ignored). */
  attribute(name: string): AttributeType | undefined {
    return this.byName.get((name.split(";")[0] ?? name).toLowerCase());
  }

  /** The canonical spelling of an attribute name (`commonname` → `cn`), or undefined. */
  canonical(name: string): string | undefined {
    return this.attribute(name)?.names[0];
  }

  isBinary(name: string): boolean {
    return name.toLowerCase().includes(";binary") || (this.attribute(name)?.binary ?? false);
  }

  isOperational(name: string): boolean {
    return this.attribute(name)?.operational ?? false;
  }

  /** How the channels show the attribute's binary values (`sid`, `guid`), if not as base64. */
  shownAs(name: string): ShownAs | undefined {
    return this.attribute(name)?.shown;
  }

  /** Every attribute an entry of these object classes may hold (MUST and MAY, with superiors). */
  attributesOf(objectClassNames: readonly string[]): string[] {
    const result = new Set<string>();
    const visit = (name: string, seen: Set<string>) => {
      const oc = this.objectClasses.get(name.toLowerCase());
      if (!oc || seen.has(name.toLowerCase())) return;
      seen.add(name.toLowerCase());
      for (const a of [...oc.must, ...oc.may]) result.add(this.canonical(a) ?? a);
      for (const sup of oc.superiors) visit(sup, seen);
    };
    for (const name of objectClassNames) visit(name, new Set());
    return [...result];
  }

  /** Binary attribute names, to ask the client for Buffers. */
  binaryAttributes(): string[] {
    return this.attributeTypes.filter((t) => t.binary).flatMap((t) => t.names);
  }
}

/** Where the schema is when the root DSE names none (the name OpenLDAP gives it). */
const FALLBACK_SUBSCHEMA = "cn=Subschema";

/**
 * Reads the schema from the entry the root DSE names in `subschemaSubentry` (RFC 4512 §5.1):
 * `cn=Subschema` on OpenLDAP, `cn=schema` on 389, `CN=Aggregate,CN=Schema,CN=Configuration,…`
 * on Active Directory. `cn=Subschema` is read only when the root DSE names none. A read that
 * finds no attribute types throws `ANNAL_DIRECTORY_SCHEMA_EMPTY`: without them every attribute
 * would pass for a single string, binary values would be mangled, and nothing would say so.
 */
export async function loadDirectorySchema(directory: DirectoryClient): Promise<DirectorySchema> {
  const rootDSE = await directory.get("", {
    attributes: ["subschemaSubentry", "schemaNamingContext"],
  });
  const named = rootDSE && asStrings(valuesOf(rootDSE, "subschemaSubentry"))[0];
  // Active Directory names its schema partition; the subschema gives SIDs the octet string
  // syntax of any bytes, and only the partition's attributeSyntax tells a SID (2.5.5.17).
  const schemaPartition = rootDSE && asStrings(valuesOf(rootDSE, "schemaNamingContext"))[0];
  const dn = named || FALLBACK_SUBSCHEMA;
  const entry = await directory.get(dn, { attributes: ["attributeTypes", "objectClasses"] });
  const attributeTypes = entry ? asStrings(valuesOf(entry, "attributeTypes")) : [];
  if (attributeTypes.length === 0) {
    const where = named
      ? `${JSON.stringify(dn)}, the entry the root DSE names in subschemaSubentry`
      : `${JSON.stringify(dn)} (the root DSE names no subschemaSubentry)`;
    throw new DirectoryError(
      "ANNAL_DIRECTORY_SCHEMA_EMPTY",
      `the directory's schema read found no attribute types in ${where}: ${
        entry
          ? "the entry shows annal's bind DN none"
          : "there is no such entry, or annal's bind DN may not read it"
      }`,
      { operation: "get", dn, status: 502 },
    );
  }
  const objectClasses = entry ? asStrings(valuesOf(entry, "objectClasses")) : [];
  if (!schemaPartition) return parseSubschema(attributeTypes, objectClasses);
  return parseSubschema(attributeTypes, objectClasses, {
    activeDirectory: true,
    sidAttributes: await sidAttributesOf(directory, schemaPartition),
  });
}

/** AD's SID syntax (MS-ADTS 3.1.1.2.2.2: attributeSyntax 2.5.5.17, oMSyntax 4). */
const SID_SYNTAX = "2.5.5.17";

/** The lDAPDisplayName of every attribute of SID syntax in AD's schema partition. */
async function sidAttributesOf(directory: DirectoryClient, partition: string): Promise<string[]> {
  const names: string[] = [];
  for await (const page of directory.search(partition, {
    scope: "one",
    filter: eq("attributeSyntax", SID_SYNTAX),
    attributes: ["lDAPDisplayName"],
  })) {
    for (const found of page) names.push(...asStrings(valuesOf(found, "lDAPDisplayName")));
  }
  return names;
}

/** An attribute's values by name, whatever case the server spells the name in. */
function valuesOf(entry: DirectoryEntry, name: string): string[] | Buffer[] | undefined {
  const key = Object.keys(entry.attributes).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : entry.attributes[key];
}

function asStrings(values: string[] | Buffer[] | undefined): string[] {
  return (values ?? []).map((v) => (Buffer.isBuffer(v) ? v.toString("utf8") : v));
}

/** Parses RFC 4512 attribute type and object class descriptions, resolving `SUP` chains. */
export function parseSubschema(
  attributeTypeTexts: readonly string[],
  objectClassTexts: readonly string[] = [],
  ad: {
    /** The schema is Active Directory's: its binary objectGUID is shown as GUID text. */
    readonly activeDirectory?: boolean;
    /** Attributes of AD's SID syntax (from the schema partition), shown as `S-1-…`. */
    readonly sidAttributes?: readonly string[];
  } = {},
): DirectorySchema {
  const sids = new Set((ad.sidAttributes ?? []).map((name) => name.toLowerCase()));
  const shownAs = (d: Description, binary: boolean): ShownAs | undefined => {
    if (!binary) return undefined;
    const names = d.names.map((n) => n.toLowerCase());
    if (names.some((n) => sids.has(n))) return "sid";
    if (ad.activeDirectory && names.includes("objectguid")) return "guid";
    return undefined;
  };
  const raw = attributeTypeTexts.map(parseDescription);
  const byName = new Map<string, Description>();
  for (const d of raw) for (const name of [...d.names, d.oid]) byName.set(name.toLowerCase(), d);
  const inherited = (d: Description, key: "syntax", depth = 0): string | undefined =>
    d[key] ?? (d.sup && depth < 16 ? inheritedOf(d.sup, key, depth + 1) : undefined);
  const inheritedOf = (name: string, key: "syntax", depth: number) => {
    const sup = byName.get(name.toLowerCase());
    return sup ? inherited(sup, key, depth) : undefined;
  };
  const types = raw.map((d): AttributeType => {
    const syntax = inherited(d, "syntax");
    const base = {
      oid: d.oid,
      names: d.names.length > 0 ? d.names : [d.oid],
      syntax,
      singleValued: d.singleValue,
      // objectClass is what an entry is (RFC 4512 §3.3), whatever a server says of who may
      // change it: AD marks it NO-USER-MODIFICATION, and filed as operational every AD
      // entry's type was null.
      operational:
        !d.names.some((n) => n.toLowerCase() === "objectclass") &&
        (d.noUserModification || (d.usage !== undefined && d.usage !== "userApplications")),
      binary: syntax !== undefined && BINARY_SYNTAXES.has(syntax),
    };
    const shown = shownAs(d, base.binary);
    if (shown !== undefined) return { ...base, jsonType: "string", shown };
    if (syntax === SYNTAX.integer) return { ...base, jsonType: "integer" };
    if (syntax === SYNTAX.boolean) return { ...base, jsonType: "boolean" };
    if (syntax === SYNTAX.generalizedTime)
      return { ...base, jsonType: "string", format: "date-time" };
    return { ...base, jsonType: "string" };
  });
  const classes = objectClassTexts.map((text) => {
    const d = parseDescription(text);
    return { names: d.names, must: d.must, may: d.may, superiors: d.sups };
  });
  return new DirectorySchema(types, classes);
}

interface Description {
  oid: string;
  names: string[];
  sup: string | undefined;
  sups: string[];
  syntax: string | undefined;
  singleValue: boolean;
  noUserModification: boolean;
  usage: string | undefined;
  must: string[];
  may: string[];
}

/** Tokenises `( oid NAME ( 'a' 'b' ) SUP x SYNTAX 1.2.3{64} SINGLE-VALUE ... )`, quoted SYNTAX too. */
function parseDescription(text: string): Description {
  const tokens = text.match(/'(?:[^'\\]|\\.)*'|\(|\)|\$|[^\s()$']+/g) ?? [];
  const d: Description = {
    oid: "",
    names: [],
    sup: undefined,
    sups: [],
    syntax: undefined,
    singleValue: false,
    noUserModification: false,
    usage: undefined,
    must: [],
    may: [],
  };
  let i = tokens[0] === "(" ? 1 : 0;
  d.oid = tokens[i++] ?? "";
  const list = (): string[] => {
    if (tokens[i] !== "(") return [unquote(tokens[i++] ?? "")];
    i++;
    const items: string[] = [];
    while (i < tokens.length && tokens[i] !== ")") {
      const token = tokens[i++]!;
      if (token !== "$") items.push(unquote(token));
    }
    i++;
    return items;
  };
  while (i < tokens.length) {
    const keyword = tokens[i++];
    switch (keyword) {
      case "NAME":
        d.names = list();
        break;
      case "SUP":
        d.sups = list();
        d.sup = d.sups[0];
        break;
      case "SYNTAX":
        // AD quotes the OID (`SYNTAX '1.3.6.1.4.1.1466.115.121.1.40'`); RFC 4512 does not
        d.syntax = unquote(tokens[i++] ?? "").replace(/\{\d+\}$/, "");
        break;
      case "SINGLE-VALUE":
        d.singleValue = true;
        break;
      case "NO-USER-MODIFICATION":
        d.noUserModification = true;
        break;
      case "USAGE":
        d.usage = tokens[i++];
        break;
      case "MUST":
        d.must = list();
        break;
      case "MAY":
        d.may = list();
        break;
      case "DESC":
      case "EQUALITY":
      case "ORDERING":
      case "SUBSTR":
        i++;
        break;
      default:
        break; // flags (OBSOLETE, COLLECTIVE, STRUCTURAL, ...) and extensions are not needed
    }
  }
  return d;
}

const unquote = (token: string) => (token.startsWith("'") ? token.slice(1, -1) : token);
