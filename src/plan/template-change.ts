// Whether the pod template itself changes, whatever the config: a new image, an
// env value, a label. Compared as the apiserver would store it (a server-side
// dry-run apply fills the defaults) against the live template, leaving out the
// annotations the webhook writes: those are the config's part of the verdict.

import { HASH, isObject, type JsonObject, SOURCES } from '../workload/index.js';

const WEBHOOK_WRITTEN = [HASH, SOURCES];

/** How many differing fields a reason names before it says "and N more". */
const NAMED_FIELDS = 3;

/** The template's fields that differ (`spec.containers[0].image`), empty when none. */
export function templateDifferences(live: unknown, applied: unknown): string[] {
  const [before, after] = [live, applied].map(withoutWebhookAnnotations);
  return differingPaths(before, after, 'template');
}

/** The reason line for differences, naming the first few fields. */
export function describeTemplateChange(paths: readonly string[]): string {
  const named = paths.slice(0, NAMED_FIELDS).join(', ');
  const more = paths.length > NAMED_FIELDS ? ` and ${paths.length - NAMED_FIELDS} more` : '';
  return `the pod template itself changes (${named}${more}): it rolls whatever the config`;
}

function withoutWebhookAnnotations(template: unknown): unknown {
  if (!isObject(template) || !isObject(template.metadata)) return template;
  const { annotations, ...metadata } = template.metadata;
  if (!isObject(annotations)) return template;
  const kept = Object.fromEntries(
    Object.entries(annotations).filter(([key]) => !WEBHOOK_WRITTEN.includes(key)),
  );
  const cleaned: JsonObject =
    Object.keys(kept).length > 0 ? { ...metadata, annotations: kept } : metadata;
  return { ...template, metadata: cleaned };
}

function differingPaths(a: unknown, b: unknown, path: string): string[] {
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return [path];
    return a.flatMap((item, index) => differingPaths(item, b[index], `${path}[${index}]`));
  }
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((key) => differingPaths(a[key], b[key], path ? `${path}.${key}` : key));
  }
  return a === b ? [] : [path];
}
