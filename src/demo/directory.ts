import {
  baseEntries,
  findSlapd,
  launchSlapd,
  SLAPD_BASE,
  SLAPD_INSTALL_HINT,
  SLAPD_ROOT_DN,
  toLdif,
} from "../slapd/index.ts";
import { sampleLdif } from "./sample-data.ts";

export interface DemoDirectory {
  readonly url: string;
  readonly base: string;
  readonly bindDN: string;
  stop(): Promise<void>;
}

/**
 * The directory behind `npm start`: the same private slapd the tests use, on a fixed loopback
 * port, with its databases in `dataDir` kept across restarts. The demo organisation is loaded
 * on the first start only; later starts find the directory as the last run left it.
 *
 * `password` is the rootdn's (set anew at every start) and, on the first start, also the
 * password of the service account `uid=svc-annal,ou=services,dc=example,dc=org`.
 *
 * Without a slapd binary this returns `{ unavailable }` with how to install one, so that
 * `npm start` can run on without a directory; any other failure throws an `AnnalError`.
 */
export async function startDemoDirectory(options: {
  dataDir: string;
  port: number;
  password: string;
}): Promise<DemoDirectory | { unavailable: string }> {
  if (findSlapd() === undefined) {
    return { unavailable: `slapd (OpenLDAP's server) is not installed; ${SLAPD_INSTALL_HINT}` };
  }
  const server = await launchSlapd({
    dir: options.dataDir,
    port: options.port,
    rootPassword: options.password,
    seedLdif: () =>
      `${toLdif(baseEntries())}\n${sampleLdif({ servicePassword: options.password })}`,
  });
  return { url: server.url, base: SLAPD_BASE, bindDN: SLAPD_ROOT_DN, stop: () => server.stop() };
}
