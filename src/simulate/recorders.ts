import type { Pool } from "../db/index.ts";
import {
  isDescendantOf,
  matchesFilter,
  normalizeDN,
  parentDN,
  type DirectoryEntry,
  type SearchOptions,
} from "../directory/index.ts";
import { directoryAt, type DirectoryAt } from "../history/index.ts";
import {
  databaseClock,
  type BindingDeclaration,
  type StepCause,
  type WorkflowDirectory,
} from "../workflow/index.ts";
import { requestedModify, type DirectoryWrite } from "./writes.ts";

/** A call a simulated step made to a binding other than the directory. */
export interface BindingCall {
  readonly binding: string;
  readonly method: string;
  readonly arguments: unknown;
  readonly at: string;
}

/** What the recorders noted, by instance; each step's cause names its `StepScheduled` event. */
export interface Recording {
  readonly writes: {
    readonly instanceId: string;
    readonly stepEvent: string;
    write: DirectoryWrite;
  }[];
  readonly calls: { readonly instanceId: string; readonly stepEvent: string; call: BindingCall }[];
}

/**
 * The bindings of a simulation: every one a recorder. The directory reads the past (the
 * history projections at the simulated moment: the scratch database's clock) and notes its
 * writes instead of making them; any other binding notes each call and answers null.
 */
export class Recorders {
  readonly recording: Recording = { writes: [], calls: [] };
  readonly #past: (at: Date) => Promise<DirectoryAt>;
  readonly #scratch: Pool;
  readonly #base: string;
  #snapshot: DirectoryAt | undefined;
  /**
   * When the deployed counterpart of a simulated instance (by the simulated instance's id)
   * wrote to the directory, as capture recorded it; none by default. See `#readMoment`.
   */
  deployedWrites: (instanceId: string) => readonly Date[] = () => [];

  /**
   * `past` is the live database, whose history projection gives the directory at a moment, or
   * a function that gives it (the demo's seeded past, before any projection has it).
   */
  constructor(past: Pool | ((at: Date) => Promise<DirectoryAt>), scratch: Pool, base: string) {
    this.#past = typeof past === "function" ? past : (at) => directoryAt(past, at);
    this.#scratch = scratch;
    this.#base = base;
  }

  /** `BindingSources.replace`: the recorder for `binding` in the step `cause`. */
  readonly replace = (binding: string, declaration: BindingDeclaration, cause: StepCause) =>
    declaration.kind === "directory" ? this.#directory(cause) : this.#service(binding, cause);

  #directory(cause: StepCause): WorkflowDirectory {
    const write = async (made: (at: Date, as: string | null) => DirectoryWrite, as?: string) => {
      const at = await databaseClock(this.#scratch);
      this.recording.writes.push({
        instanceId: cause.instanceId,
        stepEvent: cause.eventId,
        write: made(at, as ?? cause.actingFor?.dn ?? null),
      });
    };
    const base =
      (operation: DirectoryWrite["operation"], dn: string, attributes: string[]) =>
      (at: Date, as: string | null): DirectoryWrite => ({
        operation,
        dn,
        attributes,
        step: null,
        as,
        at: at.toISOString(),
      });
    return {
      base: this.#base,
      get: async (dn, options) => {
        const found = (await this.#entries(cause.instanceId)).find((entry) => sameDN(entry.dn, dn));
        return found && pick(found, options?.attributes);
      },
      search: (searchBase, options) => this.#search(cause.instanceId, searchBase, options),
      add: (dn, attributes, options) =>
        write(base("add", dn, Object.keys(attributes)), options?.as),
      modify: (dn, changes, options) =>
        write((at, as) => requestedModify(dn, changes, null, as, at), options?.as),
      modifyDN: (dn, _newRDN, options) => write(base("modrdn", dn, []), options?.as),
      delete: (dn, options) => write(base("delete", dn, []), options?.as),
    };
  }

  #service(binding: string, cause: StepCause): unknown {
    const record = async (method: string, args: unknown[]) => {
      const at = await databaseClock(this.#scratch);
      this.recording.calls.push({
        instanceId: cause.instanceId,
        stepEvent: cause.eventId,
        call: {
          binding,
          method,
          arguments: JSON.parse(JSON.stringify(args)) as unknown,
          at: at.toISOString(),
        },
      });
      return null;
    };
    return new Proxy(
      {},
      {
        // Not a promise (`then`), nor anything a symbol asks: every other name is a method.
        get: (_target, name) =>
          typeof name === "symbol" || name === "then"
            ? undefined
            : (...args: unknown[]) => record(name, args),
      },
    );
  }

  async *#search(
    instanceId: string,
    searchBase: string,
    options: SearchOptions = {},
  ): AsyncIterable<readonly DirectoryEntry[]> {
    const scope = options.scope ?? "sub";
    const found = (await this.#entries(instanceId))
      .filter((entry) => inScope(entry.dn, searchBase, scope))
      .filter(
        (entry) => options.filter === undefined || matchesFilter(options.filter, entry.attributes),
      )
      .slice(0, options.sizeLimit ?? Number.POSITIVE_INFINITY)
      .map((entry) => pick(entry, options.attributes));
    yield found;
  }

  /**
   * The moment a step of `instanceId` reads the directory at: the simulated moment, unless
   * the deployed instance's own write was stamped in that moment's second, at or before it.
   * A directory stamps a change with whole seconds (slapd's reqStart, modifyTimestamp), so the
   * write the deployed step made a few milliseconds after an answer at 10:00:00.400 is
   * recorded at 10:00:00, and the directory "at" the answer would already hold it: the
   * simulated step would find its own work done (a member already added) and write nothing.
   * It reads just before that write instead, as the deployed step found the directory.
   */
  #readMoment(instanceId: string, now: Date): Date {
    const second = Math.floor(now.getTime() / 1000) * 1000;
    const own = this.deployedWrites(instanceId)
      .map((at) => at.getTime())
      .filter((at) => at >= second && at <= now.getTime());
    return own.length === 0 ? now : new Date(Math.min(...own) - 1);
  }

  /** The directory at the moment `instanceId` reads it, read again only once it changed. */
  async #entries(instanceId: string): Promise<DirectoryAt["entries"]> {
    const at = this.#readMoment(instanceId, await databaseClock(this.#scratch));
    const held = this.#snapshot;
    if (
      !held ||
      at.getTime() < held.at.getTime() ||
      (held.until !== null && at.getTime() >= held.until.getTime())
    ) {
      this.#snapshot = await this.#past(at);
    }
    return this.#snapshot!.entries;
  }
}

function inScope(dn: string, base: string, scope: NonNullable<SearchOptions["scope"]>): boolean {
  switch (scope) {
    case "base":
      return sameDN(dn, base);
    case "one": {
      const parent = parentDN(dn);
      return parent !== undefined && sameDN(parent, base);
    }
    case "children":
      return safely(() => isDescendantOf(dn, base));
    case "sub":
      return sameDN(dn, base) || safely(() => isDescendantOf(dn, base));
  }
}

function pick(
  entry: { readonly dn: string; readonly attributes: Record<string, string[]> },
  attributes: readonly string[] | undefined,
): DirectoryEntry {
  const wanted =
    attributes === undefined || attributes.includes("*")
      ? undefined
      : new Set(attributes.map((a) => a.toLowerCase()));
  const picked: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(entry.attributes)) {
    if (!wanted || wanted.has(name.toLowerCase())) picked[name] = [...values];
  }
  return { dn: entry.dn, attributes: picked };
}

function sameDN(a: string, b: string): boolean {
  return safely(() => normalizeDN(a) === normalizeDN(b));
}

function safely(test: () => boolean): boolean {
  try {
    return test();
  } catch {
    return false;
  }
}
