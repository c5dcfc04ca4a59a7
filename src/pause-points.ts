/**
 * Pause points: named places where a test can stop one actor in the middle of a race, act
 * while it stands there (start a second transaction, read, kill a connection), and then let
 * it go on. A race is then tested by construction, never by sleeping and hoping the scheduler
 * interleaves things the way the test needs.
 *
 * Code marks the place with `await pausePoint(name)`. Unless a test in this process armed
 * that name, the call does nothing: it finds no armed point and returns a promise that is
 * already settled. Names are dotted, module first, and listed in `PAUSE_POINTS` with where
 * they stand, so a test cannot arm, by a typo, a point that no code reaches
 * (test/pause-points.test.ts checks that each one is placed exactly once in `src/`).
 *
 * An armed point stops one arrival (the first, or the first of a given `subject`), then is
 * disarmed: later arrivals pass. `release()` lets the stopped actor go on, or disarms a point
 * nothing has reached yet; tests arm through test/support/pause-points.ts, which releases
 * when the test ends, so no actor is left standing.
 *
 * @example
 * // src/store/append.ts, between drawing positions and returning to the caller's commit:
 * await pausePoint("store.append.afterInsert", streamId);
 *
 * // a test: stop the append to "a" there, with its transaction still in flight
 * const point = armPausePoint("store.append.afterInsert", { subject: "a" });
 * const appending = store.appendToStream("a", [{ type: "A", data: {} }]);
 * await point.reached(); // rejects, naming the point, if no append to "a" gets there
 * await store.appendToStream("b", [{ type: "B", data: {} }]); // commits past "a"
 * t.same(await readAll(pool), []); // a reader does not pass "a", which is still in flight
 * point.release();
 * await appending;
 */

/** Every pause point, and where it stands. */
export const PAUSE_POINTS = [
  // src/store/append.ts: the events are inserted (their transaction id and positions are
  // drawn) and the transaction has not committed; the subject is the stream id.
  "store.append.afterInsert",
  // src/store/notify.ts: a pool's notifier is about to announce committed appends (its one
  // notification in flight); no subject.
  "store.notify.beforeSend",
  // src/graphql/gateway/directives/mutations.ts: a mutation has written to the directory and its
  // afterWrite has returned; the answer comes next. The subject is the entry's DN.
  "graphql.mutation.written",
  // src/capture/import.ts: an import or periodic snapshot has read a page of entries from the
  // directory and is about to append the snapshots of one write's worth of them (a page is
  // cut into writes by values: `valuesPerWrite`); the subject is its reason.
  "capture.import.pageRead",
  // src/capture/from-polling.ts: a poll pass or a reconciliation has read a page of entries
  // from the directory and is about to compare them with the log; the subject is "poll" or
  // "reconcile".
  "capture.poll.pageRead",
  // src/projector/apply-batch.ts: a projection has read its next batch of events and is about
  // to apply it (its checkpoint not yet moved); the subject is the projection's name.
  "projector.batch.beforeApply",
  // src/projector/reader-indexes.ts: a projection's live schema lacks readers' indexes (a
  // first start's bulk load has committed without them, or a build died) and the projector
  // is about to build them; the subject is the projection's name.
  "projector.indexes.beforeBuild",
] as const;

export type PausePointName = (typeof PAUSE_POINTS)[number];

/** How long `reached()` waits by default before it fails, in milliseconds. */
export const DEFAULT_REACH_TIMEOUT = 15_000;

export interface ArmedPausePoint {
  readonly name: PausePointName;
  /**
   * Resolves once an actor has stopped at the point (at once if one already has). Rejects
   * with an error naming the point when none arrives within `timeout` ms, so a test whose
   * actor never gets there fails instead of hanging.
   */
  reached(options?: { timeout?: number }): Promise<void>;
  /**
   * Lets the stopped actor go on; if none has arrived yet, disarms the point so that none
   * will stop. Calling it again does nothing.
   */
  release(): void;
}

interface Arming {
  readonly subject: string | undefined;
  readonly arrive: () => void;
  readonly go: Promise<void>;
}

const armed = new Map<PausePointName, Arming[]>();
const PASS: Promise<void> = Promise.resolve();

/**
 * Marks a place where a test may stop the running code. Returns a settled promise (costing
 * one map lookup) unless a test armed `name` for any subject or for this `subject`; then the
 * caller waits there until the test releases it.
 *
 * @param subject who is passing (a stream id, a job id), so that a test can stop one actor
 *   among many that pass the same place
 */
export function pausePoint(name: PausePointName, subject?: string): Promise<void> {
  if (armed.size === 0) return PASS;
  const waiting = armed.get(name);
  const arming = waiting?.find((a) => a.subject === undefined || a.subject === subject);
  if (waiting === undefined || arming === undefined) return PASS;
  disarm(name, arming);
  arming.arrive();
  return arming.go;
}

/**
 * Whether an actor of `subject` would stop at `name` now: for code with a faster way that
 * passes no such place (an append in one statement), which then takes the way that does.
 */
export function pausePointArmed(name: PausePointName, subject?: string): boolean {
  if (armed.size === 0) return false;
  return (armed.get(name) ?? []).some((a) => a.subject === undefined || a.subject === subject);
}

/**
 * Arms `name`: the next actor to reach it (of `subject`, when given) stops there until
 * `release()`. For tests; arm through test/support/pause-points.ts, which releases the point
 * when the test ends. Several armings of one name stop as many arrivals, in the order armed.
 */
export function armPausePoint(
  name: PausePointName,
  options: { subject?: string } = {},
): ArmedPausePoint {
  if (!PAUSE_POINTS.includes(name)) throw new Error(`there is no pause point "${name}"`);
  const arrival = Promise.withResolvers<void>();
  const going = Promise.withResolvers<void>();
  const arming: Arming = { subject: options.subject, arrive: arrival.resolve, go: going.promise };
  armed.set(name, [...(armed.get(name) ?? []), arming]);
  const at = options.subject === undefined ? name : `${name} (${options.subject})`;
  return {
    name,
    async reached({ timeout = DEFAULT_REACH_TIMEOUT } = {}) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`pause point ${at} was not reached within ${timeout} ms`)),
          timeout,
        );
      });
      try {
        await Promise.race([arrival.promise, late]);
      } finally {
        clearTimeout(timer);
      }
    },
    release() {
      disarm(name, arming);
      going.resolve();
    },
  };
}

function disarm(name: PausePointName, arming: Arming): void {
  const rest = (armed.get(name) ?? []).filter((a) => a !== arming);
  if (rest.length > 0) armed.set(name, rest);
  else armed.delete(name);
}
