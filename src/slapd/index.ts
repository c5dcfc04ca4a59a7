/**
 * A private OpenLDAP `slapd` on a loopback port, with the accesslog overlay: what the tests
 * and the demo run annal against. annal itself never needs it (it reads any LDAPv3 server);
 * this module starts one from Debian's `slapd` package, in a directory of its own.
 */
export {
  ACCESSLOG_BASE,
  SLAPD_BASE,
  SLAPD_ROOT_DN,
  SLAPD_SERVICE_DN,
  slapdConfig,
  slapdPaths,
  sshaPassword,
  type SlapdConfigOptions,
  type SlapdTls,
} from "./config.ts";
export { baseEntries, toLdif, toLdifChunks, type LdifEntry } from "./ldif.ts";
export {
  findSlapd,
  launchSlapd,
  onProcessExit,
  SLAPD_INSTALL_HINT,
  type SlapdLaunchOptions,
  type SlapdServer,
} from "./server.ts";
