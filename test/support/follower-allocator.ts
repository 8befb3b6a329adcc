// The follow container's environment besides confighash's options: glibc's allocator
// settings (docs/design.md §11), set there and on no other container. The manifests and the
// chart tests hold both renderings to it.

export const FOLLOWER_ALLOCATOR_VARIABLES: readonly string[] = [
  'MALLOC_ARENA_MAX',
  'MALLOC_MMAP_THRESHOLD_',
];
