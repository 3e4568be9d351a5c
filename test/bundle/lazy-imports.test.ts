/**
 * Lazy imports of packages take one road, so what passes from source also
 * works in the bundle that ships: a CommonJS package is loaded as
 * `importCommonJs(import("pkg"))` (src/lazy-commonjs.ts); an ESM package,
 * which needs no help, is named in ESM_PACKAGES below. The web_fetch HTML
 * defect (a CommonJS package's names destructured from a bare `import()`,
 * present from source, absent in the bundle) cannot come back unnoticed
 * through a new lazy import.
 *
 * This reads src/ with TypeScript's parser (a type position such as
 * `typeof import("pkg")` loads nothing and is not counted). That each lazy
 * part then really works in the bundle is test/bundle/bundle-smoke.test.ts's job.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../harness/cli-process.js";

/** ESM packages src/ may import lazily without the helper, and why each is ESM. */
const ESM_PACKAGES: Record<string, string> = {
  "@modelcontextprotocol/sdk": "package.json says type: module; its subpaths have no default export",
  "@agentclientprotocol/sdk": "package.json says type: module; agentwire acp loads it (test/acp drives the bundle)",
  "@anthropic-ai/sdk": "a dual package whose exports give import() index.mjs (ESM, from source and in the bundle alike); its default export is the client class",
  openai: "a dual package whose exports give import() index.mjs; its default export is the client class (loaded when a request needs the SDK's client, wires/openai-client.ts)",
};

const HELPER = "importCommonJs";

interface LazyImport {
  where: string;
  specifier: string;
  /** The call's argument position: `importCommonJs(import("…"))`. */
  throughHelper: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** Every `import("…")` call in src/ whose argument is a string literal. */
function lazyImports(): LazyImport[] {
  const found: LazyImport[] = [];
  for (const file of sourceFiles(join(REPO_ROOT, "src"))) {
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const [argument] = node.arguments;
        if (argument && ts.isStringLiteralLike(argument)) {
          const parent = node.parent;
          const throughHelper = ts.isCallExpression(parent) && ts.isIdentifier(parent.expression) && parent.expression.text === HELPER && parent.arguments[0] === node;
          const { line } = source.getLineAndCharacterOfPosition(node.getStart());
          found.push({ where: `${relative(REPO_ROOT, file)}:${line + 1}`, specifier: argument.text, throughHelper });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** "pg" for "pg", "@scope/name" for "@scope/name/sub/path.js"; undefined for our own modules and Node's. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith(".") || specifier.startsWith("/") || specifier.startsWith("node:")) return undefined;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

function packageType(name: string): string | undefined {
  return (JSON.parse(readFileSync(join(REPO_ROOT, "node_modules", name, "package.json"), "utf8")) as { type?: string }).type;
}

/** ESM for import(): type module, or a dual package whose exports map `.` to an .mjs file for import / default. */
function importsAsEsm(name: string): boolean {
  const manifest = JSON.parse(readFileSync(join(REPO_ROOT, "node_modules", name, "package.json"), "utf8")) as { type?: string; exports?: any };
  if (manifest.type === "module") return true;
  const root = manifest.exports?.["."];
  const target = root?.import?.default ?? root?.import ?? root?.default;
  return typeof target === "string" && target.endsWith(".mjs");
}

describe("lazy imports of packages in src/", () => {
  const all = lazyImports();
  const ofPackages = all.filter((found) => packageOf(found.specifier) !== undefined);

  it("finds the lazy imports there are (the scan reads what it should)", () => {
    const wrapped = new Set(ofPackages.filter((found) => found.throughHelper).map((found) => found.specifier));
    for (const name of ["pg", "prom-client", "ioredis", "node-html-markdown"]) expect(wrapped, name).toContain(name);
    expect(all.some((found) => found.specifier === "./serve-start.js")).toBe(true);
  });

  it("every one goes through importCommonJs or names an ESM package of the list", () => {
    const bypassing = ofPackages.filter((found) => !found.throughHelper && !(packageOf(found.specifier)! in ESM_PACKAGES));
    expect(
      bypassing.map((found) => `${found.where}: import("${found.specifier}")`),
      "a CommonJS package's names arrive only as `default` in the bundle: write importCommonJs(import(\"…\")), or add an ESM package to ESM_PACKAGES",
    ).toEqual([]);
  });

  it("the helper is given CommonJS packages only, and the list names ESM packages src/ uses", () => {
    for (const found of ofPackages.filter((f) => f.throughHelper)) {
      // An ESM package's default export is not its exports object (the openai SDK's is the client class).
      expect(packageType(packageOf(found.specifier)!), `${found.where}: ${found.specifier} is ESM, import it without the helper`).not.toBe("module");
    }
    for (const name of Object.keys(ESM_PACKAGES)) {
      expect(importsAsEsm(name), `${name} in ESM_PACKAGES`).toBe(true);
      expect(
        ofPackages.some((found) => packageOf(found.specifier) === name),
        `${name} is in ESM_PACKAGES but src/ no longer imports it lazily`,
      ).toBe(true);
    }
  });
});
