/** esbuild bundles the stylesheet imported by app.ts into app.css. */
declare module "*.css";
