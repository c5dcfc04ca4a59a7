import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { createToken, type AccessFunction } from "../../src/auth/index.ts";
import { startAccountsAnnal, type AccountsAnnal } from "../support/accounts.ts";

/**
 * annal as `annal start` runs it (the demo organisation, sign-in, the demo's grants) with a
 * rules file of the test's own: `files` are written under the test's directory (`rules/…`),
 * `[rules] file` names `entry` (default `rules/index.ts`).
 */
export async function startRulesAnnal(
  t: { testdir(): string; testdirName: string; teardown(fn: () => unknown): void },
  options: {
    /** Files to write under a directory of the test's own; or `file`, an existing rules file. */
    files?: Readonly<Record<string, string>>;
    entry?: string;
    file?: string;
    /** More configuration; given the directory the files were written to. */
    extraToml?: string | ((dir: string) => string);
    development?: boolean;
  },
): Promise<
  AccountsAnnal & { dir: string; token(access: AccessFunction[], name?: string): Promise<string> }
> {
  // Beside the test's directory, which annal.toml's writer empties when it makes it.
  const dir = `${t.testdirName}-rules`;
  await rm(dir, { recursive: true, force: true });
  if (options.files) {
    await writeFiles(dir, options.files);
    t.teardown(() => rm(dir, { recursive: true, force: true }));
  }
  const app = await startAccountsAnnal(t, {
    extraToml: `[rules]
file = "${options.file ?? path.join(dir, options.entry ?? "rules/index.ts")}"

${typeof options.extraToml === "function" ? options.extraToml(dir) : (options.extraToml ?? "")}`,
    ...(options.development === undefined ? {} : { development: options.development }),
  });
  return {
    ...app,
    dir,
    async token(access, name = `svc-${access.join("-") || "none"}`) {
      const { token } = await createToken(app.db.pool, app.store, { name, access });
      return token;
    },
  };
}

export async function writeFiles(dir: string, files: Readonly<Record<string, string>>) {
  for (const [name, text] of Object.entries(files)) {
    const file = path.join(dir, name);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, text);
  }
}

/** A request with a bearer token; the body as JSON when it is an object. */
export async function call(
  url: string,
  options: {
    token?: string;
    method?: string;
    body?: unknown;
    headers?: Record<string, string>;
  } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | URLSearchParams | undefined;
  if (options.body !== undefined) {
    if (typeof options.body === "string" || options.body instanceof URLSearchParams) {
      body = options.body;
    } else {
      body = JSON.stringify(options.body);
      headers["content-type"] ??= "application/json";
    }
  }
  return fetch(url, {
    method: options.method ?? (body ? "POST" : "GET"),
    headers,
    ...(body ? { body } : {}),
  });
}

const DEMO_DIR = path.resolve(import.meta.dirname, "../../ops/demo");

/**
 * annal with the demo's rules file, templates and mail as ops/demo/annal.toml names them,
 * sending through SMTP on `smtpPort`; with `catcher`, annal's own demo mail catcher listens
 * there ([messaging.demo]).
 */
export function startDemoRulesAnnal(
  t: Parameters<typeof startRulesAnnal>[0],
  options: { smtpPort: number; catcher?: boolean },
) {
  return startRulesAnnal(t, {
    file: path.join(DEMO_DIR, "rules/index.ts"),
    extraToml: `[messaging]
from = "Example IT <it@example.org>"

[messaging.transports.smtp]
host = "127.0.0.1"
port = ${options.smtpPort}
${options.catcher ? `\n[messaging.demo]\nport = ${options.smtpPort}\n` : ""}
[templating.partials]
welcome = "${DEMO_DIR}/templates/welcome.hbs"
signature = "${DEMO_DIR}/templates/signature.hbs"
`,
  });
}
