import { processOutput, failureLines, type Output } from "./output.ts";
import { failedWorkList, failedWorkRetry, hooksSend } from "../hooks/cli.ts";
import { runTokenCommand } from "../rest/cli.ts";
import { runImport } from "./import.ts";
import { listProjections, runReplay } from "./replay.ts";
import { runStart } from "./start.ts";
import { USAGE } from "./help.ts";
import { parseCommandLine, UsageError } from "./usage.ts";
import { runVerify } from "./verify.ts";
import { versionLines } from "./version.ts";

const CONFIG_OPTION = { config: { type: "string" } } as const;

/**
 * Runs the `annal` command line and returns the exit status: 0, or 1 after printing
 * `annal: <CODE>: <message>` (and `annal: hint: ...`) on standard error.
 */
export async function main(
  argv: readonly string[],
  output: Output = processOutput,
): Promise<number> {
  try {
    return await run(argv, output);
  } catch (error) {
    for (const line of failureLines(error)) output.err(line);
    return 1;
  }
}

async function run(argv: readonly string[], output: Output): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined) throw new UsageError("no command given");

  if (command.startsWith("-")) {
    const { values } = parseCommandLine(
      argv,
      {
        version: { type: "boolean" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      { min: 0, max: 0, what: "" },
    );
    if (values.help) return printUsage(output);
    if (values.version) {
      for (const line of await versionLines(values.json === true)) output.out(line);
      return 0;
    }
    throw new UsageError(`${command} needs a command, or is not an option of annal`);
  }

  switch (command) {
    case "start": {
      const { values } = parseCommandLine(
        rest,
        { ...CONFIG_OPTION, only: { type: "string" } },
        { min: 0, max: 0, what: "", command: "start" },
      );
      return runStart(values);
    }
    case "replay": {
      const { values, positionals } = parseCommandLine(rest, CONFIG_OPTION, {
        min: 0,
        max: 1,
        what: "the projection to replay: annal replay <projection>",
        command: "replay",
      });
      // Without a name: which projections there are to replay.
      if (positionals[0] === undefined) return listProjections(values, output);
      return runReplay(positionals[0], values, output);
    }
    case "import": {
      const { values } = parseCommandLine(rest, CONFIG_OPTION, {
        min: 0,
        max: 0,
        what: "",
        command: "import",
      });
      return runImport(values, output);
    }
    case "failed-work": {
      const [sub, ...args] = rest;
      if (sub === "list") {
        const { values } = parseCommandLine(
          args,
          {
            ...CONFIG_OPTION,
            state: { type: "string" },
            limit: { type: "string" },
            json: { type: "boolean" },
          },
          { min: 0, max: 0, what: "", command: "failed-work list" },
        );
        return failedWorkList(values, output);
      }
      if (sub === "retry") {
        const { values, positionals } = parseCommandLine(args, CONFIG_OPTION, {
          min: 1,
          max: 1,
          what: "the failed work's id: annal failed-work retry <id>",
          command: "failed-work retry",
        });
        return failedWorkRetry(positionals[0]!, values, output);
      }
      throw new UsageError("failed-work needs list or retry");
    }
    case "hooks": {
      const [sub, ...args] = rest;
      if (sub !== "send") throw new UsageError("hooks needs send");
      const { values, positionals } = parseCommandLine(
        args,
        {
          url: { type: "string" },
          body: { type: "string" },
          "body-file": { type: "string" },
          "secret-env": { type: "string" },
          id: { type: "string" },
        },
        {
          min: 1,
          max: 1,
          what: "the webhook: annal hooks send <hook>/<webhook>",
          command: "hooks send",
        },
      );
      const [hook, webhook, extra] = positionals[0]!.split("/");
      if (!hook || !webhook || extra !== undefined) {
        throw new UsageError("name the webhook as <hook>/<webhook>");
      }
      return hooksSend(
        {
          hook,
          webhook,
          secret: process.env[values["secret-env"] ?? "WEBHOOK_SECRET"],
          ...(values.url === undefined ? {} : { url: values.url }),
          ...(values.body === undefined ? {} : { body: values.body }),
          ...(values["body-file"] === undefined ? {} : { bodyFile: values["body-file"] }),
          ...(values.id === undefined ? {} : { id: values.id }),
        },
        output,
      );
    }
    case "token":
      return runTokenCommand(rest, output);
    case "verify": {
      const { values } = parseCommandLine(rest, CONFIG_OPTION, {
        min: 0,
        max: 0,
        what: "",
        command: "verify",
      });
      return runVerify(values, output);
    }
    case "help":
      return printUsage(output);
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

function printUsage(output: Output): number {
  output.out(USAGE);
  return 0;
}
