import { guidText, type DirectoryClient } from "../../directory/index.ts";
import { AnnalError } from "../../errors/index.ts";
import { directoryGroupsOf } from "../directory-groups.ts";
import type { FoundPrincipals, PersonIdentity } from "../persons.ts";
import type { PrincipalSource } from "../session-caller.ts";
import { fillFilterTemplate } from "./filter-template.ts";

const NOT_A_PERSON = new Set([
  "ANNAL_LDAP_LIMIT_EXCEEDED",
  "ANNAL_LDAP_NO_SUCH_OBJECT",
  "ANNAL_LDAP_INVALID_DN",
]);

export interface DirectoryOriginOptions {
  readonly directory: DirectoryClient;
  /** Where people and groups are looked for. */
  readonly base: string;
  /** `[auth.ldap] userFilter`, with `{login}`. */
  readonly userFilter: string;
  readonly origin: string;
  readonly maxPrincipals: number;
}

/** A person of the directory, found by their login and checked by a bind with their password. */
export interface DirectorySignIn {
  readonly identity: PersonIdentity;
  readonly principals: FoundPrincipals;
}

/**
 * The directory as an identity provider: people sign in with their login and password (an
 * LDAP bind as their entry), their principals are the groups they are members of, nested
 * groups resolved, and the same lookup refreshes them.
 */
export function directoryOrigin(options: DirectoryOriginOptions) {
  const { directory, base } = options;
  const groups = (dn: string) => directoryGroupsOf(directory, base, dn, options.maxPrincipals);

  const source: PrincipalSource = {
    async refresh(account) {
      if (account.dn === null) return { principals: [], count: 0 };
      const entry = await directory.get(account.dn, { attributes: ["1.1"] });
      if (entry === undefined) throw new Error(`the entry of ${account.name} is gone`);
      const found = await groups(account.dn);
      return { principals: found.groups, count: found.count };
    },
  };

  return {
    origin: options.origin,
    source,
    /**
     * Signs `login` in: finds their entry (exactly one must match), binds as it with
     * `password`. `ANNAL_SIGN_IN_FAILED` for an unknown login, several matches or a wrong
     * password alike (which one is not told); `ANNAL_SIGN_IN_UNAVAILABLE` when the directory
     * does not answer.
     */
    async signIn(login: string, password: string): Promise<DirectorySignIn> {
      const failed = () =>
        new AnnalError("ANNAL_SIGN_IN_FAILED", "the login or the password is wrong");
      if (login === "" || password === "" || login.length > 256) throw failed();
      try {
        const filter = fillFilterTemplate(options.userFilter, { login });
        const found = [];
        for await (const page of directory.search(base, {
          filter,
          // objectGUID: AD's entries have no entryUUID, and a DN changes with a rename.
          attributes: ["entryUUID", "objectGUID", "uid", "cn", "displayName"],
          binaryAttributes: ["objectGUID"],
          sizeLimit: 2,
          paged: false,
        })) {
          found.push(...page);
        }
        const entry = found.length === 1 ? found[0]! : undefined;
        if (entry === undefined || !(await directory.checkPassword(entry.dn, password))) {
          throw failed();
        }
        const first = (name: string) => {
          const values = entry.attributes[name];
          const value = values?.[0];
          return typeof value === "string" ? value : undefined;
        };
        const memberships = await groups(entry.dn);
        return {
          identity: {
            origin: options.origin,
            subject: first("entryUUID") ?? guidOf(entry.attributes.objectGUID) ?? entry.dn,
            name: first("uid") ?? login,
            displayName: first("displayName") ?? first("cn") ?? null,
            dn: entry.dn,
          },
          principals: { principals: memberships.groups, count: memberships.count },
        };
      } catch (error) {
        if (error instanceof AnnalError && error.code === "ANNAL_SIGN_IN_FAILED") throw error;
        // Several entries for one login, or none where the base should be: not a sign-in.
        if (error instanceof AnnalError && NOT_A_PERSON.has(error.code)) throw failed();
        throw new AnnalError(
          "ANNAL_SIGN_IN_UNAVAILABLE",
          "the directory could not be reached to sign in",
          {
            cause: error,
          },
        );
      }
    },
  };
}

export type DirectoryOrigin = ReturnType<typeof directoryOrigin>;

/** AD's objectGUID as GUID text, when the entry came with one. */
function guidOf(values: readonly (string | Buffer)[] | undefined): string | undefined {
  const value = values?.[0];
  return Buffer.isBuffer(value) ? guidText(value) : undefined;
}
