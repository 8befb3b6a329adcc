// The pieces bench/procs/inprocess.ts can measure alone (its header says what each is).
export const PARTS = [
  'confighash',
  'snapshots',
  'no-lookups',
  'lookups',
  'floor-b',
  'floor-a',
] as const;
export type Part = (typeof PARTS)[number];
