/**
 * `annal simulate <definition file>`: what a new or changed definition would have done over a
 * past period; `annal simulate access <file> --at <moment>`: what an Access Configuration would
 * have granted and refused then. Both read annal's database and write nothing to it.
 */
import { writeFile } from "node:fs/promises";
import { openDatabase, prepareEventStore } from "../../app/index.ts";
import { loadConfig, type AnnalConfig } from "../../config/index.ts";
import type { Pool } from "../../db/index.ts";
import { createLogger } from "../../logger.ts";
import {
  accessReportLines,
  loadAccessFile,
  loadDefinitionFile,
  loadReviewFile,
  reviewSimulationLines,
  simulateReview,
  readPeriod,
  readPolicy,
  reportLines,
  simulateAccess,
  simulateWorkflow,
  simulationMoment,
  type SimulatedDefinition,
} from "../../simulate/index.ts";
import { calendarsOf, type Clock } from "../../time/index.ts";
import type { CommandModule } from "../command.ts";
import type { Output } from "../output.ts";
import { SIMULATE, SIMULATE_ACCESS, SIMULATE_REVIEW } from "../registry.ts";
import { reviewNamed } from "./review.ts";
import { parseCommandLine } from "../usage.ts";

export interface SimulateCommandOptions {
  readonly file: string;
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  readonly dialogs?: string | undefined;
  readonly fallback?: string | undefined;
  readonly startsOf?: string | undefined;
  readonly out?: string | undefined;
  readonly json?: boolean;
}

/**
 * Reads everything the command line says before the database is opened (a bad file, moment
 * or policy fails at once), then simulates on `open()`'s pool and reports: the table on
 * standard output (or the JSON with `--json`), the JSON in `--out`.
 */
export async function simulateCommand(
  options: SimulateCommandOptions,
  context: {
    readonly clock: Clock;
    readonly base: string;
    readonly calendars?: AnnalConfig["calendars"];
    open(): Promise<{ pool: Pool; close(): Promise<void> }>;
  },
  output: Output,
): Promise<number> {
  const policy = readPolicy(options.dialogs, options.fallback);
  const period = readPeriod(options.from, options.to, context.clock);
  const simulated: SimulatedDefinition = await loadDefinitionFile(options.file);
  const database = await context.open();
  try {
    const report = await simulateWorkflow({
      pool: database.pool,
      simulated,
      period,
      ...policy,
      ...(options.startsOf === undefined ? {} : { startsOf: options.startsOf }),
      base: context.base,
      ...(context.calendars && context.calendars.length > 0
        ? { calendars: calendarsOf(context.calendars) }
        : {}),
    });
    const json = JSON.stringify(report, null, 2);
    if (options.out !== undefined) await writeFile(options.out, `${json}\n`);
    if (options.json) output.out(json);
    else for (const line of reportLines(report)) output.out(line);
    if (options.out !== undefined && !options.json) output.out(`report written to ${options.out}`);
    return 0;
  } finally {
    await database.close();
  }
}

export interface SimulateAccessOptions {
  readonly file: string;
  readonly at?: string | undefined;
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  readonly out?: string | undefined;
  readonly json?: boolean;
}

/** `annal simulate access`: reads the file and the moments, then compares on `open()`'s pool. */
export async function simulateAccessCommand(
  options: SimulateAccessOptions,
  context: {
    readonly clock: Clock;
    open(): Promise<{ pool: Pool; close(): Promise<void> }>;
  },
  output: Output,
): Promise<number> {
  const at = simulationMoment(options.at, "--at", context.clock);
  const window =
    options.from === undefined && options.to === undefined
      ? undefined
      : readPeriod(options.from, options.to, context.clock);
  const grants = await loadAccessFile(options.file);
  const database = await context.open();
  try {
    const report = await simulateAccess(database.pool, {
      file: options.file,
      grants,
      at,
      ...(window ? { window } : {}),
    });
    const json = JSON.stringify(report, null, 2);
    if (options.out !== undefined) await writeFile(options.out, `${json}\n`);
    if (options.json) output.out(json);
    else for (const line of accessReportLines(report)) output.out(line);
    return 0;
  } finally {
    await database.close();
  }
}

/**
 * `annal simulate review <name|file> --at <moment>`: the items a campaign would have had then,
 * and their reviewers, from the history. `<name>` a `[[reviews]]` table of annal.toml; a path
 * to a `.toml` file, the first `[[reviews]]` table in it (a draft).
 */
export async function simulateReviewCommand(
  options: {
    readonly review: string;
    readonly at?: string | undefined;
    readonly out?: string | undefined;
    readonly json?: boolean;
  },
  context: {
    readonly clock: Clock;
    readonly config: AnnalConfig;
    open(): Promise<{ pool: Pool; close(): Promise<void> }>;
  },
  output: Output,
): Promise<number> {
  const at = simulationMoment(options.at, "--at", context.clock);
  const definition = options.review.endsWith(".toml")
    ? await loadReviewFile(options.review)
    : reviewNamed(context.config, options.review);
  const database = await context.open();
  try {
    const simulation = await simulateReview(database.pool, definition, at);
    const json = JSON.stringify(simulation, null, 2);
    if (options.out !== undefined) await writeFile(options.out, `${json}\n`);
    if (options.json) output.out(json);
    else for (const line of reviewSimulationLines(simulation)) output.out(line);
    return 0;
  } finally {
    await database.close();
  }
}

async function opener(config: AnnalConfig) {
  const log = createLogger("warn", { destination: process.stderr });
  const database = await openDatabase(config, log);
  try {
    await prepareEventStore(database.pool, log);
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}

export const command: CommandModule = {
  async run(args, output) {
    if (args[0] === "review") {
      const { values, positionals } = parseCommandLine(args.slice(1), SIMULATE_REVIEW);
      const config = await loadConfig({ configPath: values.config, argv: [] });
      return simulateReviewCommand(
        { review: positionals[0]!, at: values.at, out: values.out, json: values.json === true },
        {
          clock: { now: new Date(), timeZone: config.rest.timeZone },
          config,
          open: () => opener(config),
        },
        output,
      );
    }
    if (args[0] === "access") {
      const { values, positionals } = parseCommandLine(args.slice(1), SIMULATE_ACCESS);
      const config = await loadConfig({ configPath: values.config, argv: [] });
      return simulateAccessCommand(
        {
          file: positionals[0]!,
          at: values.at,
          from: values.from,
          to: values.to,
          out: values.out,
          json: values.json === true,
        },
        {
          clock: { now: new Date(), timeZone: config.rest.timeZone },
          open: () => opener(config),
        },
        output,
      );
    }
    const { values, positionals } = parseCommandLine(args, SIMULATE);
    const config = await loadConfig({ configPath: values.config, argv: [] });
    return simulateCommand(
      {
        file: positionals[0]!,
        from: values.from,
        to: values.to,
        dialogs: values.dialogs,
        fallback: values.fallback,
        startsOf: values["starts-of"],
        out: values.out,
        json: values.json === true,
      },
      {
        clock: { now: new Date(), timeZone: config.rest.timeZone },
        base: config.directory?.base ?? "",
        calendars: config.calendars,
        open: () => opener(config),
      },
      output,
    );
  },
};
