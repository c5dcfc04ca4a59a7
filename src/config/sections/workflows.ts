import { z } from "zod";
import { configPath, duration, integer, type SectionContext } from "../fields.ts";

export function workflowsSection(ctx: SectionContext) {
  return z
    .strictObject(
      {
        dir: configPath(ctx).prefault("workflows").meta({
          description:
            "The directory of workflow definitions: every `.ts` or `.js` file directly in it (not `_*`, not `*.test.*`) is bundled at start-up and must export `defineWorkflow({...})` by default; helpers it imports go in subfolders. It must exist.",
        }),
        concurrency: integer(1, 1_000).default(8).meta({
          description: "Instances this process's engine advances at once.",
          example: 16,
        }),
        timerInterval: duration().prefault("1s").meta({
          description:
            "How often due timers (step retries, deadlines) are looked for, on the database's clock.",
          example: "500ms",
        }),
        stepsPerAdvance: integer(1, 100_000).default(100).meta({
          description:
            "Steps one instance runs in a row before it yields to other instances (and is woken again).",
          example: 50,
        }),
        stickyRuns: integer(0, 1_000_000).default(1000).meta({
          description:
            "Runs of instance code this process keeps parked at the call they wait on, so that the next wake of the instance goes on from there instead of replaying its code from the start (a long instance's later steps would otherwise cost more and more). The oldest are dropped past this many (their next wake replays); 0 keeps none.",
          example: 10000,
        }),
      },
      { error: "expected a table: [workflows]" },
    )
    .optional()
    .meta({
      description:
        "The workflow engine's definitions. Without this table annal deploys no workflows; instances of versions deployed before keep running from their stored bundles.",
    });
}

/** The resolved `[workflows]` section. */
export type WorkflowsConfig = NonNullable<z.output<ReturnType<typeof workflowsSection>>>;
