/**
 * Whether an instance's deadlines were met: a deadline belongs to a call (a dialog, a request,
 * a child, a retry) or to the instance itself, and is met when that ended in time. Pure: the
 * tests run it in Node.
 */

export interface DeadlineRecord {
  readonly kind: string;
  readonly seq?: number | null;
  readonly name: string | null;
  readonly dueAt: string;
  readonly passed: boolean;
}

export interface CallEnd {
  readonly seq: number;
  readonly state: string;
  readonly endedAt: string | null;
}

export type DeadlineStatus =
  /** Ended in time. */
  | "met"
  /** Ended late, or timed out. */
  | "missed"
  /** Still ahead. */
  | "pending"
  /** Behind the clock, and what it belongs to has not ended yet. */
  | "passed"
  /** What it belongs to never ended: the instance ended first. */
  | "void";

const FINISHED = new Set(["COMPLETED", "CANCELLED", "ERRORED"]);

export function deadlineStatus(
  deadline: DeadlineRecord,
  calls: readonly CallEnd[],
  instance: { readonly state: string; readonly updatedAt: string },
): DeadlineStatus {
  const due = Date.parse(deadline.dueAt);
  const finished = FINISHED.has(instance.state);
  if (deadline.seq === null || deadline.seq === undefined) {
    if (!finished) return deadline.passed ? "passed" : "pending";
    const ended = Date.parse(instance.updatedAt);
    if (ended > due) return "missed";
    return instance.state === "COMPLETED" ? "met" : "void";
  }
  const call = calls.find((c) => c.seq === deadline.seq);
  if (call?.endedAt) {
    if (call.state === "timed_out" || Date.parse(call.endedAt) > due) return "missed";
    return call.state === "cancelled" ? "void" : "met";
  }
  if (finished) return "void";
  return deadline.passed ? "passed" : "pending";
}

/** The status in words, for the page. */
export const DEADLINE_WORDS: Readonly<Record<DeadlineStatus, string>> = {
  met: "met",
  missed: "missed",
  pending: "not yet due",
  passed: "passed, not yet handled",
  void: "did not apply: ended before it",
};
