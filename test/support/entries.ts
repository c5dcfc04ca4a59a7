import { randomUUID } from "node:crypto";
import { createPatch } from "rfc6902";
import type { Pool } from "../../src/db/index.ts";
import {
  ENTRY_EVENT,
  entryStream,
  type AttributeMap,
  type EntryChange,
  type EntryState,
} from "../../src/events/index.ts";
import { Projector, schemaNames, tableIn, waitForProjection } from "../../src/projector/index.ts";
import type { EventStore, LogPosition } from "../../src/store/index.ts";
import { ENTRIES, indexEntryValues } from "../../projections/entries/index.ts";
import { allProjections } from "../../projections/index.ts";

const quiet = { info() {}, warn() {}, error() {} };

/** `2026-11-22T04:35:00.000Z` → `20261122043500Z`, as the directory writes times. */
export function generalizedTime(date: Date): string {
  return date.toISOString().replace(/[-:T]|\.\d{3}/g, "");
}

/**
 * `count` people (`uid=w<g>,ou=people,dc=example,dc=org`, type user) written straight into
 * the `entries` projection, as the search benchmarks seed it, and indexed by the projection's
 * own statements as a batch of the projector indexes them. `attributes` is a SQL expression of
 * the row number `g` (1..count) giving each entry's attributes as jsonb. Answers their uuids.
 */
export async function seedPeople(pool: Pool, count: number, attributes: string): Promise<string[]> {
  const people = "ou=people,dc=example,dc=org";
  const inserted = await pool.query<{ entry_uuid: string }>(
    `INSERT INTO ${ENTRIES}
       (entry_uuid, type, dn, dn_norm, attributes, operational, created_at, modified_at, version,
        created_position, position, transaction_id)
     SELECT gen_random_uuid(), 'user', 'uid=w' || g || ',${people}', 'uid=w' || g || ',${people}',
            ${attributes}, '{}', now(), now(), 1, g, g, '1'::xid8
       FROM generate_series(1, $1::int) AS g
     RETURNING entry_uuid`,
    [count],
  );
  const uuids = inserted.rows.map((row) => row.entry_uuid);
  await indexEntryValues(pool, tableIn(schemaNames("entries").live), uuids);
  return uuids;
}

export interface NewEntry {
  readonly dn: string;
  /** The configured type it belongs to; null for none. */
  readonly type: string | null;
  readonly attributes: AttributeMap;
  readonly uuid?: string;
}

export interface ChangeOptions {
  /** When the directory says it happened (`occurred_at`). Default: now. */
  readonly at?: Date;
  /** Who made it. Default `cn=admin,dc=example,dc=org`. */
  readonly actor?: string | null;
  /** Attributes the change touched whose values were redacted. */
  readonly redacted?: readonly string[];
}

/**
 * Writes directory history the way capture does: EntryAdded, EntryModified, EntryRenamed and
 * EntryDeleted events with before and after states, the RFC 6902 patch between them and the
 * touched attributes, one stream per entry; and runs the projector so the REST channel and
 * the history queries see them (`settled`).
 *
 * @example
 * const history = await EntryHistory.start(t, pool, store);
 * const alice = await history.add({ dn: "uid=alice,ou=people,dc=example,dc=org", type: "user",
 *   attributes: { objectClass: ["inetOrgPerson"], uid: ["alice"], cn: ["Alice"], sn: ["Liddell"] } });
 * await history.modify(alice, { mail: ["alice@example.org"] });
 * await history.settled();
 */
export class EntryHistory {
  readonly store: EventStore;
  readonly pool: Pool;
  readonly states = new Map<string, EntryState>();
  #last: LogPosition | undefined;

  constructor(pool: Pool, store: EventStore) {
    this.pool = pool;
    this.store = store;
  }

  /** A builder with a running projector, stopped when the test ends. */
  static async start(
    t: { teardown(fn: () => unknown): void },
    pool: Pool,
    store: EventStore,
  ): Promise<EntryHistory> {
    const projector = await Projector.start({
      pool,
      projections: allProjections,
      log: quiet,
      pollInterval: 50,
    });
    t.teardown(() => projector.stop());
    return new EntryHistory(pool, store);
  }

  async add(entry: NewEntry, options: ChangeOptions = {}): Promise<string> {
    const uuid = entry.uuid ?? randomUUID();
    const at = options.at ?? new Date();
    const time = generalizedTime(at);
    const actor = options.actor === undefined ? "cn=admin,dc=example,dc=org" : options.actor;
    const after: EntryState = {
      dn: entry.dn,
      type: entry.type,
      attributes: sorted(entry.attributes),
      operational: {
        createTimestamp: [time],
        creatorsName: [actor ?? ""],
        entryUUID: [uuid],
        modifyTimestamp: [time],
        modifiersName: [actor ?? ""],
      },
    };
    await this.#append(uuid, ENTRY_EVENT.added, "add", null, after, options);
    return uuid;
  }

  /** Replaces the named attributes (an empty list removes one), or applies `change`. */
  async modify(
    uuid: string,
    change: AttributeMap | ((attributes: AttributeMap) => AttributeMap),
    options: ChangeOptions = {},
  ): Promise<void> {
    const before = this.#state(uuid);
    let attributes: AttributeMap;
    if (typeof change === "function") {
      attributes = change(structuredClone(before.attributes));
    } else {
      attributes = { ...before.attributes };
      for (const [name, values] of Object.entries(change)) {
        if (values.length === 0) delete attributes[name];
        else attributes[name] = values;
      }
    }
    await this.#append(
      uuid,
      ENTRY_EVENT.modified,
      "modify",
      before,
      this.#touched(before, { attributes }, options),
      options,
    );
  }

  async rename(
    uuid: string,
    newDn: string,
    options: ChangeOptions & { type?: string | null; attributes?: AttributeMap } = {},
  ): Promise<void> {
    const before = this.#state(uuid);
    const after = this.#touched(
      before,
      {
        dn: newDn,
        attributes: options.attributes ?? before.attributes,
        ...(options.type === undefined ? {} : { type: options.type }),
      },
      options,
    );
    await this.#append(uuid, ENTRY_EVENT.renamed, "modrdn", before, after, options, before.dn);
  }

  async delete(uuid: string, options: ChangeOptions = {}): Promise<void> {
    const before = this.#state(uuid);
    await this.#append(uuid, ENTRY_EVENT.deleted, "delete", before, null, options);
  }

  /** Resolves once every projection has applied everything appended so far. */
  async settled(): Promise<void> {
    if (!this.#last) return;
    for (const projection of allProjections) {
      await waitForProjection(this.pool, projection.name, this.#last, 10_000);
    }
  }

  #state(uuid: string): EntryState {
    const state = this.states.get(uuid);
    if (!state) throw new Error(`no entry ${uuid} in this history (deleted, or never added)`);
    return state;
  }

  #touched(
    before: EntryState,
    next: { dn?: string; type?: string | null; attributes: AttributeMap },
    options: ChangeOptions,
  ): EntryState {
    const time = generalizedTime(options.at ?? new Date());
    const actor = options.actor === undefined ? "cn=admin,dc=example,dc=org" : options.actor;
    return {
      dn: next.dn ?? before.dn,
      type: next.type === undefined ? before.type : next.type,
      attributes: sorted(next.attributes),
      operational: { ...before.operational, modifyTimestamp: [time], modifiersName: [actor ?? ""] },
    };
  }

  async #append(
    uuid: string,
    type: string,
    changeType: EntryChange["changeType"],
    before: EntryState | null,
    after: EntryState | null,
    options: ChangeOptions,
    oldDn?: string,
  ): Promise<void> {
    const a = before?.attributes ?? {};
    const b = after?.attributes ?? {};
    const touched = [...new Set([...Object.keys(a), ...Object.keys(b)])]
      .filter((name) => JSON.stringify(a[name]) !== JSON.stringify(b[name]))
      .concat(options.redacted ?? [])
      .sort();
    const data: EntryChange = {
      entryUUID: uuid,
      changeType,
      dn: (after ?? before)!.dn,
      ...(oldDn === undefined ? {} : { oldDn }),
      before,
      after,
      patch: createPatch(a, b),
      attributes: touched,
      redacted: [...(options.redacted ?? [])],
    };
    const actor = options.actor === undefined ? "cn=admin,dc=example,dc=org" : options.actor;
    const { events } = await this.store.appendToStream(entryStream(uuid), [
      {
        type,
        data,
        metadata: { actor, source: "test" },
        ...(options.at ? { occurredAt: options.at } : {}),
      },
    ]);
    const event = events[0]!;
    this.#last = { transactionId: event.transactionId, position: event.position };
    if (after) this.states.set(uuid, after);
    else this.states.delete(uuid);
  }
}

function sorted(attributes: AttributeMap): AttributeMap {
  return Object.fromEntries(
    Object.entries(attributes).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)),
  );
}
