import { gql } from "./api.ts";

/** Who is signed in, and what they may do: the navigation and the pages follow `access`. */
export interface Viewer {
  readonly dn: string | null;
  readonly name: string;
  readonly displayName: string;
  readonly access: ReadonlySet<string>;
  readonly principals: readonly string[];
}

export async function loadViewer(): Promise<Viewer> {
  const data = await gql<{
    viewer: {
      dn: string | null;
      authInfo: {
        name: string;
        access: string[];
        principals: string[];
        person: { displayName: string | null } | null;
      };
    };
  }>(`{ viewer { dn authInfo { name access principals person { displayName } } } }`);
  const { dn, authInfo } = data.viewer;
  return {
    dn,
    name: authInfo.name,
    displayName: authInfo.person?.displayName ?? authInfo.name,
    access: new Set(authInfo.access),
    principals: authInfo.principals,
  };
}
