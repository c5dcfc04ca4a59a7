import { readFile } from "node:fs/promises";
import { parse as parseToml } from "smol-toml";
import { BeforeRetentionError, readInstancesHorizon } from "../audit/index.ts";
import { accessAt, normalizeGrants, type AccountAccess } from "../auth/index.ts";
import { authorizationSection } from "../config/index.ts";
import type { Pool } from "../db/index.ts";
import { AnnalError } from "../errors/index.ts";
import type { AccessGrants } from "../events/index.ts";
import { logOrder } from "../store/index.ts";
import { Definitions } from "../workflow/index.ts";
import type { Period } from "./period.ts";

/**
 * Reads an Access Configuration file: TOML with `[authorization.grants]` as annal.toml has
 * it (a whole annal.toml will do: only that table is read), checked as the configuration's
 * own section is, and normalised as an activation normalises it.
 *
 * @throws AnnalError `ANNAL_SIMULATE_FILE_INVALID` for a file that is not there, is not TOML,
 *   or whose grants the configuration would refuse.
 */
export async function loadAccessFile(file: string): Promise<AccessGrants> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    throw new AnnalError("ANNAL_SIMULATE_FILE_INVALID", `${file}: there is no such file`);
  }
  let table: Record<string, unknown>;
  try {
    table = parseToml(text) as Record<string, unknown>;
  } catch (error) {
    const first = (error as Error).message.split("\n")[0];
    throw new AnnalError("ANNAL_SIMULATE_FILE_INVALID", `${file}: ${first}`);
  }
  const authorization = (table.authorization ?? undefined) as { grants?: unknown } | undefined;
  if (authorization?.grants === undefined) {
    throw new AnnalError(
      "ANNAL_SIMULATE_FILE_INVALID",
      `${file}: it has no [authorization.grants] table`,
    );
  }
  const parsed = authorizationSection().safeParse({ grants: authorization.grants });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AnnalError(
      "ANNAL_SIMULATE_FILE_INVALID",
      `${file}: [authorization.grants]${issue.path.length > 1 ? ` ${issue.path.slice(1).join(".")}` : ""}: ${issue.message}`,
    );
  }
  try {
    return normalizeGrants(parsed.data.grants);
  } catch (error) {
    throw new AnnalError("ANNAL_SIMULATE_FILE_INVALID", `${file}: ${(error as Error).message}`);
  }
}

/** One account whose access would have differed. */
export interface AccessChange {
  readonly account: { readonly id: string; readonly name: string; readonly kind: string };
  readonly gained: readonly string[];
  readonly lost: readonly string[];
}

/** A command recorded in the log that the simulated configuration would have refused. */
export interface RefusedCommand {
  readonly at: string;
  readonly eventId: string;
  /** `directory write` (a GraphQL mutation) or `start <workflow>`. */
  readonly command: string;
  readonly account: { readonly id: string; readonly name: string };
  /** The access functions it needs (any one of them). */
  readonly needs: readonly string[];
  /** What the account would have held then. */
  readonly wouldHold: readonly string[];
}

export interface AccessSimulationReport {
  readonly file: string;
  readonly at: string;
  /** The configuration active at the moment, if any. */
  readonly active: { readonly version: number; readonly activatedBy: string } | null;
  readonly changes: readonly AccessChange[];
  readonly window: { readonly from: string; readonly to: string };
  readonly refused: readonly RefusedCommand[];
  readonly commandsChecked: number;
}

/**
 * Compares `grants` with the Access Configuration active at `at`: every account then, its
 * principals then, and the access each configuration gives them (the access projection's own
 * computation, `accessAt`); then the commands recorded in `window` (default the UTC day of
 * `at`) that needed an access function, each checked against what its account would have held
 * at its moment. Reads only. A window before the workflow horizon of a retention run is
 * refused (`windowAfterRetention`).
 */
export async function simulateAccess(
  db: Pool,
  options: {
    readonly file: string;
    readonly grants: AccessGrants;
    readonly at: Date;
    readonly window?: Period;
  },
): Promise<AccessSimulationReport> {
  const window = await windowAfterRetention(db, options.window, options.at);
  const then = await accessAt(db, { at: options.at });
  const would = await accessAt(db, { at: options.at, grants: options.grants });
  const wouldById = new Map(would.accounts.map((a) => [a.id, a]));
  const changes: AccessChange[] = [];
  for (const account of then.accounts) {
    const proposed = wouldById.get(account.id);
    const gained = (proposed?.access ?? []).filter((fn) => !account.access.includes(fn));
    const lost = account.access.filter((fn) => !(proposed?.access ?? []).includes(fn));
    if (gained.length + lost.length > 0) {
      changes.push({ account: accountRef(account), gained, lost });
    }
  }
  const commands = await recordedCommands(db, window);
  const refused: RefusedCommand[] = [];
  for (const command of commands) {
    const held = await accessAt(db, {
      at: command.at,
      account: command.account.id,
      grants: options.grants,
    });
    const access = held.accounts[0]?.access ?? [];
    if (command.needs.length > 0 && !command.needs.some((fn) => access.includes(fn))) {
      refused.push({
        at: command.at.toISOString(),
        eventId: command.eventId,
        command: command.command,
        account: command.account,
        needs: command.needs,
        wouldHold: access,
      });
    }
  }
  return {
    file: options.file,
    at: options.at.toISOString(),
    active: then.configuration
      ? { version: then.configuration.version, activatedBy: then.configuration.activatedBy }
      : null,
    changes,
    window: { from: window.from.toISOString(), to: window.to.toISOString() },
    refused,
    commandsChecked: commands.length,
  };
}

function accountRef(account: AccountAccess) {
  return { id: account.id, name: account.name, kind: account.kind };
}

/**
 * The commands' window: `given`, or the UTC day of `at` from the workflow horizon on. Retention
 * folded the instances that finished before that horizon, their starts with them, so a window
 * before it would miss commands: a window given so is refused (410 `ANNAL_BEFORE_RETENTION`,
 * as `at` is), and so is a day that ends before it.
 */
async function windowAfterRetention(
  db: Pool,
  given: Period | undefined,
  at: Date,
): Promise<Period> {
  const window = given ?? dayOf(at);
  const horizon = await readInstancesHorizon(db);
  if (!horizon || window.from.getTime() >= horizon.getTime()) return window;
  if (given) throw new BeforeRetentionError("--from", given.from, horizon);
  if (window.to.getTime() < horizon.getTime()) throw new BeforeRetentionError("--at", at, horizon);
  return { from: horizon, to: window.to };
}

function dayOf(at: Date): Period {
  const from = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
  return { from, to: new Date(from.getTime() + 86_400_000 - 1) };
}

interface RecordedCommand {
  readonly at: Date;
  readonly eventId: string;
  readonly command: string;
  readonly account: { readonly id: string; readonly name: string };
  readonly needs: readonly string[];
}

/**
 * The commands of the window that needed an access function, from the log in log order:
 * GraphQL's directory writes (`DirectoryWriteRequested`: `write`) and people's workflow
 * starts (`WorkflowStarted` by an account: the definition's `access.start`, when it has one).
 */
async function recordedCommands(db: Pool, window: Period): Promise<RecordedCommand[]> {
  const result = await db.query<{
    id: string;
    type: string;
    data: Record<string, unknown>;
    occurred_at: Date;
  }>(
    `SELECT e.id::text AS id, e.type, e.data, e.occurred_at FROM events AS e
      WHERE e.type IN ('DirectoryWriteRequested', 'WorkflowStarted')
        AND e.occurred_at >= $1 AND e.occurred_at <= $2
      ORDER BY ${logOrder("e")}`,
    [window.from, window.to],
  );
  const definitions = new Definitions(db, []);
  const commands: RecordedCommand[] = [];
  for (const row of result.rows) {
    if (row.type === "DirectoryWriteRequested") {
      const account = row.data.account as { id: string; name: string };
      commands.push({
        at: row.occurred_at,
        eventId: row.id,
        command: `directory write (${String(row.data.operation)} ${String(row.data.dn)})`,
        account,
        needs: ["write"],
      });
      continue;
    }
    const started = row.data as {
      definition: { name: string; version: number };
      startedBy: { accountId: string; name: string };
      parent: unknown;
    };
    // Children and change events' starts are annal's own: the definitions' access is for people.
    if (started.parent !== null || started.startedBy.accountId.startsWith("hook:")) continue;
    const deployed = await definitions
      .version(started.definition.name, started.definition.version)
      .catch(() => undefined);
    const needs = deployed?.definition.access.start ?? [];
    if (needs.length === 0) continue;
    commands.push({
      at: row.occurred_at,
      eventId: row.id,
      command: `start ${started.definition.name}`,
      account: { id: started.startedBy.accountId, name: started.startedBy.name },
      needs,
    });
  }
  return commands;
}

/** The access report as lines: the changes, then the refusals. */
export function accessReportLines(report: AccessSimulationReport): string[] {
  const lines = [
    `${report.file} at ${report.at}, compared with ${report.active ? `the Access Configuration version ${report.active.version} (activated by ${report.active.activatedBy})` : "no active Access Configuration"}`,
    "",
  ];
  if (report.changes.length === 0) lines.push("nobody would have gained or lost access");
  for (const change of report.changes) {
    lines.push(
      `${change.account.kind}:${change.account.name}  ${[
        ...change.gained.map((fn) => `+${fn}`),
        ...change.lost.map((fn) => `-${fn}`),
      ].join(" ")}`,
    );
  }
  lines.push(
    "",
    `commands from ${report.window.from} to ${report.window.to}: ${report.commandsChecked} needed an access function, ${report.refused.length} would have been refused`,
  );
  for (const refused of report.refused) {
    lines.push(
      `  ${refused.at}  ${refused.account.name}  ${refused.command}  needs ${refused.needs.join(" or ")}, would hold ${refused.wouldHold.length === 0 ? "nothing" : refused.wouldHold.join(", ")}`,
    );
  }
  return lines;
}
