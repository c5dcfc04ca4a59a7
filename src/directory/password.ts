import { InvalidCredentialsError } from "ldapts";
import type { DirectoryTransport } from "./transport.ts";

/**
 * Whether `password` is the password of `dn`: a simple bind on a connection of its own (never
 * one of the pool's, which stay bound as annal), closed again at once. An empty password is
 * refused before anything is sent: LDAP takes a bind with one as an anonymous bind, which
 * would succeed (RFC 4513 §5.1.2). A wrong DN or password is `false`; a directory that cannot
 * be reached throws.
 */
export async function checkPassword(
  options: { readonly transport: DirectoryTransport; readonly timeoutMs: number },
  dn: string,
  password: string,
): Promise<boolean> {
  if (password === "" || dn === "") return false;
  const client = options.transport.client({
    timeout: options.timeoutMs,
    connectTimeout: Math.min(options.timeoutMs, 5_000),
  });
  try {
    await client.bind(dn, password);
    return true;
  } catch (error) {
    if (error instanceof InvalidCredentialsError) return false;
    throw error;
  } finally {
    await client.unbind().catch(() => {});
  }
}
