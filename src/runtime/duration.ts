// Durations as Go spells them (`10s`, `1m30s`, `2.5s`): the apiserver's `?timeout=` and the
// duration flags alike.

const UNIT_MS: Readonly<Record<string, number>> = {
  h: 3_600_000,
  m: 60_000,
  s: 1_000,
  ms: 1,
  us: 0.001,
  µs: 0.001,
  ns: 0.000001,
};

/** Parses a Go duration such as `10s`, `1m30s` or `2.5s`; undefined when malformed. */
export function parseGoDuration(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const part = /(\d+(?:\.\d*)?|\.\d+)(h|ms|m|s|us|µs|ns)/gy;
  let total = 0;
  let consumed = 0;
  for (let match = part.exec(text); match; match = part.exec(text)) {
    total += Number(match[1]) * UNIT_MS[match[2]!]!;
    consumed = part.lastIndex;
  }
  return consumed === text.length && consumed > 0 ? total : undefined;
}
