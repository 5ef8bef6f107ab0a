/* Aligned allocation through a vlm_allocator, and bump-pointer arenas.
 *
 * Arenas hold the many small, same-lifetime objects a parser creates (JSON
 * nodes, tensor-name strings): one release frees them all, and a parse that
 * fails half-way leaks nothing. */
#ifndef VLM_CORE_ALLOC_H
#define VLM_CORE_ALLOC_H

#include <stddef.h>

#include "core/checked.h" /* vlm_size_add, vlm_size_multiply */
#include "vlm.h"

/* Cache-line alignment; also enough for every SIMD width we use (AVX-512). */
#define VLM_DEFAULT_ALIGNMENT 64

void *vlm_allocate(const vlm_allocator *allocator, size_t size, size_t alignment);
/* Like vlm_allocate but zero-filled. */
void *vlm_allocate_zeroed(const vlm_allocator *allocator, size_t size, size_t alignment);
void vlm_release(const vlm_allocator *allocator, void *pointer);

/* Large buffers streamed from memory (packed weights, bandwidth probes):
 * 2 MiB-aligned, their whole 2 MiB pages advised as transparent huge pages
 * where the kernel offers them (madvise mode), so a stream of loads is not
 * a TLB miss every 4 KiB. Released with vlm_release. Below 4 MiB it is
 * plain vlm_allocate. */
void *vlm_allocate_streamed(size_t size);


typedef struct vlm_arena_block vlm_arena_block;

typedef struct vlm_arena {
  const vlm_allocator *allocator;
  vlm_arena_block *head;   /* current block; older blocks chained behind */
  size_t block_size;       /* default size of new blocks */
  size_t bytes_allocated;  /* total bytes handed out (for diagnostics) */
} vlm_arena;

void vlm_arena_init(vlm_arena *arena, const vlm_allocator *allocator, size_t block_size);
/* Returns NULL when out of memory. Memory is not zeroed. */
void *vlm_arena_allocate(vlm_arena *arena, size_t size, size_t alignment);
/* Copies `length` bytes and appends a NUL. */
char *vlm_arena_strndup(vlm_arena *arena, const char *text, size_t length);
char *vlm_arena_strdup(vlm_arena *arena, const char *text);
/* Frees every block. The arena can be reused afterwards. */
void vlm_arena_reset(vlm_arena *arena);

#endif
