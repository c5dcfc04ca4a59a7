import { createHash } from "node:crypto";

import { type BusinessCalendar, Calendars, calendarsOf } from "../time/index.ts";
import { calendarsSection, parseDuration } from "../config/index.ts";
import { startJobs, type Jobs } from "../jobs/index.ts";
import { EventStore } from "../store/index.ts";
import {
  advanceDatabaseClock,
  databaseClock,
  Definitions,
  startWorkflow,
  startWorkflowEngine,
  type Actor,
  type DeployedDefinition,
  type EngineDeps,
  type WorkflowDefinition,
  type WorkflowEngine,
} from "../workflow/index.ts";
import { createTestDatabase, type TestDatabase } from "./database.ts";
import { WorkflowTestError, rejected } from "./errors.ts";
import { TestInstance } from "./instance.ts";

/** An account a test acts as: what it may do and the principals (group DNs) it has. */
export interface TestAccount {
  readonly access?: readonly string[];
  readonly principals?: readonly string[];
  /** Its DN in the directory; default `uid=<name>,ou=people,dc=example,dc=org`. */
  readonly dn?: string;
}

/** A binding's replacement, made with `fixture(binding, value)`. */
export interface Fixture {
  readonly binding: string;
  readonly value: unknown;
}

/**
 * A binding's fixture: what the workflow's steps get for `binding` in a test, instead of the
 * directory, a REST backend or a service of its own. Give it to `workflowTest({ fixtures })`
 * or to `test.fixture()` before `start()`.
 *
 * @example
 * const tickets = fixture("tickets", { send: (payload, { key }) => ({ queued: key }) });
 */
export function fixture(binding: string, value: unknown): Fixture {
  return { binding, value };
}

export interface WorkflowTestOptions {
  /** The definitions the test runs; the first is what `start()` starts by default. */
  readonly workflows: readonly WorkflowDefinition[];
  /** Accounts by name, for `{ as: "<name>" }`. */
  readonly accounts?: Readonly<Record<string, TestAccount>>;
  readonly fixtures?: readonly Fixture[];
  /**
   * Business calendars for `until: "3bd"`, written as `[[calendars]]` tables are in annal.toml
   * (`{ name: "de-be", timeZone: "Europe/Berlin", holidays: { country: "DE", region: "BE" } }`).
   */
  readonly calendars?: readonly Readonly<Record<string, unknown>>[];
}

const silent = { info() {}, warn() {}, error() {} };

/**
 * A workflow test: a database of its own (on `DATABASE_URL`'s server, or an embedded
 * PostgreSQL), the definitions registered, and the real engine running, with a clock the test
 * moves. Tests in parallel never see each other. Close it when the test ends.
 *
 * @example
 * import { test } from "node:test";
 * import { fixture, workflowTest } from "annal/testing";
 * import leaver from "../workflows/leaver.ts";
 *
 * test("the entry goes 30 days after the leaver", async (t) => {
 *   const wt = await workflowTest({ workflows: [leaver], accounts: { hr: { access: ["hr"] } } });
 *   t.after(() => wt.close());
 *   wt.fixture("directory", fakeDirectory);
 *   const flow = await wt.start({ uid: "ada" }, { as: "hr" });
 *   await flow.waitFor("WAITING");
 *   await wt.advanceClock("30d");
 *   await flow.waitFor("COMPLETED");
 * });
 */
export async function workflowTest(options: WorkflowTestOptions): Promise<WorkflowTest> {
  if (options.workflows.length === 0) {
    throw new WorkflowTestError(
      "WF_TEST_UNSUPPORTED_CALL",
      "workflowTest needs at least one workflow",
    );
  }
  const db = await createTestDatabase();
  try {
    const store = await EventStore.open(db.pool);
    const jobs = await startJobs({ pool: db.pool, log: silent });
    return new WorkflowTest(db, store, jobs, options);
  } catch (error) {
    await db.drop();
    throw error;
  }
}

export class WorkflowTest {
  readonly #db: TestDatabase;
  readonly #jobs: Jobs;
  readonly #options: WorkflowTestOptions;
  readonly #fixtures = new Map<string, unknown>();
  readonly #registered: readonly DeployedDefinition[];
  readonly #deps: EngineDeps;
  readonly #calendars = new TestCalendars();
  #engine: Promise<WorkflowEngine> | undefined;

  constructor(db: TestDatabase, store: EventStore, jobs: Jobs, options: WorkflowTestOptions) {
    this.#db = db;
    this.#jobs = jobs;
    this.#options = options;
    for (const each of options.fixtures ?? []) this.#fixtures.set(each.binding, each.value);
    // Definitions registered in memory: an instance's "bundle" is its definition object here,
    // named by a hash of its name and version.
    this.#registered = options.workflows.map((definition) => ({
      name: definition.name,
      version: definition.version,
      hash: createHash("sha256").update(`${definition.name}@${definition.version}`).digest("hex"),
      definition,
    }));
    const registered = this.#registered;
    const definitions = new (class extends Definitions {
      override async version(name: string, version: number) {
        const found = registered.find((d) => d.name === name && d.version === version);
        if (found) return found;
        throw new WorkflowTestError(
          "WF_TEST_UNSUPPORTED_CALL",
          `flow.start asked for ${name} version ${version}, which the test does not register`,
        );
      }
    })(db.pool, this.#registered);
    this.#deps = {
      pool: db.pool,
      store,
      jobs,
      definitions,
      bindings: {
        pool: db.pool,
        log: silent,
        fixtures: this.#fixtures,
        fixtureMissing: (binding) => fixtureMissing(binding),
      },
      log: silent,
      calendars: this.#calendars,
    };
    if (options.calendars) this.#calendars.use(testCalendars(options.calendars));
  }

  /**
   * Replaces the business calendars, as a restart with another annal.toml would: deadlines
   * set from now on count in these; ones set before stay where they were recorded.
   */
  useCalendars(tables: readonly Readonly<Record<string, unknown>>[]): this {
    this.#calendars.use(testCalendars(tables));
    return this;
  }

  /** Replaces `binding` with `value` for every step from now on. */
  fixture(binding: string, value: unknown): this {
    this.#fixtures.set(binding, value);
    return this;
  }

  /**
   * Starts an instance of the first workflow (or `definition`) as the account `as`.
   *
   * @throws WorkflowTestError `WF_TEST_BINDING_FIXTURE_MISSING` for a binding of the
   *   definition without a fixture; `WF_TEST_MUTATION_REJECTED` when the start is refused
   *   (its WF_* refusal is the cause).
   */
  async start(
    parameters: unknown,
    options: { readonly as: string; readonly definition?: WorkflowDefinition | string },
  ): Promise<TestInstance> {
    const definition = this.#definition(options.definition);
    for (const binding of Object.keys(definition.bindings)) {
      if (!this.#fixtures.has(binding)) throw fixtureMissing(binding);
    }
    await this.#startEngine();
    try {
      const { instanceId } = await startWorkflow(this.#deps, {
        name: definition.name,
        version: definition.version,
        parameters,
        as: this.actor(options.as),
      });
      return new TestInstance(this, instanceId);
    } catch (error) {
      throw rejected("start", error);
    }
  }

  /**
   * Moves this test's database clock forward by `duration` (`"30d"`, `"2h"`) and fires the
   * timers that come due: deadlines and retries happen at once instead of when they would.
   */
  async advanceClock(duration: string): Promise<void> {
    await advanceDatabaseClock(this.#db.pool, parseDuration(duration));
    await (await this.#startEngine()).fireTimers();
  }

  /**
   * Moves this test's database clock forward to `moment` (a Date or an ISO 8601 date-time) and
   * fires the timers that come due: a test of business-time deadlines starts on a known day.
   *
   * @throws WorkflowTestError `WF_TEST_UNSUPPORTED_CALL` for a moment before the clock.
   */
  async advanceClockTo(moment: Date | string): Promise<void> {
    const target = typeof moment === "string" ? Date.parse(moment) : moment.getTime();
    const now = (await databaseClock(this.#db.pool)).getTime();
    if (!Number.isFinite(target) || target < now) {
      throw new WorkflowTestError(
        "WF_TEST_UNSUPPORTED_CALL",
        `advanceClockTo: ${String(moment)} is not a moment after the test's clock (${new Date(now).toISOString()})`,
      );
    }
    await advanceDatabaseClock(this.#db.pool, target - now);
    await (await this.#startEngine()).fireTimers();
  }

  /** The account named `name` in `accounts` (any name works; unknown ones have no access). */
  actor(name: string): Actor {
    const account = this.#options.accounts?.[name] ?? {};
    const id = createHash("sha256").update(name).digest("hex");
    return {
      accountId: `${id.slice(0, 8)}-${id.slice(8, 12)}-4${id.slice(13, 16)}-8${id.slice(17, 20)}-${id.slice(20, 32)}`,
      name,
      dn: account.dn ?? `uid=${name},ou=people,dc=example,dc=org`,
      principals: account.principals ?? [],
      access: account.access ?? [],
    };
  }

  /** What the instances need from the test: the engine's dependencies and the definitions. */
  get deps(): EngineDeps {
    return this.#deps;
  }

  isRegistered(definition: WorkflowDefinition | string): boolean {
    const name = typeof definition === "string" ? definition : definition.name;
    return this.#registered.some(
      (d) =>
        d.name === name && (typeof definition === "string" || d.version === definition.version),
    );
  }

  /** Stops the engine and drops the test's database. */
  async close(): Promise<void> {
    try {
      await (await this.#engine)?.stop();
      await this.#jobs.stop();
    } finally {
      await this.#db.drop();
    }
  }

  #definition(chosen: WorkflowDefinition | string | undefined): WorkflowDefinition {
    if (chosen === undefined) return this.#options.workflows[0]!;
    const name = typeof chosen === "string" ? chosen : chosen.name;
    const found = this.#registered.find(
      (d) => d.name === name && (typeof chosen === "string" || d.version === chosen.version),
    );
    if (!found) {
      throw new WorkflowTestError(
        "WF_TEST_UNSUPPORTED_CALL",
        `${name} is not one of the test's workflows`,
      );
    }
    return found.definition;
  }

  #startEngine(): Promise<WorkflowEngine> {
    this.#engine ??= startWorkflowEngine({
      ...this.#deps,
      timerIntervalMs: 50,
      sweepIntervalMs: 3_600_000,
    });
    return this.#engine;
  }
}

function fixtureMissing(binding: string): WorkflowTestError {
  return new WorkflowTestError(
    "WF_TEST_BINDING_FIXTURE_MISSING",
    `the binding "${binding}" has no fixture`,
  );
}

/** The test's calendars, which `useCalendars` replaces under the running engine. */
class TestCalendars extends Calendars {
  #current = new Calendars([]);

  constructor() {
    super([]);
  }

  use(calendars: Calendars): void {
    this.#current = calendars;
  }

  override get names(): readonly string[] {
    return this.#current.names;
  }

  override get(name?: string): BusinessCalendar | undefined {
    return this.#current.get(name);
  }
}

function testCalendars(tables: readonly Readonly<Record<string, unknown>>[]): Calendars {
  const parsed = calendarsSection().safeParse(tables);
  if (!parsed.success) {
    throw new WorkflowTestError(
      "WF_TEST_UNSUPPORTED_CALL",
      `workflowTest: calendars: ${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`,
    );
  }
  return calendarsOf(parsed.data);
}
