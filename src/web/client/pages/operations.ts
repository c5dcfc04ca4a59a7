import { gql, rest } from "../api.ts";
import { announce, errorBox, fill, h, time } from "../dom.ts";
import type { PageContext } from "../router.ts";
import { INSTANCE_LIST_FIELDS, instanceActions, instanceTable } from "./instances.ts";

interface FailedWork {
  id: string;
  hook: string;
  webhook: string;
  source: string;
  eventId: string;
  type: string;
  subject: string;
  state: string;
  attempts: number;
  reason: string;
  lastError: { code: string | null; message: string };
  failedAt: string;
  retries: number;
}

interface Readiness {
  status: string;
  checks: Record<string, { status: string; code?: string; detail?: string }>;
  projections: { name: string; version: number; position: number; lag: number }[];
  capture: {
    source: string;
    checkpoint: string | null;
    lastSuccessAt: string | null;
    lagSeconds: number | null;
    consecutiveFailures: number;
    lastError: { code: string; message: string; at: string } | null;
    changesNotRecorded: number;
  } | null;
}

/** The projections' lag and capture's state, from `/readyz`. */
async function statusSection(holder: HTMLElement): Promise<void> {
  const response = await fetch("/readyz", { headers: { accept: "application/json" } });
  const report = (await response.json()) as Readiness;
  const capture = report.capture;
  fill(
    holder,
    h(
      "p",
      null,
      "annal is ",
      h(
        "strong",
        { class: report.status === "ready" ? "ok" : "error-text", id: "readiness" },
        report.status,
      ),
      ". ",
      ...Object.entries(report.checks).map(([name, check]) =>
        h(
          "span",
          { class: "check" },
          `${name}: ${check.status}${check.code ? ` (${check.code})` : ""}; `,
        ),
      ),
    ),
    h(
      "table",
      { class: "results", id: "projections" },
      h("caption", null, "Projections"),
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          ...["Projection", "Version", "Position", "Lag (events)"].map((c) =>
            h("th", { scope: "col" }, c),
          ),
        ),
      ),
      h(
        "tbody",
        null,
        ...report.projections.map((p) =>
          h(
            "tr",
            { class: p.lag > 0 ? "behind" : "" },
            h("td", null, p.name),
            h("td", null, p.version),
            h("td", null, p.position),
            h("td", null, p.lag),
          ),
        ),
      ),
    ),
    capture
      ? h(
          "dl",
          { class: "data", id: "capture" },
          h("dt", null, "Capture source"),
          h("dd", null, capture.source),
          h("dt", null, "Checkpoint"),
          h("dd", null, capture.checkpoint ?? "—"),
          h("dt", null, "Last successful pass"),
          h(
            "dd",
            null,
            time(capture.lastSuccessAt),
            capture.lagSeconds === null ? "" : ` (${Math.round(capture.lagSeconds)} s ago)`,
          ),
          h("dt", null, "Failed passes in a row"),
          h("dd", null, capture.consecutiveFailures),
          h("dt", null, "Last error"),
          h(
            "dd",
            null,
            capture.lastError
              ? [
                  `${capture.lastError.code}: ${capture.lastError.message} at `,
                  time(capture.lastError.at),
                ]
              : "none",
          ),
          h("dt", null, "Changes not recorded"),
          h("dd", null, capture.changesNotRecorded),
        )
      : h("p", null, "Capture is not configured."),
  );
}

async function failedWorkSection(holder: HTMLElement): Promise<void> {
  const { items } = await rest<{ items: FailedWork[] }>("/api/failed-work?state=failed,retrying");
  const redraw = () =>
    void failedWorkSection(holder).catch((error: unknown) => fill(holder, errorBox(error)));
  fill(
    holder,
    items.length === 0
      ? h("p", { id: "failed-work-empty" }, "No failed work.")
      : h(
          "table",
          { class: "results", id: "failed-work" },
          h(
            "thead",
            null,
            h(
              "tr",
              null,
              ...[
                "Change event",
                "Webhook",
                "Subject",
                "Error",
                "Attempts",
                "Failed",
                "State",
                "",
              ].map((c) => h("th", { scope: "col" }, c)),
            ),
          ),
          h(
            "tbody",
            null,
            ...items.map((item) => {
              const result = h("span", { "aria-live": "polite" });
              return h(
                "tr",
                { "data-failed-work": item.id },
                h(
                  "td",
                  null,
                  `${item.type} ${item.eventId}`,
                  h("div", { class: "hint" }, item.source),
                ),
                h("td", null, `${item.hook}/${item.webhook}`),
                h("td", null, item.subject),
                h(
                  "td",
                  { class: "error-text" },
                  item.lastError.code ? `${item.lastError.code}: ` : "",
                  item.lastError.message,
                  h("div", { class: "hint" }, item.reason),
                ),
                h(
                  "td",
                  null,
                  item.attempts,
                  item.retries
                    ? ` (${item.retries} ${item.retries === 1 ? "retry" : "retries"})`
                    : "",
                ),
                h("td", null, time(item.failedAt)),
                h("td", null, h("span", { class: `state ${item.state}` }, item.state)),
                h(
                  "td",
                  null,
                  item.state === "failed"
                    ? h(
                        "button",
                        {
                          type: "button",
                          class: "retry",
                          onclick: async () => {
                            try {
                              await rest(`/api/failed-work/${encodeURIComponent(item.id)}/retry`, {
                                method: "POST",
                              });
                              announce(`Retry of ${item.eventId} queued`);
                              redraw();
                            } catch (error) {
                              fill(result, errorBox(error));
                            }
                          },
                        },
                        "Retry",
                      )
                    : null,
                  result,
                ),
              );
            }),
          ),
        ),
  );
}

async function erroredSection(holder: HTMLElement, isOperator: boolean): Promise<void> {
  const redraw = () =>
    void erroredSection(holder, isOperator).catch((error: unknown) =>
      fill(holder, errorBox(error)),
    );
  const { instances } = await gql<{ instances: { nodes: Parameters<typeof instanceTable>[0] } }>(
    `{ instances(state: ERRORED, first: 100) { nodes { ${INSTANCE_LIST_FIELDS} } } }`,
  );
  fill(
    holder,
    instances.nodes.length === 0
      ? h("p", { id: "errored-empty" }, "No instance has errored.")
      : instanceTable(instances.nodes, (node) => instanceActions(node, redraw, isOperator)),
  );
}

/** `/app/operations`: failed work and its retry, ERRORED instances, projections and capture. */
export async function operationsPage({ main, viewer }: PageContext): Promise<void> {
  const status = h("div", { class: "loading" }, "Loading…");
  const failed = h("div", { class: "loading" }, "Loading…");
  const errored = h("div", { class: "loading" }, "Loading…");
  fill(
    main,
    h("h1", null, "Operations"),
    h(
      "section",
      { "aria-labelledby": "failed-heading" },
      h("h2", { id: "failed-heading" }, "Failed work"),
      h(
        "p",
        { class: "hint" },
        "Change events whose processing failed for good. A retry processes the stored event again.",
      ),
      failed,
    ),
    h(
      "section",
      { "aria-labelledby": "errored-heading" },
      h("h2", { id: "errored-heading" }, "Errored instances"),
      errored,
    ),
    h(
      "section",
      { "aria-labelledby": "status-heading" },
      h("h2", { id: "status-heading" }, "Projections and capture"),
      status,
    ),
  );
  await Promise.all([
    failedWorkSection(failed).catch((error: unknown) => fill(failed, errorBox(error))),
    erroredSection(errored, viewer.access.has("operator")).catch((error: unknown) =>
      fill(errored, errorBox(error)),
    ),
    statusSection(status).catch((error: unknown) => fill(status, errorBox(error))),
  ]);
}
