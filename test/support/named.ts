/** Table rows keyed by their `name`, for `it.each(named(rows))('%s', (_name, row) => …)`. */
export function named<T extends { readonly name: string }>(rows: readonly T[]): [string, T][] {
  return rows.map((row) => [row.name, row]);
}
