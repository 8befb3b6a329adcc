// A small RFC 6902 applier (add, replace, remove on plain JSON), so tests can
// check that a patch applies and what it produces, as the apiserver would.

type Json = Record<string, unknown>;

export interface Operation {
  op: string;
  path: string;
  value?: unknown;
}

export function applyPatch<T>(document: T, operations: readonly Operation[]): T {
  const result = structuredClone(document) as unknown as Json;
  for (const operation of operations) {
    const segments = operation.path
      .split('/')
      .slice(1)
      .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
    const last = segments.pop();
    if (last === undefined) throw new Error(`cannot patch the root: ${operation.path}`);
    let parent: Json = result;
    for (const segment of segments) {
      const next = parent[segment];
      if (typeof next !== 'object' || next === null) {
        throw new Error(`path ${operation.path} does not exist (at ${segment})`);
      }
      parent = next as Json;
    }
    if (operation.op === 'add') parent[last] = structuredClone(operation.value);
    else if (operation.op === 'replace' || operation.op === 'remove') {
      if (!Object.hasOwn(parent, last))
        throw new Error(`${operation.op} of missing ${operation.path}`);
      if (operation.op === 'replace') parent[last] = structuredClone(operation.value);
      else delete parent[last];
    } else throw new Error(`unsupported op ${operation.op}`);
  }
  return result as unknown as T;
}

export function decodePatch(base64: string | undefined): Operation[] {
  if (base64 === undefined) return [];
  return JSON.parse(Buffer.from(base64, 'base64').toString('utf8')) as Operation[];
}
