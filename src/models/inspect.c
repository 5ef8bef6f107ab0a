/* vlm_model_inspect: validate a checkpoint directory end to end and describe
 * it. Everything a later load would refuse is refused here too, with the
 * same message, because it runs the same parsers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "io/checkpoint.h"
#include "io/config.h"
#include "io/file.h"
#include "io/json.h"
#include "models/family.h"
#include "models/kv_layout.h"
#include "models/model.h"
#include "vlm/chat_template.h"
#include "vlm/tokenizer.h"

#define LISTED_IN_TEXT 20 /* names shown per problem list in the text report */

typedef struct component_totals {
  int64_t parameters;
  uint64_t bytes;
  size_t tensors;
} component_totals;

typedef struct tensor_problem {
  const char *name;
  int rank, expected_rank;
  int64_t shape[VLM_MAX_DIMS], expected_shape[VLM_MAX_DIMS];
} tensor_problem;

typedef struct problem_list {
  tensor_problem *items;
  size_t count, capacity;
} problem_list;

struct vlm_model_report {
  char *text;
  char *json;
  bool can_load;
  char problem[256];
};

typedef struct inspection {
  const char *model_dir;
  vlm_model *model;
  const vlm_model_config *config;
  const vlm_generation_config *generation;
  const vlm_processor_config *processor;
  bool has_processor;
  const vlm_family *family;
  const vlm_checkpoint *checkpoint;
  const vlm_tensor_manifest *manifest;
  component_totals components[VLM_COMPONENT_COUNT];
  uint64_t dtype_bytes[VLM_DTYPE_COUNT];
  problem_list missing, unexpected, mismatched;
  int thread_count;
  /* The decoder's KV layout (family.h kv_layout): values one cached token
   * takes, and the layers that store their own; kv_layers 0: unknown. */
  int64_t kv_token_values;
  int32_t kv_layers, kv_storing_layers;
  /* The text side, loaded as vlm run and vlm serve load it. */
  bool has_tokenizer;
  size_t vocab_size;
  char *chat_template_source;     /* NULL: none */
  char text_problem[256];         /* "": tokenizer and template load */
} inspection;

static bool add_problem(problem_list *list, const char *name, const vlm_tensor_info *actual,
                        const vlm_expected_tensor *expected) {
  if (list->count == list->capacity) {
    size_t capacity = list->capacity ? list->capacity * 2 : 32;
    tensor_problem *grown = realloc(list->items, capacity * sizeof(*grown));
    if (!grown) return false;
    list->items = grown;
    list->capacity = capacity;
  }
  tensor_problem *problem = &list->items[list->count++];
  memset(problem, 0, sizeof(*problem));
  problem->name = name;
  if (actual) {
    problem->rank = actual->rank;
    memcpy(problem->shape, actual->shape, sizeof(problem->shape));
  }
  if (expected) {
    problem->expected_rank = expected->rank;
    memcpy(problem->expected_shape, expected->shape, sizeof(problem->expected_shape));
  }
  return true;
}

static bool shape_matches(const vlm_tensor_info *actual, const vlm_expected_tensor *expected) {
  return vlm_expected_shape_matches(expected, actual->rank, actual->shape);
}

static void count_tensor(inspection *state, const vlm_tensor_info *info, vlm_component component) {
  int64_t elements = 0;
  vlm_shape_element_count(info->shape, info->rank, &elements);
  state->components[component].parameters += elements;
  state->components[component].bytes += info->byte_size;
  state->components[component].tensors++;
  state->dtype_bytes[info->dtype] += info->byte_size;
}

/* A GPTQ/AWQ checkpoint (config.json's quantization_config) stores a
 * linear X.weight as X.qweight, X.qzeros, X.scales (GPTQ: X.g_idx): the
 * declared X.weight for a part of such a layer (written to `weight`), or
 * NULL. */
static const vlm_expected_tensor *quantized_layer_of(const inspection *state, const char *name, char *weight,
                                                     size_t size) {
  static const char *parts[] = {".qweight", ".qzeros", ".scales", ".g_idx"};
  if (!state->model->hub_quantization.method) return NULL;
  size_t length = strlen(name);
  for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
    size_t part = strlen(parts[i]);
    if (length <= part || strcmp(name + length - part, parts[i]) != 0) continue;
    if (snprintf(weight, size, "%.*s.weight", (int)(length - part), name) >= (int)size) return NULL;
    return vlm_manifest_find(state->manifest, weight);
  }
  return NULL;
}

/* The declared weight `name` is stored quantized (X.qweight present). */
static bool stored_quantized(const inspection *state, const char *name) {
  size_t length = strlen(name);
  char qweight[512];
  if (!state->model->hub_quantization.method || length < 7 || strcmp(name + length - 7, ".weight") != 0 ||
      snprintf(qweight, sizeof(qweight), "%.*s.qweight", (int)(length - 7), name) >= (int)sizeof(qweight))
    return false;
  return vlm_checkpoint_find(state->checkpoint, qweight) != NULL;
}

/* Compares the checkpoint with the family's manifest (or, without one,
 * classifies tensors by name only). */
static vlm_status compare_tensors(inspection *state) {
  bool ok = true;
  const vlm_checkpoint *checkpoint = state->checkpoint;
  for (size_t i = 0; i < vlm_checkpoint_tensor_count(checkpoint); i++) {
    const vlm_tensor_info *info = vlm_checkpoint_tensor_at(checkpoint, i);
    const vlm_expected_tensor *expected =
        state->family ? vlm_manifest_find(state->manifest, info->name) : NULL;
    char weight[512];
    const vlm_expected_tensor *layer = state->family && !expected
                                           ? quantized_layer_of(state, info->name, weight, sizeof(weight))
                                           : NULL;
    count_tensor(state, info,
                 expected ? expected->component : layer ? layer->component : vlm_component_from_name(info->name));
    if (!state->family || layer) continue; /* a quantized layer's shapes are checked when it is loaded */
    /* LoRA adapter tensors (models/adapters.c) are not in the manifest: the
     * decoder graph applies them and refuses any it has no projection for. */
    bool adapter = strncmp(info->name, "adapters.", strlen("adapters.")) == 0;
    if (!expected) {
      if (!adapter) ok = ok && add_problem(&state->unexpected, info->name, info, NULL);
    } else if (!shape_matches(info, expected)) {
      ok = ok && add_problem(&state->mismatched, info->name, info, expected);
    }
  }
  for (size_t i = 0; state->family && i < state->manifest->count; i++) {
    const vlm_expected_tensor *expected = &state->manifest->tensors[i];
    if (!expected->optional && !vlm_checkpoint_find(checkpoint, expected->name) &&
        !stored_quantized(state, expected->name))
      ok = ok && add_problem(&state->missing, expected->name, NULL, expected);
  }
  return ok ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory comparing tensors");
}

/* A weights-only directory (no tokenizer.json) is reported as such; a
 * tokenizer or chat template that is present but does not load is a
 * failure, as it would be for vlm run and vlm serve. */
static void inspect_text_side(inspection *state) {
  char *path = vlm_path_join(state->model_dir, "tokenizer.json");
  bool present = path && vlm_path_exists(path);
  free(path);
  vlm_status status = VLM_OK;
  if (present) {
    vlm_tokenizer *tokenizer = NULL;
    status = vlm_tokenizer_create(state->model_dir, NULL, &tokenizer);
    if (!status) {
      state->has_tokenizer = true;
      state->vocab_size = vlm_tokenizer_vocab_size(tokenizer);
    }
    vlm_tokenizer_release(tokenizer);
  }
  if (!status) {
    vlm_chat_template *chat_template = NULL;
    status = vlm_chat_template_load(state->model_dir, &chat_template);
    if (!status) state->chat_template_source = strdup(vlm_chat_template_source(chat_template));
    vlm_chat_template_release(chat_template);
    if (vlm_status_code_of(status) == VLM_STATUS_NOT_FOUND) {
      vlm_status_free(status);
      status = VLM_OK;
    }
  }
  if (status) snprintf(state->text_problem, sizeof(state->text_problem), "%s", vlm_status_message(status));
  vlm_status_free(status);
}

/* The same opened model every loader uses: configs, family, manifest and
 * the validated mapping of every safetensors header. */
static vlm_status run_inspection(inspection *state) {
  vlm_model *model = state->model;
  state->config = &model->config;
  state->generation = &model->generation;
  state->processor = &model->processor;
  state->has_processor = model->has_processor;
  state->family = model->family;
  state->checkpoint = model->weights;
  state->manifest = &model->manifest;
  if (vlm_family_runs(state->family)) {
    vlm_kv_layout *layout = malloc(sizeof(*layout));
    vlm_status status = layout ? vlm_family_kv_layout(state->family, state->config, layout) : NULL;
    if (layout && !status) {
      state->kv_token_values = vlm_kv_layout_token_values(layout);
      state->kv_layers = layout->layer_count;
      state->kv_storing_layers = vlm_kv_layout_storing_layers(layout);
    }
    vlm_status_free(status); /* a layout the backends refuse is theirs to report */
    free(layout);
  }
  VLM_RETURN_IF_ERROR(compare_tensors(state));
  inspect_text_side(state);
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* Rendering                                                               */
/* ---------------------------------------------------------------------- */

static const char *modalities_text(const inspection *state) {
  if (state->config->has_vision && state->config->has_audio) return "text, image, audio";
  if (state->config->has_vision) return "text, image";
  if (state->config->has_audio) return "text, audio";
  return "text";
}

static vlm_dtype dominant_dtype(const inspection *state) {
  vlm_dtype best = VLM_DTYPE_INVALID;
  for (int dtype = 1; dtype < VLM_DTYPE_COUNT; dtype++)
    if (state->dtype_bytes[dtype] > state->dtype_bytes[best]) best = (vlm_dtype)dtype;
  return best;
}

static void format_bytes(uint64_t bytes, char *buffer, size_t size) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = (double)bytes;
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    unit++;
  }
  snprintf(buffer, size, unit ? "%.1f %s" : "%.0f %s", value, units[unit]);
}

static void append_problem_text(vlm_string_builder *out, const char *title,
                                const problem_list *list, bool with_expected) {
  if (!list->count) return;
  vlm_sb_appendf(out, "%s (%zu):\n", title, list->count);
  char actual[160], expected[160];
  for (size_t i = 0; i < list->count && i < LISTED_IN_TEXT; i++) {
    const tensor_problem *problem = &list->items[i];
    if (with_expected && problem->rank)
      vlm_sb_appendf(out, "  %s %s, expected %s\n", problem->name,
                     vlm_shape_format(problem->shape, problem->rank, actual, sizeof(actual)),
                     vlm_shape_format(problem->expected_shape, problem->expected_rank,
                                      expected, sizeof(expected)));
    else
      vlm_sb_appendf(out, "  %s %s\n", problem->name,
                     problem->rank ? vlm_shape_format(problem->shape, problem->rank, actual,
                                                      sizeof(actual))
                                   : vlm_shape_format(problem->expected_shape,
                                                      problem->expected_rank, expected,
                                                      sizeof(expected)));
  }
  if (list->count > LISTED_IN_TEXT)
    vlm_sb_appendf(out, "  ... and %zu more (see --json)\n", list->count - LISTED_IN_TEXT);
}

static void append_text_config(vlm_string_builder *out, const vlm_text_config *text) {
  vlm_sb_appendf(out,
                 "text decoder: %s, %lld layers, hidden %lld, intermediate %lld, %lld heads "
                 "(%lld key/value), head_dim %lld, vocab %lld, %s, rope %s theta %g",
                 text->model_type, (long long)text->num_hidden_layers,
                 (long long)text->hidden_size, (long long)text->intermediate_size,
                 (long long)text->num_attention_heads, (long long)text->num_key_value_heads,
                 (long long)text->head_dim, (long long)text->vocab_size, text->hidden_act,
                 vlm_rope_type_name(text->rope.type), text->rope.theta);
  if (text->sliding_window) vlm_sb_appendf(out, ", sliding window %lld", (long long)text->sliding_window);
  vlm_sb_append_literal(out, "\n");
}

static char *render_text(const inspection *state, const vlm_model_report *report) {
  vlm_string_builder out = {0};
  const vlm_model_config *config = state->config;
  char size_text[32];
  vlm_sb_appendf(&out, "model: %s\n", state->model_dir);
  vlm_sb_appendf(&out, "architecture: %s (model_type %s, family %s)\n",
                 config->architecture ? config->architecture : "(none listed)", config->model_type,
                 state->family ? state->family->display_name : "none: tensors not checked");
  vlm_sb_appendf(&out, "modalities: %s\n", modalities_text(state));
  vlm_sb_appendf(&out, "dtype: config %s, stored %s\n",
                 config->dtype ? vlm_dtype_name(config->dtype) : "unspecified",
                 vlm_dtype_name(dominant_dtype(state)));
  const vlm_quantization_config *quantization = &state->model->hub_quantization;
  if (quantization->method)
    vlm_sb_appendf(&out, "quantization: %s int%d, groups of %lld%s (cpu backend)\n",
                   quantization->method == VLM_QUANT_METHOD_GPTQ ? "GPTQ" : "AWQ", quantization->bits,
                   (long long)quantization->group_size, quantization->desc_act ? ", act-order" : "");
  format_bytes(vlm_checkpoint_total_bytes(state->checkpoint), size_text, sizeof(size_text));
  vlm_sb_appendf(&out, "weights: %zu tensors in %zu file%s, %s\n",
                 vlm_checkpoint_tensor_count(state->checkpoint),
                 vlm_checkpoint_shard_count(state->checkpoint),
                 vlm_checkpoint_shard_count(state->checkpoint) == 1 ? "" : "s", size_text);
  append_text_config(&out, &config->text);
  if (state->kv_layers) {
    format_bytes((uint64_t)state->kv_token_values * sizeof(float), size_text, sizeof(size_text));
    vlm_sb_appendf(&out, "kv cache: %s per cached token (f32, %lld values; %d of %d layers store their own)\n",
                   size_text, (long long)state->kv_token_values, state->kv_storing_layers, state->kv_layers);
  }
  if (config->has_vision)
    vlm_sb_appendf(&out, "vision tower: %s, %lld layers, hidden %lld, %lld heads, patch %lld, image %lldx%lld\n",
                   config->vision.model_type, (long long)config->vision.num_hidden_layers,
                   (long long)config->vision.hidden_size, (long long)config->vision.num_attention_heads,
                   (long long)config->vision.patch_size, (long long)config->vision.image_height,
                   (long long)config->vision.image_width);
  if (config->has_audio)
    vlm_sb_appendf(&out, "audio tower: %s, %lld layers, hidden %lld\n", config->audio.model_type,
                   (long long)config->audio.num_hidden_layers, (long long)config->audio.hidden_size);
  const vlm_model *model = state->model;
  for (int k = 0; k < model->adapter_count; k++) {
    const vlm_decoder_adapter *adapter = &model->adapters[k];
    if (adapter->module_count)
      vlm_sb_appendf(&out, "%s %s: %lld LoRA modules, scale %g\n", k ? "         " : "adapters:", adapter->name,
                     (long long)adapter->module_count, adapter->scale);
    else
      vlm_sb_appendf(&out, "%s %s: absent (its requests run the base model)\n", k ? "         " : "adapters:",
                     adapter->name);
  }
  vlm_sb_appendf(&out, "processor: %s\n",
                 state->has_processor ? state->processor->image_processor_type
                                      : "none (no preprocessor_config.json)");
  if (state->has_tokenizer) vlm_sb_appendf(&out, "tokenizer: %zu tokens\n", state->vocab_size);
  else if (!state->text_problem[0]) vlm_sb_append_literal(&out, "tokenizer: none (no tokenizer.json)\n");
  if (state->chat_template_source) vlm_sb_appendf(&out, "chat template: %s\n", state->chat_template_source);
  else if (!state->text_problem[0]) vlm_sb_append_literal(&out, "chat template: none\n");
  vlm_sb_appendf(&out, "runtime: %d thread%s (%d cores available)\n", state->thread_count,
                 state->thread_count == 1 ? "" : "s", vlm_cpu_count());
  vlm_sb_appendf(&out, "%-14s %10s %16s %12s\n", "component", "tensors", "parameters", "bytes");
  for (int c = 0; c < VLM_COMPONENT_COUNT; c++) {
    const component_totals *totals = &state->components[c];
    if (!totals->tensors) continue;
    format_bytes(totals->bytes, size_text, sizeof(size_text));
    vlm_sb_appendf(&out, "%-14s %10zu %16lld %12s\n", vlm_component_name((vlm_component)c),
                   totals->tensors, (long long)totals->parameters, size_text);
  }
  append_problem_text(&out, "missing tensors", &state->missing, false);
  append_problem_text(&out, "tensors with the wrong shape", &state->mismatched, true);
  append_problem_text(&out, "unexpected tensors (ignored, as Transformers ignores them)",
                      &state->unexpected, false);
  vlm_sb_appendf(&out, "status: %s\n", report->can_load ? "ok" : report->problem);
  return vlm_sb_finish(&out);
}

static void append_json_shape(vlm_string_builder *out, const int64_t *shape, int rank) {
  vlm_sb_append_literal(out, "[");
  for (int i = 0; i < rank; i++) vlm_sb_appendf(out, "%s%lld", i ? "," : "", (long long)shape[i]);
  vlm_sb_append_literal(out, "]");
}

static void append_problem_json(vlm_string_builder *out, const char *key,
                                const problem_list *list) {
  vlm_sb_appendf(out, ",\"%s\":[", key);
  for (size_t i = 0; i < list->count; i++) {
    const tensor_problem *problem = &list->items[i];
    vlm_sb_appendf(out, "%s{\"name\":", i ? "," : "");
    vlm_sb_append_json_string(out, problem->name, strlen(problem->name));
    if (problem->rank || !problem->expected_rank) {
      vlm_sb_append_literal(out, ",\"shape\":");
      append_json_shape(out, problem->shape, problem->rank);
    }
    if (problem->expected_rank) {
      vlm_sb_append_literal(out, ",\"expected_shape\":");
      append_json_shape(out, problem->expected_shape, problem->expected_rank);
    }
    vlm_sb_append_literal(out, "}");
  }
  vlm_sb_append_literal(out, "]");
}

static void append_json_string_field(vlm_string_builder *out, const char *key, const char *value) {
  vlm_sb_appendf(out, ",\"%s\":", key);
  if (value) vlm_sb_append_json_string(out, value, strlen(value));
  else vlm_sb_append_literal(out, "null");
}

static void append_json_sections(vlm_string_builder *out, const vlm_model_config *config) {
  const vlm_text_config *text = &config->text;
  vlm_sb_appendf(out, ",\"text_config\":{\"model_type\":\"%s\",\"num_hidden_layers\":%lld,"
                 "\"hidden_size\":%lld,\"intermediate_size\":%lld,\"num_attention_heads\":%lld,"
                 "\"num_key_value_heads\":%lld,\"head_dim\":%lld,\"vocab_size\":%lld,"
                 "\"rope_type\":\"%s\",\"rope_theta\":%.17g,\"sliding_window\":%lld}",
                 text->model_type, (long long)text->num_hidden_layers, (long long)text->hidden_size,
                 (long long)text->intermediate_size, (long long)text->num_attention_heads,
                 (long long)text->num_key_value_heads, (long long)text->head_dim,
                 (long long)text->vocab_size, vlm_rope_type_name(text->rope.type),
                 text->rope.theta, (long long)text->sliding_window);
  if (config->has_vision)
    vlm_sb_appendf(out, ",\"vision_config\":{\"model_type\":\"%s\",\"num_hidden_layers\":%lld,"
                   "\"hidden_size\":%lld,\"num_attention_heads\":%lld,\"patch_size\":%lld,"
                   "\"image_size\":[%lld,%lld]}",
                   config->vision.model_type, (long long)config->vision.num_hidden_layers,
                   (long long)config->vision.hidden_size,
                   (long long)config->vision.num_attention_heads,
                   (long long)config->vision.patch_size, (long long)config->vision.image_height,
                   (long long)config->vision.image_width);
  if (config->has_audio)
    vlm_sb_appendf(out, ",\"audio_config\":{\"model_type\":\"%s\",\"num_hidden_layers\":%lld,"
                   "\"hidden_size\":%lld}",
                   config->audio.model_type, (long long)config->audio.num_hidden_layers,
                   (long long)config->audio.hidden_size);
}

static char *render_json(const inspection *state, const vlm_model_report *report) {
  vlm_string_builder out = {0};
  const vlm_model_config *config = state->config;
  vlm_sb_append_literal(&out, "{\"model\":");
  vlm_sb_append_json_string(&out, state->model_dir, strlen(state->model_dir));
  append_json_string_field(&out, "architecture", config->architecture);
  append_json_string_field(&out, "model_type", config->model_type);
  append_json_string_field(&out, "family", state->family ? state->family->display_name : NULL);
  vlm_sb_appendf(&out, ",\"modalities\":[\"text\"%s%s]", config->has_vision ? ",\"image\"" : "",
                 config->has_audio ? ",\"audio\"" : "");
  append_json_string_field(&out, "config_dtype", config->dtype ? vlm_dtype_name(config->dtype) : NULL);
  append_json_string_field(&out, "quantization",
                           state->model->hub_quantization.method == VLM_QUANT_METHOD_GPTQ  ? "gptq"
                           : state->model->hub_quantization.method == VLM_QUANT_METHOD_AWQ ? "awq"
                                                                                           : NULL);
  vlm_sb_append_literal(&out, ",\"stored_dtypes\":{");
  bool first = true;
  for (int dtype = 1; dtype < VLM_DTYPE_COUNT; dtype++) {
    if (!state->dtype_bytes[dtype]) continue;
    vlm_sb_appendf(&out, "%s\"%s\":%llu", first ? "" : ",", vlm_dtype_name((vlm_dtype)dtype),
                   (unsigned long long)state->dtype_bytes[dtype]);
    first = false;
  }
  vlm_sb_appendf(&out, "},\"tensor_count\":%zu,\"file_count\":%zu,\"total_bytes\":%llu",
                 vlm_checkpoint_tensor_count(state->checkpoint),
                 vlm_checkpoint_shard_count(state->checkpoint),
                 (unsigned long long)vlm_checkpoint_total_bytes(state->checkpoint));
  if (state->kv_layers)
    vlm_sb_appendf(&out, ",\"kv_cache\":{\"bytes_per_token\":%llu,\"values_per_token\":%lld,\"dtype\":\"f32\","
                   "\"layers\":%d,\"storing_layers\":%d}",
                   (unsigned long long)state->kv_token_values * sizeof(float), (long long)state->kv_token_values,
                   state->kv_layers, state->kv_storing_layers);
  vlm_sb_append_literal(&out, ",\"components\":{");
  first = true;
  for (int c = 0; c < VLM_COMPONENT_COUNT; c++) {
    const component_totals *totals = &state->components[c];
    if (!totals->tensors) continue;
    vlm_sb_appendf(&out, "%s\"%s\":{\"tensors\":%zu,\"parameters\":%lld,\"bytes\":%llu}",
                   first ? "" : ",", vlm_component_name((vlm_component)c), totals->tensors,
                   (long long)totals->parameters, (unsigned long long)totals->bytes);
    first = false;
  }
  vlm_sb_append_literal(&out, "}");
  append_json_sections(&out, config);
  append_json_string_field(&out, "image_processor",
                           state->has_processor ? state->processor->image_processor_type : NULL);
  if (state->has_tokenizer) vlm_sb_appendf(&out, ",\"tokenizer_vocab_size\":%zu", state->vocab_size);
  else vlm_sb_append_literal(&out, ",\"tokenizer_vocab_size\":null");
  append_json_string_field(&out, "chat_template", state->chat_template_source);
  vlm_sb_appendf(&out, ",\"runtime\":{\"threads\":%d,\"cpu_cores\":%d}", state->thread_count,
                 vlm_cpu_count());
  vlm_sb_appendf(&out, ",\"tensors_checked\":%s", state->family ? "true" : "false");
  append_problem_json(&out, "missing", &state->missing);
  append_problem_json(&out, "wrong_shape", &state->mismatched);
  append_problem_json(&out, "unexpected", &state->unexpected);
  vlm_sb_appendf(&out, ",\"can_load\":%s,\"problem\":", report->can_load ? "true" : "false");
  vlm_sb_append_json_string(&out, report->problem, strlen(report->problem));
  vlm_sb_append_literal(&out, "}\n");
  return vlm_sb_finish(&out);
}

static void judge(const inspection *state, vlm_model_report *report) {
  report->can_load = false;
  if (!state->family)
    snprintf(report->problem, sizeof(report->problem),
             "no tensor manifest for model_type '%s' yet (families with one: %s)",
             state->config->model_type, vlm_family_supported_list());
  else if (state->missing.count || state->mismatched.count)
    snprintf(report->problem, sizeof(report->problem),
             "checkpoint incomplete: %zu missing tensor%s, %zu with the wrong shape%s%s",
             state->missing.count, state->missing.count == 1 ? "" : "s",
             state->mismatched.count,
             state->missing.count ? " (first missing: " : "",
             state->missing.count ? state->missing.items[0].name : "");
  else if (state->text_problem[0])
    snprintf(report->problem, sizeof(report->problem), "%s", state->text_problem);
  else
    report->can_load = true;
  if (state->family && state->missing.count) {
    size_t length = strlen(report->problem);
    if (length + 2 < sizeof(report->problem)) strcat(report->problem, ")");
  }
}

static void inspection_release(inspection *state) {
  vlm_model_release(state->model);
  free(state->missing.items);
  free(state->unexpected.items);
  free(state->mismatched.items);
  free(state->chat_template_source);
}

vlm_status vlm_model_inspect(const char *model_dir, const vlm_inspect_options *options,
                             vlm_model_report **out_report) {
  *out_report = NULL;
  vlm_model *model = NULL;
  vlm_model_options model_options = {.allocator = options ? options->allocator : NULL};
  VLM_RETURN_IF_ERROR(vlm_model_open(model_dir, &model_options, &model));
  vlm_status status = vlm_model_inspect_opened(model, options, out_report);
  vlm_model_release(model);
  return status;
}

vlm_status vlm_model_inspect_opened(vlm_model *model, const vlm_inspect_options *options,
                                    vlm_model_report **out_report) {
  *out_report = NULL;
  inspection state;
  memset(&state, 0, sizeof(state));
  state.model = vlm_model_retain(model);
  state.model_dir = model->directory;
  state.thread_count = options && options->thread_count > 0 ? options->thread_count : vlm_cpu_count();
  vlm_status status = run_inspection(&state);
  vlm_model_report *report = NULL;
  if (!status) {
    report = calloc(1, sizeof(*report));
    if (report) {
      judge(&state, report);
      report->text = render_text(&state, report);
      report->json = render_json(&state, report);
    }
    if (!report || !report->text || !report->json) {
      vlm_model_report_release(report);
      report = NULL;
      status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory writing the report");
    }
  }
  inspection_release(&state);
  *out_report = report;
  return status;
}

const char *vlm_model_report_text(const vlm_model_report *report, bool as_json) {
  return as_json ? report->json : report->text;
}

bool vlm_model_report_can_load(const vlm_model_report *report) { return report->can_load; }

const char *vlm_model_report_problem(const vlm_model_report *report) { return report->problem; }

void vlm_model_report_release(vlm_model_report *report) {
  if (!report) return;
  free(report->text);
  free(report->json);
  free(report);
}

vlm_status vlm_model_prompt_flow(const char *model_dir, vlm_prompt_flow *out_flow) {
  *out_flow = VLM_PROMPT_FLOW_TOKENIZER;
  vlm_model_config config;
  VLM_RETURN_IF_ERROR(vlm_model_config_load_runnable(model_dir, NULL, &config));
  const vlm_family *family = vlm_family_find(config.model_type);
  vlm_status status = family ? VLM_OK
                             : VLM_ERROR(UNIMPLEMENTED, "%s: model_type '%s' has no family (supported: %s)",
                                         model_dir, config.model_type ? config.model_type : "",
                                         vlm_family_supported_list());
  if (family) *out_flow = family->prompt_flow;
  vlm_model_config_release(&config);
  return status;
}
