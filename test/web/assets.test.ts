import t from "tap";
import { buildWebAssets } from "../../src/web/index.ts";

t.test(
  "the web application bundles from the package's own sources, nothing from elsewhere",
  async (t) => {
    const assets = await buildWebAssets();
    t.same([...assets.keys()].sort(), ["app.css", "app.js"]);
    const script = assets.get("app.js")!;
    t.equal(script.type, "text/javascript; charset=utf-8");
    t.match(script.etag, /^"[A-Za-z0-9_-]{27}"$/);
    const text = script.body.toString("utf8") + assets.get("app.css")!.body.toString("utf8");
    t.notMatch(text, /https?:\/\/(?!www\.w3\.org)/, "no absolute URL: no CDN, no other origin");
    t.notMatch(text, /\bimport\s*\(|from\s*"https?:/, "one file, no module loaded at run time");
  },
);
