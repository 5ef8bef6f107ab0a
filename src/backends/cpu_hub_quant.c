/* See cpu_hub_quant.h. The packing was checked against the public GPTQ and
 * AWQ code (AutoGPTQ's QuantLinear.pack, GPTQModel's v1 -> v2 zero
 * conversion, AutoAWQ's pack order and its unpack_awq / reverse order);
 * tools/oracle/quant_oracle.py writes checkpoints the same way and the
 * goldens compare the dequantized weights digest for digest. */
#include "backends/cpu_hub_quant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"

/* AWQ: the nibble holding column j of each 8-column word. */
static const int awq_nibble_of_column[8] = {0, 4, 1, 5, 2, 6, 3, 7};

typedef struct hub_layer {
  const vlm_quantization_config *config;
  int64_t out, in, group, groups;
  const int32_t *qweight, *qzeros;
  const void *scales;
  vlm_dtype scales_dtype;
  const int32_t *order; /* GPTQ act-order: step j reads input order[j]; NULL: j */
  cpu_packed_linear *packed;
} hub_layer;

static vlm_status get_tensor(const vlm_checkpoint *checkpoint, const char *prefix, const char *leaf, vlm_dtype dtype,
                             int64_t rows, int64_t columns, const void **out) {
  char name[512];
  if (snprintf(name, sizeof(name), "%s%s", prefix, leaf) >= (int)sizeof(name))
    return VLM_ERROR(INVALID_ARGUMENT, "tensor name '%s%s' is too long", prefix, leaf);
  vlm_tensor view;
  int64_t shape[2] = {rows, columns};
  VLM_RETURN_IF_ERROR(vlm_checkpoint_get(checkpoint, name, dtype, columns < 0 ? 1 : 2, shape, &view));
  *out = view.data;
  return VLM_OK;
}

static inline int nibble(int32_t word, int index) { return (int)(((uint32_t)word >> (4 * index)) & 15u); }

static float scale_at(const hub_layer *layer, int64_t g, int64_t o) {
  int64_t index = g * layer->out + o;
  return layer->scales_dtype == VLM_DTYPE_F16 ? vlm_f16_to_f32(((const uint16_t *)layer->scales)[index])
                                              : vlm_bf16_to_f32(((const uint16_t *)layer->scales)[index]);
}

/* Scales in f16 exactly (bf16 ones too, when f16 holds them). */
static vlm_status check_scales(const hub_layer *layer, const char *prefix) {
  if (layer->scales_dtype == VLM_DTYPE_F16) return VLM_OK;
  for (int64_t i = 0; i < layer->groups * layer->out; i++) {
    float value = scale_at(layer, i / layer->out, i % layer->out);
    if (vlm_f16_to_f32(vlm_f32_to_f16(value)) != value)
      return VLM_ERROR(UNIMPLEMENTED, "%sscales: the bf16 scale %g is not an f16 value (vlm keeps f16 scales)", prefix,
                       (double)value);
  }
  return VLM_OK;
}

/* GPTQ's g_idx: the plain grouping (order NULL), or act-order's groups
 * of G inputs each, which the chains then run group by group. */
static vlm_status gptq_order(const int32_t *g_idx, const char *prefix, hub_layer *layer, int32_t **out_order) {
  *out_order = NULL;
  bool plain = true;
  for (int64_t k = 0; k < layer->in; k++) {
    if (g_idx[k] < 0 || g_idx[k] >= layer->groups)
      return VLM_ERROR(INVALID_ARGUMENT, "%sg_idx: input %lld names group %d of %lld", prefix, (long long)k,
                       (int)g_idx[k], (long long)layer->groups);
    plain = plain && g_idx[k] == k / layer->group;
  }
  if (plain) return VLM_OK;
  int64_t *next = calloc((size_t)layer->groups, sizeof(int64_t));
  int32_t *order = malloc((size_t)layer->in * sizeof(int32_t));
  if (!next || !order) {
    free(next), free(order);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  for (int64_t k = 0; k < layer->in; k++) next[g_idx[k]]++;
  vlm_status status = VLM_OK;
  for (int64_t g = 0, start = 0; g < layer->groups; g++) {
    int64_t expected = g < layer->groups - 1 ? layer->group : layer->in - g * layer->group;
    if (next[g] != expected && !status)
      status = VLM_ERROR(UNIMPLEMENTED, "%sg_idx: group %lld has %lld inputs, not %lld (vlm loads act-order whose "
                         "groups are group_size inputs each)", prefix, (long long)g, (long long)next[g],
                         (long long)expected);
    int64_t count = next[g];
    next[g] = start;
    start += count;
  }
  if (!status)
    for (int64_t k = 0; k < layer->in; k++) order[next[g_idx[k]]++] = (int32_t)k;
  free(next);
  if (status) {
    free(order);
    return status;
  }
  *out_order = order;
  return VLM_OK;
}

static void fill_panels(void *context, int64_t begin, int64_t end, int worker) {
  (void)worker;
  const hub_layer *layer = context;
  bool awq = layer->config->method == VLM_QUANT_METHOD_AWQ;
  int64_t out = layer->out, words = out / 8;
  for (int64_t o = begin * CPU_PANEL; o < end * CPU_PANEL && o < out; o++) {
    int zero_nibble = awq ? awq_nibble_of_column[o % 8] : (int)(o % 8);
    for (int64_t g = 0; g < layer->groups; g++) {
      int zero = nibble(layer->qzeros[g * words + o / 8], zero_nibble) + (!awq && layer->config->zeros_minus_one);
      cpu_quant_set_group(layer->packed, o, g, vlm_f32_to_f16(scale_at(layer, g, o)), zero);
    }
    for (int64_t j = 0; j < layer->in; j++) {
      int64_t k = layer->order ? layer->order[j] : j;
      int q = awq ? nibble(layer->qweight[k * words + o / 8], awq_nibble_of_column[o % 8])
                  : nibble(layer->qweight[(k / 8) * out + o], (int)(k % 8));
      cpu_quant_set_value(layer->packed, o, j, q);
    }
  }
}

vlm_status cpu_hub_quant_pack(vlm_thread_pool *pool, const vlm_checkpoint *checkpoint,
                              const vlm_quantization_config *config, const char *prefix, int64_t output_count,
                              int64_t input_count, const void *bias, vlm_dtype bias_dtype,
                              cpu_packed_linear **out_packed) {
  *out_packed = NULL;
  if (config->method != VLM_QUANT_METHOD_GPTQ && config->method != VLM_QUANT_METHOD_AWQ)
    return VLM_ERROR(INVALID_ARGUMENT, "%s: not a GPTQ or AWQ layer", prefix);
  if (output_count % 8 || input_count % 8)
    return VLM_ERROR(UNIMPLEMENTED, "%s: %lld x %lld: int4 layers need both sizes multiples of 8", prefix,
                     (long long)output_count, (long long)input_count);
  hub_layer layer = {config, output_count, input_count, config->group_size < 0 ? input_count : config->group_size};
  if (layer.group > input_count) layer.group = input_count;
  layer.groups = (input_count + layer.group - 1) / layer.group;
  bool awq = config->method == VLM_QUANT_METHOD_AWQ;
  const void *qweight = NULL, *qzeros = NULL, *g_idx = NULL;
  VLM_RETURN_IF_ERROR(get_tensor(checkpoint, prefix, "qweight", VLM_DTYPE_I32, awq ? input_count : input_count / 8,
                                 awq ? output_count / 8 : output_count, &qweight));
  VLM_RETURN_IF_ERROR(get_tensor(checkpoint, prefix, "qzeros", VLM_DTYPE_I32, layer.groups, output_count / 8, &qzeros));
  VLM_RETURN_IF_ERROR(get_tensor(checkpoint, prefix, "scales", VLM_DTYPE_INVALID, layer.groups, output_count,
                                 &layer.scales));
  char name[512];
  snprintf(name, sizeof(name), "%sscales", prefix);
  layer.scales_dtype = vlm_checkpoint_find(checkpoint, name)->dtype;
  if (layer.scales_dtype != VLM_DTYPE_F16 && layer.scales_dtype != VLM_DTYPE_BF16)
    return VLM_ERROR(UNIMPLEMENTED, "%sscales: dtype %s (f16 or bf16 expected)", prefix,
                     vlm_dtype_name(layer.scales_dtype));
  VLM_RETURN_IF_ERROR(check_scales(&layer, prefix));
  layer.qweight = qweight;
  layer.qzeros = qzeros;
  int32_t *order = NULL;
  if (!awq) {
    snprintf(name, sizeof(name), "%sg_idx", prefix);
    if (vlm_checkpoint_find(checkpoint, name)) {
      VLM_RETURN_IF_ERROR(get_tensor(checkpoint, prefix, "g_idx", VLM_DTYPE_I32, input_count, -1, &g_idx));
      VLM_RETURN_IF_ERROR(gptq_order(g_idx, prefix, &layer, &order));
    } else if (config->desc_act) {
      return VLM_ERROR(INVALID_ARGUMENT, "%s: act-order (desc_act) without %s", prefix, name);
    }
  }
  layer.order = order;
  vlm_status status = cpu_quant_allocate(CPU_QUANT_Q4, output_count, input_count, layer.group, bias, bias_dtype,
                                         order, &layer.packed);
  free(order);
  layer.order = layer.packed ? layer.packed->input_order : NULL;
  if (status) return vlm_status_annotate(status, "%s", prefix);
  int64_t grain = 65536 / (input_count * CPU_PANEL) + 1;
  vlm_thread_pool_parallel_for(pool, layer.packed->panel_count, grain, fill_panels, &layer);
  *out_packed = layer.packed;
  return VLM_OK;
}
