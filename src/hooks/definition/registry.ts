import { parseHooksOptions, type HooksSettings, type WebhookSettings } from "./define.ts";
import { HooksInvalidError, HooksSecretMissingError } from "../errors.ts";
import { RateLimiter } from "../ingress/rate-limit.ts";
import { signingKey } from "./signature.ts";
import type { Hooks } from "./types.ts";

/** A webhook ready to serve: its settings with defaults applied and its secrets resolved. */
export interface ResolvedWebhook {
  readonly hook: string;
  readonly name: string;
  /** The hooks file it comes from, for messages. */
  readonly file: string | undefined;
  readonly body: WebhookSettings["body"];
  readonly map: WebhookSettings["map"];
  /** Header names, lower-case. */
  readonly headers: WebhookSettings["signature"]["headers"];
  readonly maxClockSkewMs: number;
  readonly limits: WebhookSettings["limits"];
  /** Undefined when the webhook has no rate limit. */
  readonly limiter: RateLimiter | undefined;
  /** The secrets a signature may be made with (never empty when it resolves). */
  secrets(): Promise<readonly string[]>;
}

export interface ResolvedProvider {
  readonly process: HooksSettings["provider"]["process"];
  readonly retry: { readonly limit: number; readonly delayMs: number; readonly maxDelayMs: number };
  readonly timeoutMs: number;
}

export interface ResolvedHooks {
  readonly name: string;
  readonly file: string | undefined;
  readonly webhooks: ReadonlyMap<string, ResolvedWebhook>;
  readonly provider: ResolvedProvider;
}

/** The hooks annal serves and processes, by name. */
export class HooksRegistry {
  private readonly byName: ReadonlyMap<string, ResolvedHooks>;

  constructor(hooks: readonly ResolvedHooks[]) {
    this.byName = new Map(hooks.map((h) => [h.name, h]));
  }

  get hooks(): readonly ResolvedHooks[] {
    return [...this.byName.values()];
  }

  hook(name: string): ResolvedHooks | undefined {
    return this.byName.get(name);
  }

  webhook(hook: string, name: string): ResolvedWebhook | undefined {
    return this.byName.get(hook)?.webhooks.get(name);
  }
}

export interface ResolveOptions {
  /** Where `${NAME}` references in secrets are read. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Resolve the secrets (default true). A command that only needs the providers' settings
   * (`failed-work retry`) passes false, so it runs without the webhook secrets.
   */
  readonly secrets?: boolean;
  /** The clock of the rate limiters (tests). */
  readonly now?: () => number;
}

/**
 * Checks hook definitions as a whole (names unique across files), applies their defaults and
 * resolves their secrets.
 *
 * @throws HooksInvalidError `ANNAL_HOOKS_INVALID` for a definition that is wrong or a hook
 *   name defined twice; HooksSecretMissingError `ANNAL_HOOKS_SECRET_MISSING` for a webhook
 *   whose secrets refer to variables that are not set.
 */
export function resolveHooks(
  definitions: readonly { readonly hooks: Hooks; readonly file?: string }[],
  options: ResolveOptions = {},
): HooksRegistry {
  const env = options.env ?? process.env;
  const seen = new Map<string, string | undefined>();
  const resolved = definitions.map(({ hooks, file }) => {
    let settings: HooksSettings;
    try {
      settings = parseHooksOptions(hooks.options);
    } catch (error) {
      if (error instanceof HooksInvalidError) {
        throw new HooksInvalidError(error.message, { file, cause: error });
      }
      throw error;
    }
    if (seen.has(settings.name)) {
      const other = seen.get(settings.name);
      throw new HooksInvalidError(
        `the hook name "${settings.name}" is defined ${other ? `in ${other} too` : "twice"}`,
        { file, hint: "give each hooks file's defineHooks a name of its own" },
      );
    }
    seen.set(settings.name, file);
    const webhooks = new Map(
      Object.entries(settings.webhooks).map(([name, webhook]) => [
        name,
        resolveWebhook(settings.name, name, webhook, file, env, options),
      ]),
    );
    const { retry, timeout, process } = settings.provider;
    const provider: ResolvedProvider = {
      process,
      retry: { limit: retry.limit, delayMs: retry.delay, maxDelayMs: retry.maxDelay },
      timeoutMs: timeout,
    };
    return { name: settings.name, file, webhooks, provider };
  });
  return new HooksRegistry(resolved);
}

function resolveWebhook(
  hook: string,
  name: string,
  webhook: WebhookSettings,
  file: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  options: ResolveOptions,
): ResolvedWebhook {
  const where = `webhook ${hook}/${name}`;
  const configured = webhook.signature.secrets;
  let secrets: () => Promise<readonly string[]>;
  if (typeof configured === "function") {
    secrets = async () => usable(await configured());
  } else if (options.secrets === false) {
    secrets = async () => [];
  } else {
    const { values, missing } = resolveReferences(configured, env);
    const list = usable(values);
    if (missing.length > 0 || list.length === 0) {
      throw new HooksSecretMissingError(where, missing, file);
    }
    if (list.some((secret) => signingKey(secret).length === 0)) {
      throw new HooksInvalidError(`${where}: a secret starting with whsec_ is not base64`, {
        file,
        hint: "a whsec_ secret is whsec_ followed by the base64 of the key bytes",
      });
    }
    const fixed = Object.freeze([...list]);
    secrets = async () => fixed;
  }
  const { rateLimit } = webhook;
  return {
    hook,
    name,
    file,
    body: webhook.body,
    map: webhook.map,
    headers: webhook.signature.headers,
    maxClockSkewMs: webhook.maxClockSkewMs,
    limits: webhook.limits,
    limiter:
      rateLimit === false
        ? undefined
        : new RateLimiter(rateLimit.requests, rateLimit.perMs, options.now),
    secrets,
  };
}

const REFERENCE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}$/;

/**
 * `${NAME}` is the variable's value and an error when it is unset; `${NAME:-default}` is the
 * default when the variable is unset or empty: the rules of annal.toml's references.
 */
function resolveReferences(
  references: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { values: string[]; missing: string[] } {
  const values: string[] = [];
  const missing: string[] = [];
  for (const reference of references) {
    const match = REFERENCE.exec(reference);
    if (!match) continue; // the definition's schema admits references only
    const [, name, fallback] = match as unknown as [string, string, string | undefined];
    const value = env[name];
    if (fallback !== undefined) values.push(value === undefined || value === "" ? fallback : value);
    else if (value === undefined) missing.push(name);
    else values.push(value);
  }
  return { values, missing };
}

/** Empty secrets are rotation slots left open: skipped. */
function usable(secrets: readonly string[]): string[] {
  return secrets.filter((secret) => typeof secret === "string" && secret !== "");
}
