/* The "checkpoint" stage: vlm loads the tiny model's weights through the
 * family's renames and canonical names, and every parameter must match the
 * state_dict Transformers built from the same directory: same names, same
 * shapes, same values (a SHA-256 of the float32 little-endian values, after
 * rounding to the dtype Transformers ran in), and lm_head must resolve to the
 * embedding when the config ties them. A tensor the manifest also accepts
 * with its last two dimensions swapped (MoE experts in the hub's layout)
 * matches its transpose. Sampled values give max-abs/max-rel
 * figures when a digest differs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu_hub_quant.h"
#include "core/status.h"
#include "io/checkpoint.h"
#include "io/config.h"
#include "models/family.h"
#include "validate/compare.h"
#include "core/sha256.h"
#include "validate/stages.h"

typedef struct checkpoint_stage {
  vlm_model_config config;
  bool config_loaded;
  vlm_tensor_manifest manifest;
  vlm_checkpoint *checkpoint;
  bool *used; /* per checkpoint tensor: named by some golden parameter */
  vlm_quantization_config quantization; /* GPTQ/AWQ: linears stored as X.qweight ... */
} checkpoint_stage;

static void note_problem(vlm_stage_result *result, const char *format, const char *name,
                         const char *extra) {
  result->outcome = VLM_STAGE_DIVERGED;
  if (result->detail[0]) return; /* keep the first problem */
  snprintf(result->detail, sizeof(result->detail), format, name, extra);
}

/* Rounds a float32 value the way torch's .to(dtype) does, then widens it back. */
static float round_to_dtype(float value, const char *dtype) {
  if (strcmp(dtype, "bfloat16") == 0) return vlm_bf16_to_f32(vlm_f32_to_bf16(value));
  if (strcmp(dtype, "float16") == 0) return vlm_f16_to_f32(vlm_f32_to_f16(value));
  return value;
}

/* The checkpoint tensor holding a Transformers parameter: the same canonical
 * name, or for lm_head.weight of a tied model, the token embedding. */
static const vlm_tensor_info *resolve_tensor(const checkpoint_stage *state, const char *name) {
  const vlm_tensor_info *info = vlm_checkpoint_find(state->checkpoint, name);
  if (info || strcmp(name, "lm_head.weight") != 0 || !state->config.tie_word_embeddings)
    return info;
  for (size_t i = 0; i < state->manifest.count; i++) {
    const vlm_expected_tensor *expected = &state->manifest.tensors[i];
    const char *suffix = "embed_tokens.weight";
    size_t length = strlen(expected->name), suffix_length = strlen(suffix);
    if (expected->component == VLM_COMPONENT_EMBEDDINGS && length >= suffix_length &&
        strcmp(expected->name + length - suffix_length, suffix) == 0)
      return vlm_checkpoint_find(state->checkpoint, expected->name);
  }
  return NULL;
}

static bool shape_matches(const vlm_tensor_info *info, const vlm_json_value *shape) {
  if (!shape || shape->type != VLM_JSON_ARRAY || shape->as.array.count != (size_t)info->rank)
    return false;
  for (int i = 0; i < info->rank; i++) {
    int64_t extent;
    if (!vlm_json_get_int(&shape->as.array.items[i], &extent) || extent != info->shape[i])
      return false;
  }
  return true;
}

/* Whether vlm reads `info` as the transpose of its last two dimensions
 * where Transformers holds the golden's shape: a rank-3 tensor whose
 * manifest accepts the swapped shape (MoE experts in the hub's [in, out]
 * layout, which Transformers 5.23 transposes on load). */
static bool stored_transposed(const checkpoint_stage *state, const vlm_tensor_info *info,
                              const vlm_json_value *shape) {
  const vlm_expected_tensor *expected = vlm_manifest_find(&state->manifest, info->name);
  if (!expected || info->rank != 3 || !shape || shape->type != VLM_JSON_ARRAY || shape->as.array.count != 3)
    return false;
  int64_t golden[3];
  for (int i = 0; i < 3; i++)
    if (!vlm_json_get_int(&shape->as.array.items[i], &golden[i])) return false;
  return golden[0] == info->shape[0] && golden[1] == info->shape[2] && golden[2] == info->shape[1] &&
         vlm_expected_shape_matches(expected, info->rank, info->shape) &&
         vlm_expected_shape_matches(expected, 3, golden);
}

/* Element `index` of the golden's order in the stored tensor: itself, or
 * for a transposed [E, b, a] store of the golden's [E, a, b], (e, j, i). */
static int64_t stored_index(const vlm_tensor_info *info, bool transposed, int64_t index) {
  if (!transposed) return index;
  int64_t b = info->shape[1], a = info->shape[2];
  int64_t e = index / (a * b), i = index / b % a, j = index % b;
  return (e * b + j) * a + i;
}

/* Hashes the tensor's values (in Transformers' order) and compares the sampled ones. */
static vlm_status compare_values(const vlm_tensor_info *info, bool transposed, const vlm_json_value *parameter,
                                 const char *name, const char *dtype,
                                 vlm_stage_result *result) {
  vlm_tensor view;
  VLM_RETURN_IF_ERROR(vlm_tensor_borrow(info->dtype, info->rank, info->shape,
                                        (void *)info->data, &view));
  int64_t count = vlm_tensor_element_count(&view);
  vlm_sha256 hash;
  vlm_sha256_init(&hash);
  for (int64_t i = 0; i < count; i++) {
    double value;
    if (!vlm_tensor_value_as_double(&view, stored_index(info, transposed, i), &value))
      return VLM_ERROR(UNIMPLEMENTED, "tensor '%s': dtype %s is not a float type", name,
                       vlm_dtype_name(info->dtype));
    float rounded = round_to_dtype((float)value, dtype);
    vlm_sha256_update(&hash, &rounded, sizeof(rounded)); /* little-endian hosts only */
  }
  char digest[65];
  vlm_sha256_finish_hex(&hash, digest);
  const vlm_json_value *samples = vlm_json_object_get(parameter, "samples");
  size_t sample_count = samples && samples->type == VLM_JSON_ARRAY ? samples->as.array.count : 0;
  for (size_t i = 0; i < sample_count; i++) {
    const vlm_json_value *pair = &samples->as.array.items[i];
    int64_t index;
    double expected, actual;
    if (!vlm_json_get_int(vlm_json_array_get(pair, 0), &index) ||
        !vlm_json_get_double(vlm_json_array_get(pair, 1), &expected) || index < 0 ||
        index >= count || !vlm_tensor_value_as_double(&view, stored_index(info, transposed, index), &actual))
      return VLM_ERROR(DATA_LOSS, "parameter '%s': samples[%zu] is not [index, value]", name, i);
    actual = round_to_dtype((float)actual, dtype);
    vlm_compare_values(&expected, &actual, 1, name, result);
  }
  if (!vlm_json_string_equals(vlm_json_object_get(parameter, "sha256"), digest))
    note_problem(result, "parameter '%s': values differ (sha256 %s)", name, digest);
  return VLM_OK;
}

static void mark_used(checkpoint_stage *state, const char *prefix, const char *leaf) {
  char name[512];
  snprintf(name, sizeof(name), "%s%s", prefix, leaf);
  const vlm_tensor_info *info = vlm_checkpoint_find(state->checkpoint, name);
  if (info) state->used[info - vlm_checkpoint_tensor_at(state->checkpoint, 0)] = true;
}

/* A GPTQ/AWQ layer: the Transformers parameter X.weight is the dequantized
 * matrix (the oracle ran Transformers on it), which vlm's q4 layer holds
 * exactly: hash what vlm's kernels multiply by. */
static vlm_status compare_quantized(checkpoint_stage *state, const vlm_json_value *parameter, const char *name,
                                    const char *dtype, vlm_stage_result *result, bool *out_handled) {
  *out_handled = false;
  size_t length = strlen(name);
  const vlm_json_value *shape = vlm_json_object_get(parameter, "shape");
  int64_t out = 0, in = 0;
  if (!state->quantization.method || length < 7 || length > 500 || strcmp(name + length - 7, ".weight") != 0 ||
      !shape || shape->type != VLM_JSON_ARRAY || shape->as.array.count != 2 ||
      !vlm_json_get_int(&shape->as.array.items[0], &out) || !vlm_json_get_int(&shape->as.array.items[1], &in))
    return VLM_OK;
  char prefix[512], qweight[520];
  snprintf(prefix, sizeof(prefix), "%.*s", (int)(length - 6), name);
  snprintf(qweight, sizeof(qweight), "%sqweight", prefix);
  if (!vlm_checkpoint_find(state->checkpoint, qweight)) return VLM_OK;
  *out_handled = true;
  cpu_packed_linear *packed = NULL;
  VLM_RETURN_IF_ERROR(cpu_hub_quant_pack(NULL, state->checkpoint, &state->quantization, prefix, out, in, NULL,
                                         VLM_DTYPE_F32, &packed));
  float *values = malloc((size_t)(out * in) * sizeof(float));
  if (!values) {
    cpu_packed_linear_release(packed);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  cpu_quant_dequantize(packed, values);
  cpu_packed_linear_release(packed);
  static const char *leaves[] = {"qweight", "qzeros", "scales", "g_idx"};
  for (size_t i = 0; i < 4; i++) mark_used(state, prefix, leaves[i]);
  vlm_tensor_info info = {.name = name, .dtype = VLM_DTYPE_F32, .rank = 2, .shape = {out, in},
                          .data = (const uint8_t *)values, .byte_size = (uint64_t)(out * in) * 4};
  vlm_status status = compare_values(&info, false, parameter, name, dtype, result);
  free(values);
  return status;
}

static vlm_status compare_parameter(checkpoint_stage *state, const vlm_json_value *parameter,
                                    const char *dtype, vlm_stage_result *result) {
  const char *name = vlm_json_get_string(vlm_json_object_get(parameter, "name"));
  if (!name) return VLM_ERROR(DATA_LOSS, "a checkpoint parameter has no \"name\"");
  const vlm_tensor_info *info = resolve_tensor(state, name);
  bool quantized = false;
  if (!info) VLM_RETURN_IF_ERROR(compare_quantized(state, parameter, name, dtype, result, &quantized));
  if (quantized) return VLM_OK;
  if (!info) {
    note_problem(result, "parameter '%s'%s is not in vlm's checkpoint table", name, "");
    return VLM_OK;
  }
  size_t index = (size_t)(info - vlm_checkpoint_tensor_at(state->checkpoint, 0));
  state->used[index] = true;
  bool transposed = stored_transposed(state, info, vlm_json_object_get(parameter, "shape"));
  if (!transposed && !shape_matches(info, vlm_json_object_get(parameter, "shape"))) {
    char shape[128];
    vlm_shape_format(info->shape, info->rank, shape, sizeof(shape));
    note_problem(result, "parameter '%s': vlm has shape %s, Transformers another", name, shape);
    return VLM_OK;
  }
  return compare_values(info, transposed, parameter, name, dtype, result);
}

static vlm_status open_model(const vlm_compare_context *context, checkpoint_stage *state) {
  VLM_RETURN_IF_ERROR(vlm_model_config_load(context->model_directory, context->allocator,
                                            &state->config));
  state->config_loaded = true;
  VLM_RETURN_IF_ERROR(vlm_quantization_config_parse(state->config.root_section, "config.json", &state->quantization));
  const vlm_family *family = vlm_family_find(state->config.model_type);
  if (!family)
    return VLM_ERROR(UNIMPLEMENTED, "no family for model_type '%s'", state->config.model_type);
  if (family->declare_tensors)
    VLM_RETURN_IF_ERROR(family->declare_tensors(&state->config, &state->manifest));
  vlm_checkpoint_options options = {.allocator = context->allocator,
                                    .renames = family->renames,
                                    .rename_count = family->rename_count};
  VLM_RETURN_IF_ERROR(vlm_checkpoint_open(context->model_directory, &options, &state->checkpoint));
  size_t count = vlm_checkpoint_tensor_count(state->checkpoint);
  state->used = calloc(count ? count : 1, sizeof(bool));
  return state->used ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
}

static vlm_status compare_all(const vlm_compare_context *context, const vlm_golden_stage *stage,
                              checkpoint_stage *state, vlm_stage_result *result) {
  const vlm_json_value *parameters = vlm_json_object_get(stage->spec, "parameters");
  if (!parameters || parameters->type != VLM_JSON_ARRAY)
    return VLM_ERROR(DATA_LOSS, "stage 'checkpoint' has no \"parameters\" array");
  VLM_RETURN_IF_ERROR(open_model(context, state));
  result->outcome = VLM_STAGE_MATCH;
  for (size_t i = 0; i < parameters->as.array.count; i++)
    VLM_RETURN_IF_ERROR(compare_parameter(state, &parameters->as.array.items[i], stage->dtype,
                                          result));
  for (size_t i = 0; i < vlm_checkpoint_tensor_count(state->checkpoint); i++)
    if (!state->used[i])
      note_problem(result, "checkpoint tensor '%s'%s is not a Transformers parameter",
                   vlm_checkpoint_tensor_at(state->checkpoint, i)->name, "");
  /* Report tensors, not sampled elements: that is what this stage compares. */
  result->compared = (int64_t)parameters->as.array.count;
  if (result->outcome == VLM_STAGE_MATCH)
    snprintf(result->detail, sizeof(result->detail), "%zu tensors", parameters->as.array.count);
  return VLM_OK;
}

vlm_status vlm_stage_checkpoint(const vlm_compare_context *context,
                                const vlm_golden_stage *stage, vlm_stage_result *result) {
  checkpoint_stage state;
  memset(&state, 0, sizeof(state));
  vlm_manifest_init(&state.manifest);
  vlm_status status = compare_all(context, stage, &state, result);
  free(state.used);
  vlm_checkpoint_release(state.checkpoint);
  vlm_manifest_release(&state.manifest);
  if (state.config_loaded) vlm_model_config_release(&state.config);
  return status;
}
