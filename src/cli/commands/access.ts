import { openDatabase, prepareEventStore } from "../../app/index.ts";
import { accessAt, type AccessReport } from "../../auth/index.ts";
import { loadConfig } from "../../config/index.ts";
import type { Pool } from "../../db/index.ts";
import { createLogger } from "../../logger.ts";
import { delegationsInForce, type Delegation } from "../../workflow/index.ts";
import { type Clock, MOMENT_FORMS, readMoment } from "../../time/index.ts";
import type { Output } from "../output.ts";
import type { CommandModule } from "../command.ts";
import { ACCESS_SHOW } from "../registry.ts";
import { parseCommandLine, UsageError } from "../usage.ts";

/**
 * `--at`'s moment in the grammar of `src/time/`, as the REST channel and GraphQL read it
 * (`2026-11-24T10:00:00Z`, `now-1m`, `yesterday`); anything else is `ANNAL_USAGE`.
 */
export function momentOption(text: string, clock: Clock, option = "--at"): Date {
  const reading = readMoment(text, clock);
  if (reading.moment === undefined) {
    throw new UsageError(`${option}: ${reading.problem}`, `write ${MOMENT_FORMS}`);
  }
  return reading.moment;
}

/**
 * `annal access show`: the report of `accessAt`, a few lines per account, and the delegations
 * in force at that moment (those the account gave or received, when one is named), or JSON.
 */
export async function accessShow(
  pool: Pool,
  options: { account?: string; at?: string; json?: boolean; timeZone?: string },
  output: Output,
): Promise<number> {
  const clock = { now: new Date(), timeZone: options.timeZone ?? "UTC" };
  const at = options.at === undefined ? undefined : momentOption(options.at, clock);
  const report = await accessAt(pool, {
    ...(at === undefined ? {} : { at }),
    ...(options.account === undefined ? {} : { account: options.account }),
  });
  const delegations = delegationsOf(
    await delegationsInForce(pool, report.at),
    options.account === undefined ? undefined : new Set(report.accounts.map((a) => a.id)),
  );
  if (options.json) {
    output.out(JSON.stringify({ ...report, delegations }, null, 2));
    return 0;
  }
  for (const line of reportLines(report, options.account)) output.out(line);
  for (const line of delegationLines(delegations)) output.out(line);
  return 0;
}

/** The delegations in force, as the report shows them; `accounts`: only those they concern. */
function delegationsOf(all: readonly Delegation[], accounts: ReadonlySet<string> | undefined) {
  return all
    .filter(
      (d) =>
        accounts === undefined ||
        accounts.has(d.delegator.accountId) ||
        accounts.has(d.delegate.accountId),
    )
    .map((d) => ({
      id: d.id,
      delegator: d.delegator,
      delegate: d.delegate,
      from: d.from.toISOString(),
      until: d.until.toISOString(),
    }));
}

function delegationLines(delegations: ReturnType<typeof delegationsOf>): string[] {
  if (delegations.length === 0) return ["delegations in force: none"];
  return [
    "delegations in force:",
    ...delegations.map(
      (d) =>
        `  ${d.delegator.name} -> ${d.delegate.name}  from ${d.from} until ${d.until}  id ${d.id}`,
    ),
  ];
}

function reportLines(report: AccessReport, account: string | undefined): string[] {
  const lines = [`at ${report.at.toISOString()}`];
  const configuration = report.configuration;
  lines.push(
    configuration
      ? `Access Configuration: version ${configuration.version}, activated ${configuration.activatedAt.toISOString()} by ${configuration.activatedBy}`
      : "Access Configuration: none active (people could do nothing)",
  );
  if (report.accounts.length === 0) {
    lines.push(account === undefined ? "no accounts" : `no account "${account}" at that moment`);
  }
  for (const a of report.accounts) {
    const who = a.kind === "person" ? `${a.origin}:${a.name}` : `service:${a.name}`;
    lines.push(
      `${who}${a.displayName ? ` (${a.displayName})` : ""}  id ${a.id}`,
      `  access: ${a.access.length === 0 ? "none" : a.access.join(", ")}${a.overPrincipalLimit ? "  (over the principal limit)" : ""}`,
      `  since: ${a.since.toISOString()}`,
      `  principals: ${a.principals.join("; ")}`,
    );
  }
  return lines;
}

export async function runAccessCommand(args: readonly string[], output: Output): Promise<number> {
  const [subcommand, ...rest] = args;
  if (subcommand !== "show") {
    throw new UsageError(
      subcommand === undefined
        ? "access needs a subcommand: show"
        : `unknown access subcommand "${subcommand}"; the subcommand is show`,
    );
  }
  const { values, positionals } = parseCommandLine(rest, ACCESS_SHOW);
  const config = await loadConfig({ configPath: values.config, argv: [] });
  const log = createLogger("warn", { destination: process.stderr });
  const database = await openDatabase(config, log);
  try {
    await prepareEventStore(database.pool, log);
    return await accessShow(
      database.pool,
      {
        ...(positionals[0] === undefined ? {} : { account: positionals[0] }),
        ...(values.at === undefined ? {} : { at: values.at }),
        json: values.json === true,
        timeZone: config.rest.timeZone,
      },
      output,
    );
  } finally {
    await database.close();
  }
}

export const command: CommandModule = {
  run: runAccessCommand,
};
