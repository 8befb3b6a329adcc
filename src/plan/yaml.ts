// YAML in and out for plan and explain, through js-yaml — the parser client-node's own
// loadAllYaml and dumpYaml use — as plain data. client-node's versions also pass every object
// through its generated models: importing them costs each CLI start tens of MB and more than
// a second of CPU, and the models drop the fields they do not know (a newer API's, a CRD's),
// where the apiserver keeps them.

import { dump, loadAll } from 'js-yaml';

/** Every document of a YAML stream as plain data; an empty document is null. */
export function parseYamlDocuments(text: string): unknown[] {
  return loadAll(text);
}

/** Plain data (what JSON holds) as one YAML document. */
export function renderYaml(value: unknown): string {
  return dump(value);
}
