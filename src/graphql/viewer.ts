import { escapeDNValue } from "../directory/index.ts";
import type { ServiceAccount } from "../auth/index.ts";
import type { Viewer } from "./context.ts";

/**
 * The DN an account's writes are made as: `[graphql] actorDN` with `{name}`, `{id}` and
 * `{base}` (the directory's base DN) filled in, values escaped as RFC 4514 asks.
 */
export function actorDN(
  template: string,
  account: ServiceAccount,
  base: string | undefined,
): string {
  const filled = (base === undefined ? template.replace(/,\s*\{base\}/g, "") : template)
    .replaceAll("{name}", escapeDNValue(account.name))
    .replaceAll("{id}", escapeDNValue(account.id));
  return base === undefined ? filled : filled.replaceAll("{base}", base);
}

export function viewerOf(
  account: ServiceAccount,
  template: string,
  base: string | undefined,
): Viewer {
  return { account, dn: actorDN(template, account, base), access: account.access };
}

/** `AuthInfo`, also `$viewer` of `@rest`. */
export function authInfo(viewer: Viewer) {
  return {
    dn: viewer.dn,
    name: viewer.account.name,
    access: [...viewer.access],
    serviceAccount: {
      id: viewer.account.id,
      name: viewer.account.name,
      access: [...viewer.access],
    },
  };
}

/** `Query.viewer`. */
export function viewerField(viewer: Viewer) {
  return {
    id: Buffer.from(`ServiceAccount:${viewer.account.id}`, "utf8").toString("base64"),
    dn: viewer.dn,
    authInfo: authInfo(viewer),
  };
}
