/** `annal hooks send`: signs a change event as a webhook expects and posts it to annal. */
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { loadConfig, serverUrl } from "../../config/index.ts";
import { AnnalError } from "../../errors/index.ts";
import { signDelivery, STANDARD_HEADERS, type SignatureHeaders } from "../../hooks/index.ts";
import type { CommandModule } from "../command.ts";
import { HOOKS_SEND } from "../registry.ts";
import type { Output } from "../output.ts";
import { parseCommandLine, UsageError } from "../usage.ts";

export const command: CommandModule = {
  async run(args, output) {
    const [sub, ...rest] = args;
    if (sub !== "send") throw new UsageError("hooks needs send");
    const { values, positionals } = parseCommandLine(rest, HOOKS_SEND);
    const [hook, webhook, extra] = positionals[0]!.split("/");
    if (!hook || !webhook || extra !== undefined) {
      throw new UsageError("name the webhook as <hook>/<webhook>");
    }
    // Without --url, where the configuration says annal listens (PORT included), not 4173.
    const url =
      values.url ?? serverUrl((await loadConfig({ configPath: values.config, argv: [] })).server);
    return hooksSend(
      {
        hook,
        webhook,
        secret: process.env[values["secret-env"] ?? "WEBHOOK_SECRET"],
        url,
        ...(values.body === undefined ? {} : { body: values.body }),
        ...(values["body-file"] === undefined ? {} : { bodyFile: values["body-file"] }),
        ...(values.id === undefined ? {} : { id: values.id }),
      },
      output,
    );
  },
};

export interface HooksSendOptions {
  /** annal's base URL. Default `http://127.0.0.1:4173`; the command passes the configured one. */
  readonly url?: string;
  readonly hook: string;
  readonly webhook: string;
  /** The shared secret (read it from the environment, never from the command line). */
  readonly secret: string | undefined;
  /** The JSON body, sent byte for byte as given; or `bodyFile`. */
  readonly body?: string;
  readonly bodyFile?: string;
  /** The delivery id; default a new uuid. */
  readonly id?: string;
  /** Seconds since 1970; default now. */
  readonly timestamp?: number;
  /** The webhook's header names, when it does not use Standard Webhooks' defaults. */
  readonly headers?: SignatureHeaders;
}

/**
 * `annal hooks send <hook>/<webhook> (--body <json> | --body-file <f>) [--url U]
 * [--secret-env NAME]`: signs the body as the webhook expects and posts it, printing the
 * status and the answer.
 *
 * @throws AnnalError `ANNAL_WEBHOOK_SECRET_MISSING` without a secret,
 *   `ANNAL_WEBHOOK_REJECTED` when annal answers other than 2xx, `ANNAL_WEBHOOK_UNREACHABLE`.
 */
export async function hooksSend(options: HooksSendOptions, output: Output): Promise<number> {
  if (options.secret === undefined || options.secret === "") {
    throw new AnnalError("ANNAL_WEBHOOK_SECRET_MISSING", "no webhook secret to sign with", {
      hint: "put the secret in an environment variable (WEBHOOK_SECRET, or the one --secret-env names)",
    });
  }
  const body =
    options.body ??
    (options.bodyFile === undefined ? undefined : await readBodyFile(options.bodyFile));
  if (body === undefined) {
    throw new AnnalError("ANNAL_USAGE", "nothing to send", {
      hint: "give --body <json> or --body-file <path>",
    });
  }
  const id = options.id ?? `msg_${randomUUID()}`;
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const names = { ...STANDARD_HEADERS, ...options.headers };
  const target = new URL(
    `/-hooks/${encodeURIComponent(options.hook)}/${encodeURIComponent(options.webhook)}`,
    options.url ?? "http://127.0.0.1:4173",
  );
  let response: Response;
  try {
    response = await fetch(target, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        [names.id]: id,
        [names.timestamp]: String(timestamp),
        [names.signature]: signDelivery(options.secret, id, timestamp, body),
      },
      body,
    });
  } catch (error) {
    throw new AnnalError(
      "ANNAL_WEBHOOK_UNREACHABLE",
      `could not reach ${target.origin}: ${(error as Error).message}`,
      {
        hint: "is annal running? start it with npm start, or pass --url",
        cause: error,
      },
    );
  }
  const answer = await response.text();
  output.out(`${response.status} ${answer}`);
  if (!response.ok) {
    throw new AnnalError(
      "ANNAL_WEBHOOK_REJECTED",
      `the webhook answered ${response.status} ${answer}`,
      {
        hint: hintFor(response.status),
      },
    );
  }
  return 0;
}

function hintFor(status: number): string | undefined {
  switch (status) {
    case 401:
    case 403:
      return "check the secret, and that this machine's clock is right";
    case 404:
      return "check the hook and webhook names: /-hooks/<hook>/<webhook>";
    case 400:
      return "the body does not match the webhook's schema; annal's log says where";
    case 409:
      return "this source and eventId were accepted before with other content; use a new eventId";
    default:
      return undefined;
  }
}

/** `--body-file`'s content; a file that cannot be read is said so, with its path. */
async function readBodyFile(file: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT"
        ? "there is no such file"
        : code === "EISDIR"
          ? "it is a directory"
          : code === "EACCES"
            ? "permission denied"
            : `it cannot be read (${code ?? "error"})`;
    throw new AnnalError("ANNAL_FILE_UNREADABLE", `cannot read --body-file ${file}: ${why}`, {
      hint: "give the path of a file holding the JSON body, or the body itself with --body",
    });
  }
}
