import { readFileSync } from "node:fs";
import { parse as parseToml } from "smol-toml";
import { fixture } from "annal/testing";
import type { WorkflowDirectory } from "annal";
import { sampleEntries } from "../../../src/demo/index.ts";
import type { FilterNode } from "../../../src/filters/index.ts";

/**
 * Fixtures for the demo's workflows under the test driver: the demo organisation (the same
 * entries `npm start` loads into slapd) as an in-memory directory, and outboxes that keep what
 * the workflows send. The end-to-end tests (test/demo/end-to-end.test.ts) run the same
 * workflows over the real slapd.
 */

export const BASE = "dc=example,dc=org";
export const PROSSI = `uid=prossi,ou=engineering,ou=people,${BASE}`;
export const OPERATORS = `cn=annal-operators,ou=roles,${BASE}`;
export const group = (cn: string) => `cn=${cn},ou=groups,${BASE}`;

/** The demo's business calendar, as ops/demo/annal.toml has it (`[[calendars]]`). */
export const OFFICE = (
  parseToml(readFileSync(new URL("../../../ops/demo/annal.toml", import.meta.url), "utf8"))
    .calendars as Record<string, unknown>[]
)[0]!;

/** The demo organisation, made once per test file (each directory copies what it keeps). */
const DEMO_ENTRIES = sampleEntries();

type Values = string[];
type Attributes = Map<string, { name: string; values: Values }>;

/** A directory write, as the test reads it back. */
export interface Write {
  readonly operation: "add" | "modify" | "delete";
  readonly dn: string;
  readonly changes?: readonly { operation: string; attribute: string; values: Values }[];
}

/**
 * The demo directory in memory: `get`, `search` (base, one, sub; and, or, not, eq, present),
 * `add`, `modify` and `delete` with the directory's rules that the workflows meet (names and
 * DNs compared ignoring case, no entry twice, no value twice, a group of names keeps a member).
 */
export class DemoDirectory implements WorkflowDirectory {
  readonly base = BASE;
  readonly writes: Write[] = [];
  readonly #entries = new Map<string, { dn: string; attributes: Attributes }>();

  constructor() {
    for (const entry of DEMO_ENTRIES) {
      const attributes: Attributes = new Map();
      for (const [name, values] of Object.entries(entry.attributes)) {
        if (values.some((value) => Buffer.isBuffer(value))) continue; // photos: not needed here
        attributes.set(name.toLowerCase(), { name, values: values.map(String) });
      }
      this.#entries.set(key(entry.dn), { dn: entry.dn, attributes });
    }
  }

  /** An attribute's values now (empty when the entry or the attribute is not there). */
  values(dn: string, attribute: string): string[] {
    return [...(this.#entries.get(key(dn))?.attributes.get(attribute.toLowerCase())?.values ?? [])];
  }

  has(dn: string): boolean {
    return this.#entries.has(key(dn));
  }

  /** The DNs of the groups `member` is in. */
  groupsOf(member: string): string[] {
    return [...this.#entries.values()]
      .filter((e) => (e.attributes.get("member")?.values ?? []).some((v) => key(v) === key(member)))
      .map((e) => e.dn);
  }

  /** A person not in `groupDn`, for a request to join it. */
  someoneOutside(groupDn: string, department = "engineering"): string {
    const members = new Set(this.values(groupDn, "member").map(key));
    const person = [...this.#entries.values()].find(
      (e) =>
        e.dn.endsWith(`,ou=${department},ou=people,${BASE}`) &&
        !members.has(key(e.dn)) &&
        (e.attributes.get("title")?.values[0] ?? "") !== "Head of department",
    );
    if (!person) throw new Error(`everyone of ${department} is in ${groupDn}`);
    return person.dn;
  }

  async get(dn: string, options: { attributes?: readonly string[] } = {}) {
    const entry = this.#entries.get(key(dn));
    return entry && view(entry, options.attributes);
  }

  async *search(
    base: string,
    options: {
      scope?: "base" | "one" | "sub" | "children";
      filter?: FilterNode;
      attributes?: readonly string[];
      sizeLimit?: number;
    } = {},
  ) {
    const scope = options.scope ?? "sub";
    const found = [...this.#entries.values()]
      .filter((entry) => inScope(entry.dn, base, scope))
      .filter((entry) => !options.filter || matches(entry.attributes, options.filter))
      .slice(0, options.sizeLimit ?? Infinity)
      .map((entry) => view(entry, options.attributes));
    yield found;
  }

  async add(dn: string, attributes: Record<string, unknown>) {
    if (this.#entries.has(key(dn))) throw ldapError("ANNAL_LDAP_ALREADY_EXISTS", dn);
    const stored: Attributes = new Map();
    for (const [name, value] of Object.entries(attributes)) {
      stored.set(name.toLowerCase(), { name, values: list(value) });
    }
    this.#entries.set(key(dn), { dn, attributes: stored });
    this.writes.push({ operation: "add", dn });
  }

  async modify(
    dn: string,
    changes: readonly {
      operation: "add" | "delete" | "replace";
      attribute: string;
      values?: unknown;
    }[],
  ) {
    const entry = this.#entries.get(key(dn));
    if (!entry) throw ldapError("ANNAL_LDAP_NO_SUCH_OBJECT", dn);
    for (const change of changes) {
      const name = change.attribute.toLowerCase();
      const now = entry.attributes.get(name)?.values ?? [];
      const given = list(change.values);
      let next: Values;
      if (change.operation === "replace") next = given;
      else if (change.operation === "add") {
        if (given.some((v) => now.some((n) => n.toLowerCase() === v.toLowerCase()))) {
          throw ldapError("ANNAL_LDAP_VALUE_CONFLICT", dn);
        }
        next = [...now, ...given];
      } else {
        next =
          given.length === 0
            ? []
            : now.filter((n) => !given.some((v) => v.toLowerCase() === n.toLowerCase()));
      }
      if (name === "member" && next.length === 0) {
        throw ldapError("ANNAL_LDAP_SCHEMA_VIOLATION", dn);
      }
      if (next.length === 0) entry.attributes.delete(name);
      else entry.attributes.set(name, { name: change.attribute, values: next });
    }
    this.writes.push({
      operation: "modify",
      dn,
      changes: changes.map((c) => ({ ...c, values: list(c.values) })),
    });
  }

  async modifyDN(): Promise<void> {
    throw new Error("the demo's workflows rename nothing");
  }

  async delete(dn: string) {
    if (!this.#entries.delete(key(dn))) throw ldapError("ANNAL_LDAP_NO_SUCH_OBJECT", dn);
    this.writes.push({ operation: "delete", dn });
  }
}

/** An outbox fixture: keeps what a workflow sends through a `flow.request` binding. */
export function outboxFixture(binding: string) {
  const sent: { payload: unknown; key: string }[] = [];
  return {
    sent,
    fixture: fixture(binding, {
      send(payload: unknown, request: { key: string }) {
        sent.push({ payload, key: request.key });
        return { system: binding, key: request.key, file: "(test)" };
      },
    }),
  };
}

function key(dn: string): string {
  return dn.toLowerCase().replace(/\s*([,=])\s*/g, "$1");
}

function list(values: unknown): Values {
  if (values === undefined) return [];
  return (Array.isArray(values) ? values : [values]).map(String);
}

function inScope(dn: string, base: string, scope: string): boolean {
  const entry = key(dn);
  const root = key(base);
  if (scope === "base") return entry === root;
  if (!entry.endsWith(`,${root}`)) return scope === "sub" && entry === root;
  return scope !== "one" || !entry.slice(0, -root.length - 1).includes(",");
}

function matches(attributes: Attributes, filter: FilterNode): boolean {
  switch (filter.op) {
    case "and":
      return filter.filters.every((f) => matches(attributes, f));
    case "or":
      return filter.filters.some((f) => matches(attributes, f));
    case "not":
      return !matches(attributes, filter.filter);
    case "present":
      return attributes.has(filter.attribute.toLowerCase());
    case "eq": {
      const values = attributes.get(filter.attribute.toLowerCase())?.values ?? [];
      const wanted = filter.attribute.toLowerCase() === "member" ? key(filter.value) : filter.value;
      return values.some((v) =>
        filter.attribute.toLowerCase() === "member"
          ? key(v) === wanted
          : v.toLowerCase() === wanted.toLowerCase(),
      );
    }
    default:
      throw new Error(`the fixture directory does not compare ${filter.op}`);
  }
}

function view(
  entry: { dn: string; attributes: Attributes },
  wanted: readonly string[] | undefined,
): { dn: string; attributes: Record<string, string[]> } {
  const attributes: Record<string, string[]> = {};
  for (const { name, values } of entry.attributes.values()) {
    if (wanted && !wanted.some((w) => w.toLowerCase() === name.toLowerCase())) continue;
    attributes[name] = [...values];
  }
  return { dn: entry.dn, attributes };
}

function ldapError(code: string, dn: string): Error {
  return Object.assign(new Error(`${code}: ${dn}`), { code });
}
