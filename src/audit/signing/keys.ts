import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
} from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { AnnalError } from "../../errors/index.ts";

/** A public key as `/api/keys` serves it (RFC 8037: OKP, Ed25519). */
export interface PublicJwk {
  readonly kty: "OKP";
  readonly crv: "Ed25519";
  readonly x: string;
  readonly kid: string;
  readonly alg: "EdDSA";
  readonly use: "sig";
}

/** The key that signs exports, and its public half. */
export interface SigningKey {
  readonly privateKey: KeyObject;
  readonly kid: string;
  readonly publicJwk: PublicJwk;
}

/** The file, in the data directory, of the key generated when none is configured. */
export const GENERATED_KEY_FILE = "export-signing-key.pem";

/**
 * The export signing key: `pem` (the configuration's `[audit] signingKey`, a `${VARIABLE}`
 * reference to an Ed25519 private key in PEM), or else the one generated into `dataDir` on
 * first use and read from there ever after (mode 0600). The key id is the public key's JWK
 * thumbprint (RFC 7638), so the same key always has the same id.
 *
 * With several annal processes on several machines, configure the key: each data directory
 * would otherwise generate a key of its own.
 */
export async function loadSigningKey(options: {
  readonly pem?: string | undefined;
  readonly dataDir: string;
}): Promise<SigningKey> {
  const pem = options.pem ?? (await generatedKey(options.dataDir));
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch (error) {
    throw keyError("it is not a private key in PEM", error);
  }
  if (privateKey.asymmetricKeyType !== "ed25519") {
    throw keyError(
      `it is a ${privateKey.asymmetricKeyType ?? "symmetric"} key, not an Ed25519 one`,
    );
  }
  const { x } = createPublicKey(privateKey).export({ format: "jwk" }) as { x: string };
  const kid = thumbprint(x);
  return {
    privateKey,
    kid,
    publicJwk: { kty: "OKP", crv: "Ed25519", x, kid, alg: "EdDSA", use: "sig" },
  };
}

/** RFC 7638: SHA-256 of the required members in lexicographic order, base64url. */
function thumbprint(x: string): string {
  const members = JSON.stringify({ crv: "Ed25519", kty: "OKP", x });
  return createHash("sha256").update(members).digest("base64url");
}

async function generatedKey(dataDir: string): Promise<string> {
  const file = path.join(dataDir, GENERATED_KEY_FILE);
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const { privateKey } = generateKeyPairSync("ed25519");
  const pem = privateKey.export({ format: "pem", type: "pkcs8" }) as string;
  await mkdir(dataDir, { recursive: true });
  try {
    // `wx`: two processes starting at once keep the first one's key.
    await writeFile(file, pem, { flag: "wx", mode: 0o600 });
    return pem;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return readFile(file, "utf8");
  }
}

function keyError(why: string, cause?: unknown): AnnalError {
  return new AnnalError("ANNAL_SIGNING_KEY_INVALID", `the export signing key is unusable: ${why}`, {
    cause,
  });
}
