import { AnnalError } from "../errors/index.ts";
import {
  answerRequest,
  cancelInstance,
  completeDialog,
  loadInstance,
  type InstanceState,
  type InstanceStatus,
  type WorkflowDefinition,
} from "../workflow/index.ts";
import type { WorkflowTest } from "./driver.ts";
import { WorkflowTestError, rejected, type WorkflowTestCode } from "./errors.ts";

const DEFAULT_TIMEOUT_MS = 5_000;

/** What `waitFor` waits for: a state, or a condition of the instance's state. */
export type Expectation = InstanceStatus | ((state: InstanceState) => boolean);

/**
 * One instance in a workflow test: wait for it, answer its dialogs and requests, find its
 * children. Every failure is a `WorkflowTestError`.
 */
export class TestInstance {
  readonly id: string;
  readonly #test: WorkflowTest;

  constructor(test: WorkflowTest, id: string) {
    this.#test = test;
    this.id = id;
  }

  /** The instance's state as its events fold now. */
  async state(): Promise<InstanceState> {
    const state = await loadInstance(this.#test.deps.pool, this.id);
    if (!state) throw new AnnalError("ANNAL_INTERNAL", `instance ${this.id} has no events`);
    return state;
  }

  /**
   * Waits until the instance is in `expected` (or the condition holds) and returns its state.
   *
   * @throws WorkflowTestError `WF_TEST_WAIT_TIMEOUT` naming what it saw last;
   *   `WF_TEST_INSTANCE_ERRORED` when it ends ERRORED meanwhile (unless that is what is
   *   awaited), or the driver's own code when that is why (a binding without a fixture, an
   *   unregistered child, a request the test cannot serve).
   */
  async waitFor(
    expected: Expectation,
    options: { readonly timeout?: number } = {},
  ): Promise<InstanceState> {
    const timeout = options.timeout ?? DEFAULT_TIMEOUT_MS;
    const deadline = Date.now() + timeout;
    const wanted = (state: InstanceState) =>
      typeof expected === "function" ? expected(state) : state.status === expected;
    for (let pause = 5; ; pause = Math.min(pause * 2, 50)) {
      const state = await this.state();
      if (wanted(state)) return state;
      if (state.status === "ERRORED") throw erroredError(state);
      if (Date.now() >= deadline) {
        throw new WorkflowTestError(
          "WF_TEST_WAIT_TIMEOUT",
          `instance ${this.id} was not ${typeof expected === "string" ? expected : "as expected"} within ${timeout} ms; it is ${describe(state)}`,
          { details: { status: state.status, waitingOn: waitingOn(state) } },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  /**
   * Answers the pending dialog named `dialog` as the account `as`, waiting for it to open.
   *
   * @throws WorkflowTestError `WF_TEST_MUTATION_REJECTED` when refused (not an assignee, an
   *   answer its schema refuses: the WF_* refusal is the cause).
   */
  async completeActivity(
    dialog: string,
    answer: unknown,
    options: { readonly as: string; readonly timeout?: number },
  ): Promise<void> {
    const state = await this.waitFor(
      (s) => pendingCall(s, "dialog", dialog) !== undefined,
      options.timeout === undefined ? {} : { timeout: options.timeout },
    );
    const call = pendingCall(state, "dialog", dialog);
    if (call?.kind !== "dialog") return;
    try {
      await completeDialog(this.#test.deps, {
        dialogId: call.dialogId,
        answer,
        as: this.#test.actor(options.as),
      });
    } catch (error) {
      throw rejected(`completeActivity("${dialog}")`, error);
    }
  }

  /** Answers the pending request sent through `binding` (as a change event would). */
  async answerRequest(binding: string, answer: unknown): Promise<void> {
    const state = await this.waitFor((s) => pendingCall(s, "request", binding) !== undefined);
    const call = pendingCall(state, "request", binding);
    if (call?.kind !== "request") return;
    try {
      await answerRequest(this.#test.deps, { key: call.key, answer, source: "test" });
    } catch (error) {
      throw rejected(`answerRequest("${binding}")`, error);
    }
  }

  /** Cancels the instance as the account `as`. */
  async cancel(options: { readonly as: string }): Promise<void> {
    try {
      await cancelInstance(this.#test.deps, {
        instanceId: this.id,
        as: this.#test.actor(options.as),
      });
    } catch (error) {
      throw rejected("cancel", error);
    }
  }

  /**
   * The child the instance started of `definition` (waiting for it to be started).
   *
   * @throws WorkflowTestError `WF_TEST_CHILD_DEFINITION_MISMATCH` when `definition` is not one
   *   of the test's workflows, or the instance started no child of it.
   */
  async toHaveChild(
    definition: WorkflowDefinition | string,
    options: { readonly timeout?: number } = {},
  ): Promise<TestInstance> {
    const name = typeof definition === "string" ? definition : definition.name;
    if (!this.#test.isRegistered(definition)) {
      throw new WorkflowTestError(
        "WF_TEST_CHILD_DEFINITION_MISMATCH",
        `${name} is not one of the test's workflows`,
      );
    }
    const find = (state: InstanceState) =>
      [...state.calls.values()].find(
        (call) =>
          call.kind === "child" &&
          call.definition.name === name &&
          (typeof definition === "string" || call.definition.version === definition.version),
      );
    try {
      const state = await this.waitFor((s) => find(s) !== undefined || isOver(s), options);
      const child = find(state);
      if (child?.kind === "child") return new TestInstance(this.#test, child.childId);
    } catch (error) {
      if (!(error instanceof WorkflowTestError) || error.code !== "WF_TEST_WAIT_TIMEOUT")
        throw error;
    }
    throw new WorkflowTestError(
      "WF_TEST_CHILD_DEFINITION_MISMATCH",
      `instance ${this.id} started no child of ${name}`,
    );
  }
}

function pendingCall(state: InstanceState, kind: "dialog" | "request", name: string) {
  return [...state.calls.values()].find(
    (call) => call.kind === kind && call.name === name && call.state === "pending",
  );
}

function isOver(state: InstanceState): boolean {
  return state.status === "COMPLETED" || state.status === "CANCELLED";
}

/** What the instance waits on, for a message. */
function waitingOn(state: InstanceState): string[] {
  return [...state.calls.values()].flatMap((call) => {
    if ((call.kind === "dialog" || call.kind === "request") && call.state === "pending") {
      return [`${call.kind} "${call.name}"`];
    }
    if (call.kind === "child" && call.state === "running") return [`child ${call.definition.name}`];
    if (call.kind === "step" && call.state === "retrying") return [`step "${call.name}" (retry)`];
    return [];
  });
}

function describe(state: InstanceState): string {
  const on = waitingOn(state);
  return on.length > 0 ? `${state.status}, waiting on ${on.join(", ")}` : state.status;
}

/**
 * The error for an instance that ended ERRORED: the driver's own code when that is why (a
 * fixture missing, an unregistered child, a request through a fixture that cannot send),
 * else `WF_TEST_INSTANCE_ERRORED` with the instance's error as its cause.
 */
function erroredError(state: InstanceState): WorkflowTestError {
  const error = state.error!;
  if (error.code.startsWith("WF_TEST_")) {
    return new WorkflowTestError(error.code as WorkflowTestCode, error.message);
  }
  const failedAt = state.erroredAt ? state.calls.get(state.erroredAt) : undefined;
  if (
    error.code === "WF_BINDING_MISSING" &&
    failedAt?.kind === "step" &&
    failedAt.name.startsWith("send ")
  ) {
    return new WorkflowTestError(
      "WF_TEST_UNSUPPORTED_CALL",
      `flow.request reached the binding "${failedAt.name.slice(5)}", whose fixture cannot send: give it a send(payload, { key }) method and answer with answerRequest`,
    );
  }
  return new WorkflowTestError(
    "WF_TEST_INSTANCE_ERRORED",
    `instance ${state.id} ended ERRORED: ${error.code}: ${error.message}`,
    { cause: new AnnalError("WF_UNCAUGHT_ERROR", error.message, { userCode: error.code }) },
  );
}
