#include "backends/xla/xla_layout.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/status.h"
#include "core/tensor.h"

#define ARENA_ALIGNMENT ((size_t)2 << 20)
#define TENSOR_ALIGNMENT 64 /* IREE needs it of imported memory: docs/XLA_ROUTE.md hazard 1 */
#define TILE 32

void vlm_xla_transpose(const void *src, void *dst, int64_t rows, int64_t columns, size_t element_size) {
  /* Square tiles, so both the reads and the writes stay within a few
   * cache lines per row of the tile. */
  for (int64_t r0 = 0; r0 < rows; r0 += TILE)
    for (int64_t c0 = 0; c0 < columns; c0 += TILE) {
      int64_t r1 = r0 + TILE < rows ? r0 + TILE : rows, c1 = c0 + TILE < columns ? c0 + TILE : columns;
      if (element_size == 2) {
        const uint16_t *s = src;
        uint16_t *d = dst;
        for (int64_t r = r0; r < r1; r++)
          for (int64_t c = c0; c < c1; c++) d[c * rows + r] = s[r * columns + c];
      } else {
        const uint32_t *s = src;
        uint32_t *d = dst;
        for (int64_t r = r0; r < r1; r++)
          for (int64_t c = c0; c < c1; c++) d[c * rows + r] = s[r * columns + c];
      }
    }
}

void vlm_xla_layout_release(vlm_xla_layout *layout) {
  if (!layout) return;
  for (int i = 0; i < layout->count; i++) free(layout->tensors[i].key);
  free(layout->tensors);
  if (layout->arena) munmap(layout->arena, layout->arena_bytes);
  free(layout);
}

static const char PATTERN[] = "#stream.parameter.named<\"" XLA_LAYOUT_SCOPE "\"::\"";

static size_t align_up(size_t value, size_t alignment) { return (value + alignment - 1) / alignment * alignment; }

/* The checkpoint tensor behind `key` and whether it is transposed. */
static vlm_status find_source(const vlm_checkpoint *weights, const char *key, vlm_tensor *out, bool *out_transposed) {
  size_t length = strlen(key);
  *out_transposed = length > 2 && strcmp(key + length - 2, "#t") == 0;
  char name[512];
  if (length >= sizeof(name)) return VLM_ERROR(INVALID_ARGUMENT, "xla layout: parameter key '%.64s...' is too long", key);
  memcpy(name, key, length + 1);
  if (*out_transposed) name[length - 2] = '\0';
  VLM_RETURN_IF_ERROR(vlm_checkpoint_get(weights, name, VLM_DTYPE_INVALID, -1, NULL, out));
  size_t element = vlm_dtype_size(out->dtype);
  if (*out_transposed && (out->rank != 2 || (element != 2 && element != 4)))
    return VLM_ERROR(UNIMPLEMENTED, "xla layout: '%s' (rank %d, %zu-byte elements) cannot be read transposed", name,
                     out->rank, element);
  return VLM_OK;
}

static size_t tensor_bytes(const vlm_tensor *tensor) {
  size_t bytes = vlm_dtype_size(tensor->dtype);
  for (int d = 0; d < tensor->rank; d++) bytes *= (size_t)tensor->shape[d];
  return bytes;
}

/* The keys `module_text` declares, in order (each once: the emitter
 * declares a global once per module). */
static vlm_status collect_keys(const char *module_text, vlm_xla_layout *layout) {
  int capacity = 0;
  for (const char *at = strstr(module_text, PATTERN); at; at = strstr(at + 1, PATTERN)) capacity++;
  if (!capacity) return VLM_OK;
  layout->tensors = calloc((size_t)capacity, sizeof(*layout->tensors));
  if (!layout->tensors) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (const char *at = strstr(module_text, PATTERN); at; at = strstr(at + 1, PATTERN)) {
    const char *begin = at + sizeof(PATTERN) - 1, *end = strchr(begin, '"');
    if (!end) return VLM_ERROR(INTERNAL, "xla layout: unterminated parameter key in the module");
    vlm_xla_layout_tensor *tensor = &layout->tensors[layout->count++];
    tensor->key = strndup(begin, (size_t)(end - begin));
    if (!tensor->key) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  return VLM_OK;
}

static vlm_status fill(const vlm_checkpoint *weights, vlm_xla_layout *layout) {
  /* Sizes first, for one arena. */
  size_t offset = 0;
  for (int i = 0; i < layout->count; i++) {
    vlm_tensor source;
    bool transposed;
    VLM_RETURN_IF_ERROR(find_source(weights, layout->tensors[i].key, &source, &transposed));
    layout->tensors[i].bytes = tensor_bytes(&source);
    layout->bytes += layout->tensors[i].bytes;
    offset = align_up(offset, TENSOR_ALIGNMENT) + layout->tensors[i].bytes;
  }
  if (!layout->count) return VLM_OK;
  layout->arena_bytes = align_up(offset, ARENA_ALIGNMENT);
  /* Anonymous pages, zero until written: nothing resident before a tensor
   * is copied in. */
  void *arena = mmap(NULL, layout->arena_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (arena == MAP_FAILED)
    return VLM_ERROR(RESOURCE_EXHAUSTED, "xla layout: cannot map %zu bytes for the weights", layout->arena_bytes);
  layout->arena = arena;
  madvise(arena, layout->arena_bytes, MADV_HUGEPAGE); /* a hint: without THP it is small pages */
  offset = 0;
  for (int i = 0; i < layout->count; i++) {
    vlm_xla_layout_tensor *tensor = &layout->tensors[i];
    vlm_tensor source;
    bool transposed;
    VLM_RETURN_IF_ERROR(find_source(weights, tensor->key, &source, &transposed));
    offset = align_up(offset, TENSOR_ALIGNMENT);
    tensor->data = (char *)arena + offset;
    offset += tensor->bytes;
    if (transposed) vlm_xla_transpose(source.data, tensor->data, source.shape[0], source.shape[1],
                                      vlm_dtype_size(source.dtype));
    else memcpy(tensor->data, source.data, tensor->bytes);
    /* The module reads only this copy: drop the mapped pages now rather
     * than hold the weights twice. */
    vlm_checkpoint_evict(weights, source.data, tensor->bytes);
  }
  return VLM_OK;
}

vlm_status vlm_xla_layout_create(const vlm_checkpoint *weights, const char *module_text, vlm_xla_layout **out_layout) {
  *out_layout = NULL;
  vlm_xla_layout *layout = calloc(1, sizeof(*layout));
  if (!layout) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_status status = collect_keys(module_text, layout);
  if (!status) status = fill(weights, layout);
  if (status) {
    vlm_xla_layout_release(layout);
    return vlm_status_annotate(status, "laying out the xla module's weights");
  }
  *out_layout = layout;
  return VLM_OK;
}

vlm_status vlm_xla_layout_check(const vlm_xla_layout *layout, const char *module_text) {
  for (const char *at = strstr(module_text, PATTERN); at; at = strstr(at + 1, PATTERN)) {
    const char *begin = at + sizeof(PATTERN) - 1, *end = strchr(begin, '"');
    if (!end) return VLM_ERROR(INTERNAL, "xla layout: unterminated parameter key in the module");
    bool found = false;
    for (int i = 0; !found && layout && i < layout->count; i++)
      found = strlen(layout->tensors[i].key) == (size_t)(end - begin) &&
              memcmp(layout->tensors[i].key, begin, (size_t)(end - begin)) == 0;
    if (!found)
      return VLM_ERROR(INTERNAL, "xla layout: the shared layout has no '%.*s'", (int)(end - begin), begin);
  }
  return VLM_OK;
}
