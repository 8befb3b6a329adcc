// The repository's root directory, the one place it is computed: every path the
// harness, the tests and the benchmarks need (scripts, manifests, examples,
// src/main.ts) is joined onto it.

import { fileURLToPath } from 'node:url';

/** The repository root, with a trailing separator. */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
