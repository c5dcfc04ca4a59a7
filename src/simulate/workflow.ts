import { checkNotBeforeRetention, readWorkflowHorizon } from "../audit/index.ts";
import type { Pool } from "../db/index.ts";
import type { Logger } from "../logger.ts";
import type { Calendars } from "../time/index.ts";
import type { SimulatedDefinition } from "./definition-file.ts";
import { pastRun, pastStarts, type PastRun } from "./past.ts";
import type { Period } from "./period.ts";
import type { DialogFallback, DialogPolicy } from "./policy.ts";
import { buildReport, type SimulationReport } from "./report.ts";
import { runSimulation } from "./run.ts";

export interface WorkflowSimulationOptions {
  /** annal's own database: read (the log, the history, access), never written. */
  readonly pool: Pool;
  readonly simulated: SimulatedDefinition;
  readonly period: Period;
  readonly dialogs: DialogPolicy;
  readonly fallback: DialogFallback;
  /** Whose past starts to run again; default the simulated definition's name. */
  readonly startsOf?: string;
  /** The directory's base DN (what `bindings.directory.base` says). */
  readonly base: string;
  readonly calendars?: Calendars;
  readonly log?: Pick<Logger, "info" | "warn" | "error">;
  /** How the caller names the period's start in a refusal: `--from` (the default), `from`. */
  readonly fromParameter?: string;
}

/**
 * What would the definition have done: every start of the deployed definition in the period
 * (read from the log in log order) runs again with the simulated definition, in a scratch
 * database, its bindings recorders (the directory as it was then, its writes noted, not
 * made), its dialogs answered by the policy; the report says what it would have started and
 * written, beside what the deployed version did. Nothing reaches the directory or the live log.
 *
 * A period that begins before the retention horizon that applies (`readWorkflowHorizon`) is
 * refused with 410 `ANNAL_BEFORE_RETENTION`, as `at` is: retention folded the instances that
 * finished before it (their starts are gone) and the directory's history before it, so a
 * report from what is left would be wrong, not merely incomplete.
 *
 * @example
 * const report = await simulateWorkflow({ pool, simulated: await loadDefinitionFile(file),
 *   period: readPeriod("now-7d", "now", clock), dialogs: "as-answered", fallback: "unanswered",
 *   base: "dc=example,dc=org" });
 */
export async function simulateWorkflow(
  options: WorkflowSimulationOptions,
): Promise<SimulationReport> {
  const { simulated, period } = options;
  await checkNotBeforeRetention(
    options.pool,
    period.from,
    options.fromParameter ?? "--from",
    readWorkflowHorizon,
  );
  const startsOf = options.startsOf ?? simulated.definition.name;
  const starts = await pastStarts(options.pool, startsOf, period);
  const past = new Map<string, PastRun>();
  for (const start of starts) {
    past.set(start.instanceId, await pastRun(options.pool, start.instanceId, period));
  }
  const { runs, recording, steps } = await runSimulation({
    live: options.pool,
    simulated,
    period,
    starts,
    past,
    dialogs: options.dialogs,
    fallback: options.fallback,
    base: options.base,
    ...(options.calendars ? { calendars: options.calendars } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  return buildReport({
    definition: {
      name: simulated.definition.name,
      version: simulated.definition.version,
      hash: simulated.hash,
      file: simulated.file,
    },
    startsOf,
    period,
    dialogs: options.dialogs,
    fallback: options.fallback,
    past,
    runs,
    recording,
    steps,
  });
}
