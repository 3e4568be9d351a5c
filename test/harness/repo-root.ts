/** The repository's root: test paths, the CLI entries and the build outputs are named from here. */
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
