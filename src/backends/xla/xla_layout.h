/* Weights a module reads in a layout of its own, made once at load.
 *
 * The text decoder reads each linear weight transposed, [in, out]
 * (stablehlo_lower.c): the layout IREE's llvm-cpu code streams fastest in
 * a decode matvec. As a transpose inside the module, IREE hoists it into a
 * private copy per function at load, next to the mapped original: 2-3x the
 * checkpoint's bytes. Laid out here instead, in the checkpoint's own dtype
 * (bf16 stays bf16), into aligned host memory IREE imports without a copy,
 * each source tensor's mapped pages dropped as soon as it is copied, the
 * process holds one copy of those weights and peaks at one tensor more.
 *
 * Which weights: the module's parameters under XLA_TRANSPOSED_SCOPE
 * ("vlm.transposed"), read from the emitted module text, so the list is
 * always what the artifact will ask for. */
#ifndef VLM_BACKENDS_XLA_XLA_LAYOUT_H
#define VLM_BACKENDS_XLA_XLA_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "io/checkpoint.h"
#include "vlm.h"

/* The parameter scope of transposed linear weights, keyed by canonical
 * name: in no file; the runtime registers one buffer per weight. */
#define XLA_TRANSPOSED_SCOPE "vlm.transposed"

typedef struct vlm_xla_layout_tensor {
  char *name;        /* canonical tensor name (the parameter's key) */
  void *data;        /* [shape[1], shape[0]] of the checkpoint's [shape[0], shape[1]] */
  size_t bytes;
  int64_t rows, columns; /* of the transposed tensor */
} vlm_xla_layout_tensor;

typedef struct vlm_xla_layout {
  vlm_xla_layout_tensor *tensors;
  int count;
  size_t bytes;      /* all tensors */
} vlm_xla_layout;

/* Lays out every transposed parameter `module_text` declares from
 * `weights`. A module without any gives an empty layout. */
vlm_status vlm_xla_layout_create(const vlm_checkpoint *weights, const char *module_text, vlm_xla_layout **out_layout);
void vlm_xla_layout_release(vlm_xla_layout *layout);

/* dst [columns, rows] = src [rows, columns]^T for elements of `element_size`
 * bytes (2 or 4). Exposed for tests. */
void vlm_xla_transpose(const void *src, void *dst, int64_t rows, int64_t columns, size_t element_size);

#endif
