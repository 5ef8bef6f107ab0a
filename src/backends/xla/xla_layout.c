#include "backends/xla/xla_layout.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/status.h"
#include "core/tensor.h"

/* Buffers are 2 MiB aligned (IREE needs 64 bytes: docs/XLA_ROUTE.md hazard
 * 1) so the kernel can back them with huge pages: a decode step streams
 * every weight once, and 4 KiB pages cost it TLB misses. */
#define LAYOUT_ALIGNMENT ((size_t)2 << 20)
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
  for (int i = 0; i < layout->count; i++) {
    free(layout->tensors[i].name);
    free(layout->tensors[i].data);
  }
  free(layout->tensors);
  free(layout);
}

static const char PATTERN[] = "#stream.parameter.named<\"" XLA_TRANSPOSED_SCOPE "\"::\"";

static int count_tensors(const char *text) {
  int count = 0;
  for (const char *at = strstr(text, PATTERN); at; at = strstr(at + 1, PATTERN)) count++;
  return count;
}

static vlm_status lay_out(const vlm_checkpoint *weights, const char *name, vlm_xla_layout_tensor *out) {
  vlm_tensor view;
  VLM_RETURN_IF_ERROR(vlm_checkpoint_get(weights, name, VLM_DTYPE_INVALID, 2, (int64_t[]){-1, -1}, &view));
  size_t element = vlm_dtype_size(view.dtype);
  if (element != 2 && element != 4)
    return VLM_ERROR(UNIMPLEMENTED, "xla layout: tensor '%s' has %zu-byte elements", name, element);
  size_t bytes = (size_t)view.shape[0] * (size_t)view.shape[1] * element;
  size_t rounded = (bytes + LAYOUT_ALIGNMENT - 1) / LAYOUT_ALIGNMENT * LAYOUT_ALIGNMENT;
  out->data = aligned_alloc(LAYOUT_ALIGNMENT, rounded ? rounded : LAYOUT_ALIGNMENT);
  if (!out->data) return VLM_ERROR(RESOURCE_EXHAUSTED, "xla layout: out of memory for '%s' (%zu bytes)", name, bytes);
  madvise(out->data, rounded, MADV_HUGEPAGE); /* a hint: without THP it is small pages */
  vlm_xla_transpose(view.data, out->data, view.shape[0], view.shape[1], element);
  /* The module never reads the stored layout of this tensor: drop its
   * pages now rather than hold the weights twice. */
  vlm_checkpoint_evict(weights, view.data, bytes);
  out->bytes = bytes;
  out->rows = view.shape[1];
  out->columns = view.shape[0];
  return VLM_OK;
}

vlm_status vlm_xla_layout_create(const vlm_checkpoint *weights, const char *module_text, vlm_xla_layout **out_layout) {
  *out_layout = NULL;
  vlm_xla_layout *layout = calloc(1, sizeof(*layout));
  int capacity = count_tensors(module_text);
  if (layout && capacity) layout->tensors = calloc((size_t)capacity, sizeof(*layout->tensors));
  if (!layout || (capacity && !layout->tensors)) {
    vlm_xla_layout_release(layout);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  vlm_status status = VLM_OK;
  for (const char *at = strstr(module_text, PATTERN); !status && at; at = strstr(at + 1, PATTERN)) {
    const char *begin = at + sizeof(PATTERN) - 1, *end = strchr(begin, '"');
    if (!end) {
      status = VLM_ERROR(INTERNAL, "xla layout: unterminated parameter name in the module");
      break;
    }
    vlm_xla_layout_tensor *tensor = &layout->tensors[layout->count++];
    tensor->name = strndup(begin, (size_t)(end - begin));
    status = tensor->name ? lay_out(weights, tensor->name, tensor) : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    if (!status) layout->bytes += tensor->bytes;
  }
  if (status) {
    vlm_xla_layout_release(layout);
    return vlm_status_annotate(status, "laying out the xla module's weights");
  }
  *out_layout = layout;
  return VLM_OK;
}
