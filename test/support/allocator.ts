// Both containers' environment besides confighash's options: glibc's allocator settings
// (docs/design.md §11). The manifests and the chart tests hold both renderings to it.

export const ALLOCATOR_VARIABLES: readonly string[] = [
  'MALLOC_ARENA_MAX',
  'MALLOC_MMAP_THRESHOLD_',
];
