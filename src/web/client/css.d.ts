// esbuild bundles the stylesheets main.ts imports (app.css).
declare module "*.css";
