// Minimal JSONPatch that brings a few annotation keys to their desired values.
// Creates a missing `metadata` or `annotations` map instead of adding into it:
// a patch that does not apply is rejected by the apiserver even with
// failurePolicy: Ignore.

export type JsonPatchOperation =
  | { readonly op: 'add'; readonly path: string; readonly value: unknown }
  | { readonly op: 'replace'; readonly path: string; readonly value: unknown }
  | { readonly op: 'remove'; readonly path: string };

/** Desired value per annotation key; `undefined` means the key must not exist. */
type DesiredAnnotations = Readonly<Record<string, string | undefined>>;

export interface AnnotationTarget {
  /** Path segments from the object's root to a `metadata` object. */
  readonly metadataPath: readonly string[];
  readonly desired: DesiredAnnotations;
}

export function buildAnnotationPatch(
  object: unknown,
  targets: readonly AnnotationTarget[],
): JsonPatchOperation[] {
  return targets.flatMap((target) => patchOneMetadata(object, target));
}

function patchOneMetadata(object: unknown, target: AnnotationTarget): JsonPatchOperation[] {
  const metadataPointer = toPointer(target.metadataPath);
  const metadata = valueAt(object, target.metadataPath);
  const wanted = Object.keys(target.desired)
    .sort()
    .filter((key) => target.desired[key] !== undefined);
  const wantedMap = (): Record<string, string> =>
    Object.fromEntries(wanted.map((key) => [key, target.desired[key]!]));

  if (!isPlainObject(metadata)) {
    if (wanted.length === 0) return [];
    return [{ op: 'add', path: metadataPointer, value: { annotations: wantedMap() } }];
  }
  const annotations = metadata.annotations;
  if (!isPlainObject(annotations)) {
    if (wanted.length === 0) return [];
    return [{ op: 'add', path: `${metadataPointer}/annotations`, value: wantedMap() }];
  }

  const operations: JsonPatchOperation[] = [];
  for (const key of Object.keys(target.desired).sort()) {
    const path = `${metadataPointer}/annotations/${escapePointerSegment(key)}`;
    const want = target.desired[key];
    const has = Object.hasOwn(annotations, key);
    if (want === undefined) {
      if (has) operations.push({ op: 'remove', path });
    } else if (!has) {
      operations.push({ op: 'add', path, value: want });
    } else if (annotations[key] !== want) {
      operations.push({ op: 'replace', path, value: want });
    }
  }
  return operations;
}

/** RFC 6901: `~` becomes `~0`, `/` becomes `~1`. */
export function escapePointerSegment(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

function toPointer(path: readonly string[]): string {
  return path.map((segment) => `/${escapePointerSegment(segment)}`).join('');
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let current = root;
  for (const segment of path) {
    if (!isPlainObject(current)) return undefined;
    current = current[segment];
  }
  return current;
}

function isPlainObject(value: unknown): value is { readonly [key: string]: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
