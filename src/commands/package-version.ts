// The version this copy of confighash is: package.json's, beside src/ when run from source,
// beside dist/ once installed. `confighash version` prints it; the metrics carry it.

import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  const file = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}
