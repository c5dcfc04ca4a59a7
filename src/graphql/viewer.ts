import { momentArgument } from "./moments.ts";
import { escapeDNValue } from "../directory/index.ts";
import { assertAccess, type Caller } from "../auth/index.ts";
import type { GatewayContext, Viewer } from "./context.ts";

/**
 * The DN a service account's writes are made as: `[graphql] actorDN` with `{name}`, `{id}`
 * and `{base}` (the directory's base DN) filled in, values escaped as RFC 4514 asks.
 */
export function actorDN(
  template: string,
  account: { readonly id: string; readonly name: string },
  base: string | undefined,
): string {
  const filled = (base === undefined ? template.replace(/,\s*\{base\}/g, "") : template)
    .replaceAll("{name}", escapeDNValue(account.name))
    .replaceAll("{id}", escapeDNValue(account.id));
  return base === undefined ? filled : filled.replaceAll("{base}", base);
}

/**
 * The viewer of a request: the caller, writing as themselves when a person (their own entry,
 * so the directory's history names them), as `[graphql] actorDN` when a service account.
 */
export function viewerOf(caller: Caller, template: string, base: string | undefined): Viewer {
  return {
    ...caller,
    actorDN:
      caller.account.kind === "person"
        ? caller.account.dn
        : actorDN(template, caller.account, base),
  };
}

/** `AuthInfo`, also `$viewer` of `@rest`. */
export function authInfo(viewer: Viewer) {
  const { account } = viewer;
  return {
    dn: viewer.actorDN,
    name: account.name,
    access: [...viewer.access],
    principals: [...viewer.principals],
    credential: viewer.credential,
    authority: viewer.authority,
    serviceAccount:
      account.kind === "service"
        ? { id: account.id, name: account.name, access: [...viewer.access] }
        : null,
    person:
      account.kind === "person"
        ? {
            id: account.id,
            name: account.name,
            displayName: account.displayName ?? null,
            origin: account.origin,
            subject: account.subject ?? null,
            dn: account.dn,
          }
        : null,
  };
}

/** `Query.viewer`. */
export function viewerField(viewer: Viewer) {
  const type = viewer.account.kind === "service" ? "ServiceAccount" : "Person";
  return {
    id: Buffer.from(`${type}:${viewer.account.id}`, "utf8").toString("base64"),
    dn: viewer.actorDN,
    authInfo: authInfo(viewer),
  };
}

/** `Query.access(at, account)`: for operators and auditors. */
export async function accessField(
  _parent: unknown,
  args: { at?: string | null; account?: string | null },
  context: GatewayContext,
) {
  const { viewer } = context;
  if (!viewer.has("operator")) assertAccess(viewer, "auditor");
  const at = momentArgument(args.at, context.clock(), { argument: "at", message: "Invalid at" });
  const report = await context.accessAt({
    ...(at === undefined ? {} : { at }),
    ...(args.account == null ? {} : { account: args.account }),
  });
  const iso = (date: Date | null) => (date === null ? null : date.toISOString());
  return {
    at: report.at.toISOString(),
    configuration: report.configuration && {
      ...report.configuration,
      activatedAt: report.configuration.activatedAt.toISOString(),
    },
    accounts: report.accounts.map((account) => ({
      ...account,
      principalsRefreshedAt: iso(account.principalsRefreshedAt),
      since: account.since.toISOString(),
    })),
  };
}
