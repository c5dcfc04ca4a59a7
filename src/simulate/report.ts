import type { ActorRef } from "../events/index.ts";
import type { InstanceState } from "../workflow/index.ts";
import type { PastRun } from "./past.ts";
import type { Period } from "./period.ts";
import type { DialogFallback, DialogPolicy } from "./policy.ts";
import type { BindingCall, Recording } from "./recorders.ts";
import type { DialogDecision, SimulatedRun } from "./run.ts";
import { describeWrite, writesMissingFrom, type DirectoryWrite } from "./writes.ts";

/** What a workflow simulation found: `annal simulate`'s JSON file, GraphQL's answer. */
export interface SimulationReport {
  readonly definition: {
    readonly name: string;
    readonly version: number;
    readonly hash: string;
    readonly file: string;
  };
  /** Whose starts were run again: the definition's name, or `--starts-of`. */
  readonly startsOf: string;
  readonly period: { readonly from: string; readonly to: string };
  readonly dialogs: DialogPolicy;
  readonly fallback: DialogFallback;
  readonly instances: readonly InstanceComparison[];
  readonly summary: {
    /** Starts in the period: instances the deployed version started. */
    readonly starts: number;
    /** Instances the simulated definition would have started (its parameters took them). */
    readonly wouldStart: number;
    readonly refused: number;
    /** Instances whose outcome or directory writes would have differed. */
    readonly differing: number;
    readonly writes: { readonly deployed: number; readonly simulated: number };
  };
}

/** One start: what the deployed version did, and what the simulated one would have. */
export interface InstanceComparison {
  readonly startedAt: string;
  readonly startedBy: ActorRef;
  readonly parameters: unknown;
  readonly deployed: {
    readonly instanceId: string;
    readonly version: number;
    readonly status: string;
    readonly result: unknown;
    readonly error: { readonly code: string; readonly message: string } | null;
    readonly writes: readonly DirectoryWrite[];
  };
  readonly simulated: {
    readonly started: boolean;
    readonly refused?: { readonly code: string; readonly message: string };
    /** As of the period's end (WAITING: it would still have waited then). */
    readonly status: string | null;
    readonly result: unknown;
    readonly error: { readonly code: string; readonly message: string } | null;
    readonly waitingOn: readonly string[];
    readonly dialogs: readonly DialogDecision[];
    readonly writes: readonly DirectoryWrite[];
    readonly calls: readonly BindingCall[];
  };
  readonly differences: {
    readonly status: boolean;
    readonly result: boolean;
    /** Writes only the simulated definition would have made. */
    readonly onlySimulated: readonly DirectoryWrite[];
    /** Writes the deployed version made that the simulated one would not have. */
    readonly onlyDeployed: readonly DirectoryWrite[];
  };
}

/** Builds the report from the past runs, the simulated runs and the recorders' notes. */
export function buildReport(options: {
  readonly definition: SimulationReport["definition"];
  readonly startsOf: string;
  readonly period: Period;
  readonly dialogs: DialogPolicy;
  readonly fallback: DialogFallback;
  readonly past: ReadonlyMap<string, PastRun>;
  readonly runs: readonly SimulatedRun[];
  readonly recording: Recording;
  readonly steps: ReadonlyMap<string, string>;
}): SimulationReport {
  const instances = options.runs.map((run): InstanceComparison => {
    const past = options.past.get(run.start.instanceId)!;
    const ids = new Set(run.instanceIds);
    const writes = options.recording.writes
      .filter((w) => ids.has(w.instanceId))
      .map((w) => ({ ...w.write, step: options.steps.get(w.stepEvent) ?? null }));
    const calls = options.recording.calls.filter((c) => ids.has(c.instanceId)).map((c) => c.call);
    const state = run.state;
    const status = state?.status ?? null;
    const result = state?.result ?? null;
    const onlySimulated = writesMissingFrom(writes, past.writes);
    const onlyDeployed = writesMissingFrom(past.writes, writes);
    return {
      startedAt: run.start.at.toISOString(),
      startedBy: run.start.startedBy,
      parameters: run.start.parameters,
      deployed: {
        instanceId: past.instanceId,
        version: past.version,
        status: past.status,
        result: past.result,
        error: past.error,
        writes: past.writes,
      },
      simulated: {
        started: run.refused === undefined,
        ...(run.refused ? { refused: run.refused } : {}),
        status,
        result,
        error: state?.error ? { code: state.error.code, message: state.error.message } : null,
        waitingOn: state ? waitingOn(state) : [],
        dialogs: run.dialogs,
        writes,
        calls,
      },
      differences: {
        status: status !== past.status,
        result: JSON.stringify(result) !== JSON.stringify(past.result),
        onlySimulated,
        onlyDeployed,
      },
    };
  });
  return {
    definition: options.definition,
    startsOf: options.startsOf,
    period: { from: options.period.from.toISOString(), to: options.period.to.toISOString() },
    dialogs: options.dialogs,
    fallback: options.fallback,
    instances,
    summary: {
      starts: instances.length,
      wouldStart: instances.filter((i) => i.simulated.started).length,
      refused: instances.filter((i) => !i.simulated.started).length,
      differing: instances.filter(
        (i) =>
          i.differences.status ||
          i.differences.result ||
          i.differences.onlySimulated.length + i.differences.onlyDeployed.length > 0,
      ).length,
      writes: {
        deployed: instances.reduce((n, i) => n + i.deployed.writes.length, 0),
        simulated: instances.reduce((n, i) => n + i.simulated.writes.length, 0),
      },
    },
  };
}

function waitingOn(state: InstanceState): string[] {
  return [...state.calls.values()].flatMap((call) => {
    if ((call.kind === "dialog" || call.kind === "request") && call.state === "pending") {
      return [`${call.kind} "${call.name}"`];
    }
    if (call.kind === "child" && call.state === "running") return [`child ${call.definition.name}`];
    return [];
  });
}

/** The report as a readable table: one row per start, then each difference in writes. */
export function reportLines(report: SimulationReport): string[] {
  const { definition, period, summary } = report;
  const lines = [
    `simulated ${definition.name} version ${definition.version} (${definition.file}) over the starts of ${report.startsOf}`,
    `from ${period.from} to ${period.to}; dialogs ${report.dialogs}${report.dialogs === "as-answered" ? `, fallback ${report.fallback}` : ""}`,
    "",
  ];
  if (report.instances.length === 0) {
    lines.push(`no instance of ${report.startsOf} was started in the period`);
    return lines;
  }
  const header = [
    "started",
    "by",
    "deployed",
    "simulated",
    "writes then",
    "would write",
    "differs",
  ];
  const rows = report.instances.map((i) => [
    i.startedAt,
    i.startedBy.name,
    outcome(i.deployed.status, i.deployed.result),
    i.simulated.started
      ? outcome(i.simulated.status ?? "?", i.simulated.result)
      : `refused ${i.simulated.refused?.code ?? ""}`,
    String(i.deployed.writes.length),
    String(i.simulated.writes.length),
    differs(i),
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  const line = (cells: readonly string[]) =>
    cells.map((cell, c) => (c === cells.length - 1 ? cell : cell.padEnd(widths[c]!))).join("  ");
  lines.push(line(header), ...rows.map(line));
  for (const i of report.instances) {
    const extra = [
      ...i.differences.onlySimulated.map((w) => `  + would write: ${describeWrite(w)}`),
      ...i.differences.onlyDeployed.map((w) => `  - wrote then:   ${describeWrite(w)}`),
      ...i.simulated.dialogs.map(
        (d) =>
          `  dialog "${d.name}": ${d.policy}${d.refused ? ` (refused: ${d.refused.code})` : ""}`,
      ),
    ];
    if (extra.length > 0) lines.push("", `${i.startedAt} ${i.deployed.instanceId}:`, ...extra);
  }
  lines.push(
    "",
    `${summary.starts} start(s): ${summary.wouldStart} would have started, ${summary.refused} refused, ${summary.differing} would have differed; writes then ${summary.writes.deployed}, would have written ${summary.writes.simulated}`,
  );
  return lines;
}

function outcome(status: string, result: unknown): string {
  const word =
    result && typeof result === "object" && "outcome" in result
      ? ` ${String((result as { outcome: unknown }).outcome)}`
      : "";
  return `${status}${word}`;
}

function differs(i: InstanceComparison): string {
  const d = i.differences;
  const what = [
    ...(d.status ? ["status"] : []),
    ...(d.result ? ["result"] : []),
    ...(d.onlySimulated.length + d.onlyDeployed.length > 0 ? ["writes"] : []),
  ];
  return what.length === 0 ? "no" : what.join(", ");
}
