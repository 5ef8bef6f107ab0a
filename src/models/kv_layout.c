#include "models/kv_layout.h"

#include "core/status.h"

vlm_status vlm_kv_layout_standard(int64_t layer_count, int64_t kv_heads, int64_t head_dim, vlm_kv_layout *out) {
  out->layer_count = 0;
  if (layer_count <= 0 || layer_count > VLM_KV_MAX_LAYERS)
    return VLM_ERROR(INVALID_ARGUMENT, "KV layout: %lld layers (1 to %d)", (long long)layer_count,
                     VLM_KV_MAX_LAYERS);
  if (kv_heads <= 0 || head_dim <= 0 || kv_heads > INT32_MAX / head_dim)
    return VLM_ERROR(INVALID_ARGUMENT, "KV layout: %lld KV heads of %lld values", (long long)kv_heads,
                     (long long)head_dim);
  out->layer_count = (int32_t)layer_count;
  for (int32_t l = 0; l < out->layer_count; l++)
    out->layers[l] = (vlm_kv_layer){.key_width = kv_heads * head_dim, .value_width = kv_heads * head_dim,
                                    .source = -1};
  return VLM_OK;
}

vlm_status vlm_kv_layout_check(const vlm_kv_layout *layout) {
  if (layout->layer_count <= 0 || layout->layer_count > VLM_KV_MAX_LAYERS)
    return VLM_ERROR(INVALID_ARGUMENT, "KV layout: %d layers (1 to %d)", layout->layer_count, VLM_KV_MAX_LAYERS);
  for (int32_t l = 0; l < layout->layer_count; l++) {
    const vlm_kv_layer *layer = &layout->layers[l];
    if (layer->key_width <= 0 || layer->key_width > INT32_MAX || layer->value_width < 0 ||
        layer->value_width > INT32_MAX || (layer->latent ? layer->value_width != 0 : layer->value_width == 0))
      return VLM_ERROR(INVALID_ARGUMENT,
                       "KV layout: layer %d has K width %lld and V width %lld (positive; a latent layer's V is 0)",
                       l, (long long)layer->key_width, (long long)layer->value_width);
    if (layer->source < 0) continue;
    if (layer->source >= l)
      return VLM_ERROR(INVALID_ARGUMENT, "KV layout: layer %d reads layer %d's KV, which is not an earlier layer", l,
                       layer->source);
    const vlm_kv_layer *source = &layout->layers[layer->source];
    if (source->source >= 0)
      return VLM_ERROR(INVALID_ARGUMENT, "KV layout: layer %d reads layer %d, which stores none of its own", l,
                       layer->source);
    if (source->key_width != layer->key_width || source->value_width != layer->value_width ||
        source->latent != layer->latent)
      return VLM_ERROR(INVALID_ARGUMENT, "KV layout: layer %d reads layer %d, whose KV has other widths", l,
                       layer->source);
  }
  return VLM_OK;
}

bool vlm_kv_layout_is_uniform(const vlm_kv_layout *layout, int64_t *width) {
  if (layout->layer_count <= 0) return false;
  int64_t w = layout->layers[0].key_width;
  for (int32_t l = 0; l < layout->layer_count; l++) {
    const vlm_kv_layer *layer = &layout->layers[l];
    if (layer->source >= 0 || layer->latent || layer->key_width != w || layer->value_width != w) return false;
  }
  if (width) *width = w;
  return true;
}

int64_t vlm_kv_layout_token_values(const vlm_kv_layout *layout) {
  int64_t values = 0;
  for (int32_t l = 0; l < layout->layer_count; l++)
    if (layout->layers[l].source < 0) values += layout->layers[l].key_width + layout->layers[l].value_width;
  return values;
}

int32_t vlm_kv_layout_storing_layers(const vlm_kv_layout *layout) {
  int32_t count = 0;
  for (int32_t l = 0; l < layout->layer_count; l++) count += layout->layers[l].source < 0;
  return count;
}

int64_t vlm_kv_layout_to_golden(const vlm_kv_layout *layout, int64_t kv_heads, const float *packed, int64_t length,
                                const int64_t *positions, int64_t count, double *out) {
  double *cursor = out;
  for (int32_t l = 0; l < layout->layer_count; l++) {
    const vlm_kv_layer *layer = &layout->layers[l];
    if (layer->source >= 0) continue;
    for (int half = 0; half < 2; half++) {
      int64_t width = half ? layer->value_width : layer->key_width;
      if (!width) continue;
      int64_t heads = layer->latent || kv_heads <= 0 || width % kv_heads ? 1 : kv_heads, dim = width / heads;
      for (int64_t head = 0; head < heads; head++)
        for (int64_t p = 0; p < count; p++)
          for (int64_t d = 0; d < dim; d++) *cursor++ = packed[positions[p] * width + head * dim + d];
      packed += length * width;
    }
  }
  return cursor - out;
}
