/* The weights of a text-decoder module, laid out once at load in memory
 * the process owns.
 *
 * The text decoder reads each linear weight transposed, [in, out]
 * (stablehlo_lower.c): the layout IREE's llvm-cpu code streams fastest in
 * a decode matvec. As a transpose inside the module, IREE hoists it into a
 * private copy per function at load, next to the mapped original: 2-3x the
 * checkpoint's bytes. And a parameter IREE reads from a safetensors file
 * whose data is not 64-byte aligned (most files) it copies at load while
 * the mapped pages it copied from stay resident: twice that tensor.
 *
 * So every weight the module reads is a parameter of XLA_LAYOUT_SCOPE,
 * keyed "<name>" (as stored) or "<name>#t" (transposed), copied here from
 * the checkpoint in its own dtype (bf16 stays bf16) into one arena that
 * IREE imports without a copy (64-byte aligned tensors; 2 MiB aligned and
 * offered huge pages: a decode step streams every weight once, and 4 KiB
 * pages cost TLB misses), each source tensor's mapped pages dropped as soon
 * as it is copied. The process holds the weights once and peaks at one
 * tensor more. Which tensors: read from the emitted module text, so the
 * list is what the artifact will ask for. */
#ifndef VLM_BACKENDS_XLA_XLA_LAYOUT_H
#define VLM_BACKENDS_XLA_XLA_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "io/checkpoint.h"
#include "vlm.h"

/* The parameter scope of laid-out weights: in no file; the runtime
 * registers one buffer per key. */
#define XLA_LAYOUT_SCOPE "vlm.layout"

typedef struct vlm_xla_layout_tensor {
  char *key;         /* the parameter's key: canonical name, "#t" when transposed */
  void *data;        /* in the layout's arena */
  size_t bytes;
} vlm_xla_layout_tensor;

typedef struct vlm_xla_layout {
  vlm_xla_layout_tensor *tensors;
  int count;
  size_t bytes;      /* all tensors' bytes (the arena adds alignment padding) */
  void *arena;
  size_t arena_bytes;
} vlm_xla_layout;

/* Lays out every XLA_LAYOUT_SCOPE parameter `module_text` declares from
 * `weights`. A module without any gives an empty layout. */
vlm_status vlm_xla_layout_create(const vlm_checkpoint *weights, const char *module_text, vlm_xla_layout **out_layout);
void vlm_xla_layout_release(vlm_xla_layout *layout);
/* OK when `layout` holds every XLA_LAYOUT_SCOPE key `module_text`
 * declares (a layout shared by several modules); INTERNAL naming the first
 * missing one otherwise. */
vlm_status vlm_xla_layout_check(const vlm_xla_layout *layout, const char *module_text);

/* dst [columns, rows] = src [rows, columns]^T for elements of `element_size`
 * bytes (2 or 4). Exposed for tests. */
void vlm_xla_transpose(const void *src, void *dst, int64_t rows, int64_t columns, size_t element_size);

#endif
