import { createHash } from "node:crypto";
import path from "node:path";
import { build } from "esbuild";
import { AnnalError } from "../errors/index.ts";
import { PACKAGE_ROOT } from "../package-root.ts";

/** One built file of the web application, as served. */
export interface WebAsset {
  readonly body: Buffer;
  readonly type: string;
  /** A strong ETag of the body. */
  readonly etag: string;
}

/** The client's sources: shipped in the package as they are (esbuild bundles them). */
export const CLIENT_ENTRY = path.join(PACKAGE_ROOT, "src", "web", "client", "main.ts");

const TYPES: Readonly<Record<string, string>> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};

/**
 * Bundles the web application (`client/main.ts` and the CSS it imports) with esbuild, in
 * memory: `app.js` and `app.css`. The package ships the sources, and the bundle is made by the
 * process that serves it (about 100 ms, once), so `npm install && npm start` needs no build
 * step and a test serves exactly the sources it runs with. Nothing is fetched from elsewhere.
 */
export async function buildWebAssets(): Promise<ReadonlyMap<string, WebAsset>> {
  let result;
  try {
    result = await build({
      entryPoints: { app: CLIENT_ENTRY },
      bundle: true,
      write: false,
      format: "esm",
      target: ["es2022"],
      minify: true,
      sourcemap: false,
      legalComments: "none",
      outdir: "/assets",
      logLevel: "silent",
    });
  } catch (error) {
    throw new AnnalError("ANNAL_WEB_ASSETS_UNAVAILABLE", "the web application could not be built", {
      cause: error,
    });
  }
  const assets = new Map<string, WebAsset>();
  for (const file of result.outputFiles) {
    const name = path.basename(file.path);
    const body = Buffer.from(file.contents);
    const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
    assets.set(name, { body, type: TYPES[path.extname(name)] ?? "application/octet-stream", etag });
  }
  return assets;
}
