/* A decoder's KV layout, per layer: what one cached token holds there.
 *
 * A family owns its layout (vlm_family.kv_layout; NULL: the standard one,
 * every layer storing K and V of kv_heads * head_dim values). Layers may
 * differ: K and V widths of their own (Gemma 3n's, MLA's expanded form), a
 * layer that stores nothing and reads an earlier layer's KV (Gemma 3n's
 * last num_kv_shared_layers), and a latent layer whose token is one vector
 * (MLA: kv_lora_rank + qk_rope_head_dim values, its key; no value). The
 * backends' caches, the prefix cache's blocks and admission's memory all
 * size a token by this layout (vlm_kv_layout_token_values). */
#ifndef VLM_MODELS_KV_LAYOUT_H
#define VLM_MODELS_KV_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "vlm.h"

#define VLM_KV_MAX_LAYERS 256

typedef struct vlm_kv_layer {
  int64_t key_width;   /* values per token: K (a latent layer's latent + rope key) */
  int64_t value_width; /* values per token: V (0 for a latent layer) */
  int32_t source;      /* -1: stores its own; else the earlier layer whose KV it reads */
  bool latent;         /* one compressed vector per token (MLA) */
} vlm_kv_layer;

typedef struct vlm_kv_layout {
  int32_t layer_count;
  vlm_kv_layer layers[VLM_KV_MAX_LAYERS];
} vlm_kv_layout;

/* Every layer storing K and V of kv_heads * head_dim values. */
vlm_status vlm_kv_layout_standard(int64_t layer_count, int64_t kv_heads, int64_t head_dim, vlm_kv_layout *out);
/* INVALID_ARGUMENT naming the layer when the layout is not one a cache can
 * hold: widths positive (a latent layer's value 0), a source earlier than
 * its reader that stores its own KV, with the reader's widths. */
vlm_status vlm_kv_layout_check(const vlm_kv_layout *layout);
/* Whether every layer stores K and V of one width (`width`, if non-NULL). */
bool vlm_kv_layout_is_uniform(const vlm_kv_layout *layout, int64_t *width);
/* Values one cached token takes over every layer that stores its own. */
int64_t vlm_kv_layout_token_values(const vlm_kv_layout *layout);
/* Layers that store their own KV. */
int32_t vlm_kv_layout_storing_layers(const vlm_kv_layout *layout);

/* Reorders packed KV of `length` positions (per storing layer, K [length,
 * key_width] then V [length, value_width]: what read_kv and inspect_kv
 * give) into Transformers' cache order at `positions` [count] (each in
 * [0, length)): per storing layer, K then V, each [heads, count,
 * width / heads] with heads = kv_heads (1 for a latent layer). Returns the
 * values written to `out` (count * vlm_kv_layout_token_values). */
int64_t vlm_kv_layout_to_golden(const vlm_kv_layout *layout, int64_t kv_heads, const float *packed, int64_t length,
                                const int64_t *positions, int64_t count, double *out);

#endif
