// "Otherwise unchanged" (docs/design.md §4 adoption): two pod templates agree once
// confighash's own annotations are set aside. Iterative, so that a template
// nested thousands of levels deep is compared, not a stack overflow.

import { HASH, SNAPSHOTS, SOURCES } from './annotations.js';
import { isObject } from './object.js';

export function templatesEqualIgnoringOurs(a: unknown, b: unknown): boolean {
  return deepEqual(withoutOurAnnotations(a), withoutOurAnnotations(b));
}

function withoutOurAnnotations(template: unknown): unknown {
  if (!isObject(template) || !isObject(template.metadata)) return template;
  const annotations = template.metadata.annotations;
  if (!isObject(annotations)) return template;
  const { [HASH]: _hash, [SOURCES]: _sources, [SNAPSHOTS]: _snapshots, ...others } = annotations;
  const metadata = { ...template.metadata, annotations: others };
  if (Object.keys(others).length === 0) delete (metadata as { annotations?: unknown }).annotations;
  return { ...template, metadata };
}

/** Structural equality of JSON values, with an explicit stack instead of recursion. */
export function deepEqual(left: unknown, right: unknown): boolean {
  const pending: [unknown, unknown][] = [[left, right]];
  for (let pair = pending.pop(); pair; pair = pending.pop()) {
    const [a, b] = pair;
    if (a === b) continue;
    if (Array.isArray(a)) {
      if (!Array.isArray(b) || a.length !== b.length) return false;
      for (let i = 0; i < a.length; i++) pending.push([a[i], b[i]]);
      continue;
    }
    if (!isObject(a) || !isObject(b)) return false;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    for (const key of keys) {
      if (!Object.hasOwn(b, key)) return false;
      pending.push([a[key], b[key]]);
    }
  }
  return true;
}
