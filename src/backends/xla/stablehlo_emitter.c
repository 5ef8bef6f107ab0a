/* Module assembly: one decoder graph per function (built by the same
 * builder the cpu backend uses), each lowered node by node
 * (stablehlo_lower.c) after a prologue that turns the function's arguments
 * into what the graph's row context says on the cpu backend (cache indices,
 * RoPE positions, valid rows); then the globals, the helper functions and
 * the module attributes with the compatibility key. */
#include "backends/xla/stablehlo_emitter.h"

#include "models/kv_layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/xla/stablehlo_graph.h"
#include "backends/xla/stablehlo_internal.h"
#include "core/status.h"
#include "backends/cpu/text_model.h"

#define DEFAULT_CAPACITY 4096
#define DEFAULT_PREFILL_CHUNK 512
#define DEFAULT_DECODE_WINDOW 256
#define DEFAULT_PREFILL_BUCKET 64

/* ---------------------------------------------------------------------- */
/* Opening a model                                                         */
/* ---------------------------------------------------------------------- */

vlm_status vlm_xla_text_decoder_check(const vlm_model *model) {
  VLM_RETURN_IF_ERROR(vlm_model_require_family(model, "the text decoder"));
  if (!model->family->describe_decoder)
    return VLM_ERROR(UNIMPLEMENTED, "%s: the text decoder of model_type '%s' is not supported yet", model->directory,
                     model->config.model_type);
  if (vlm_model_is_quantized(model))
    return VLM_ERROR(UNIMPLEMENTED, "%s: the xla backend does not run quantized weights (--quantize, GPTQ, AWQ); "
                     "use --backend cpu", model->directory);
  /* The module's RoPE tables are constants: dynamic RoPE, whose
   * frequencies follow each request's length continuously, would compute
   * something else than the cpu backend. */
  if (model->config.text.rope.type == VLM_ROPE_DYNAMIC)
    return VLM_ERROR(UNIMPLEMENTED, "%s: the xla backend does not lower dynamic RoPE yet; use --backend cpu",
                     model->directory);
  /* The xla state is f32[layers, 2, slots, capacity + chunk, kv_heads,
   * head_dim]: one width for every layer's K and V, each layer its own. */
  vlm_kv_layout *layout = malloc(sizeof(*layout));
  if (!layout) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_status status = vlm_family_kv_layout(model->family, &model->config, layout);
  bool uniform = !status && vlm_kv_layout_is_uniform(layout, NULL);
  free(layout);
  VLM_RETURN_IF_ERROR(status);
  if (!uniform)
    return VLM_ERROR(UNIMPLEMENTED, "%s: %s (model_type '%s'): the xla backend does not hold per-layer KV layouts "
                     "(widths that differ between layers or between K and V, shared or latent layers) yet; use "
                     "--backend cpu", model->directory, model->family && model->family->display_name ? model->family->display_name : "this model",
                     model->config.model_type ? model->config.model_type : "?");
  return VLM_OK;
}

vlm_status vlm_xla_text_decoder_open(vlm_model *model, vlm_xla_text_decoder *out_model) {
  memset(out_model, 0, sizeof(*out_model));
  VLM_RETURN_IF_ERROR(vlm_xla_text_decoder_check(model));
  out_model->model = vlm_model_retain(model);
  out_model->config = &model->config;
  out_model->weights = model->weights;
  vlm_family_describe_decoder(model->family, &model->config, &out_model->decoder);
  vlm_model_describe_adapters(model, &out_model->decoder);
  bool adapters = false;
  for (int k = 0; k < model->adapter_count; k++) adapters = adapters || model->adapters[k].module_count > 0;
  out_model->request_state = adapters || model->config.text.rope.type == VLM_ROPE_LONGROPE ||
                             out_model->decoder.rope_cache_reset_length > 0;
  return VLM_OK;
}

void vlm_xla_text_decoder_release(vlm_xla_text_decoder *model) {
  vlm_model_release(model->model);
  memset(model, 0, sizeof(*model));
}

void vlm_stablehlo_default_options(const vlm_xla_text_decoder *model, vlm_stablehlo_options *options) {
  int64_t longest = model->config->text.max_position_embeddings;
  if (options->slot_count <= 0) options->slot_count = 1;
  if (options->capacity <= 0) options->capacity = longest > 0 && longest < DEFAULT_CAPACITY ? longest : DEFAULT_CAPACITY;
  if (options->prefill_chunk <= 0)
    options->prefill_chunk = options->capacity < DEFAULT_PREFILL_CHUNK ? options->capacity : DEFAULT_PREFILL_CHUNK;
  if (options->decode_window <= 0) options->decode_window = DEFAULT_DECODE_WINDOW;
  if (options->prefill_bucket <= 0) options->prefill_bucket = DEFAULT_PREFILL_BUCKET;
}

/* smallest, 2 smallest, ... below largest, then largest. */
static int doubling_sizes(int64_t smallest, int64_t largest, int64_t sizes[VLM_STABLEHLO_MAX_WINDOWS]) {
  int count = 0;
  for (int64_t size = smallest; size < largest && count < VLM_STABLEHLO_MAX_WINDOWS - 1; size *= 2)
    sizes[count++] = size;
  sizes[count++] = largest;
  return count;
}

int vlm_stablehlo_decode_windows(const vlm_stablehlo_options *options, int64_t windows[VLM_STABLEHLO_MAX_WINDOWS]) {
  int64_t smallest = options->decode_window > 0 ? options->decode_window : DEFAULT_DECODE_WINDOW;
  return doubling_sizes(smallest, options->capacity, windows);
}

int vlm_stablehlo_prefill_buckets(const vlm_stablehlo_options *options, int64_t buckets[VLM_STABLEHLO_MAX_WINDOWS]) {
  int64_t smallest = options->prefill_bucket > 0 ? options->prefill_bucket : DEFAULT_PREFILL_BUCKET;
  return doubling_sizes(smallest, options->prefill_chunk, buckets);
}

void vlm_stablehlo_prefill_function(const vlm_stablehlo_options *options, const char *base, int64_t rows, char *out,
                                    size_t size) {
  if (rows >= options->prefill_chunk) snprintf(out, size, "%s", base);
  else snprintf(out, size, "%s_%lld", base, (long long)rows);
}

void vlm_stablehlo_decode_function(const vlm_stablehlo_options *options, int64_t window, char *out, size_t size) {
  if (window >= options->capacity) snprintf(out, size, "decode");
  else snprintf(out, size, "decode_%lld", (long long)window);
}

vlm_status vlm_stablehlo_check_graph(const vlm_graph *graph) {
  for (int32_t i = 0; i < graph->count; i++) VLM_RETURN_IF_ERROR(xla_check_node(graph, &graph->nodes[i]));
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* Function prologues                                                      */
/* ---------------------------------------------------------------------- */

xla_value xla_argument(const char *name, const char *element, int rank, const int64_t *shape) {
  xla_value value = xla_make_value(element, rank, shape);
  snprintf(value.name, sizeof(value.name), "%%%s", name);
  return value;
}

static void print_signature(xla_emitter *e, const char *function, int count, const xla_value *arguments,
                            const xla_value *result) {
  char type[160];
  vlm_sb_appendf(e->out, "  func.func @%s(", function);
  for (int i = 0; i < count; i++) {
    xla_type_text(&arguments[i], type, sizeof(type));
    vlm_sb_appendf(e->out, "%s%s: %s", i ? ", " : "", arguments[i].name, type);
  }
  if (result) {
    xla_type_text(result, type, sizeof(type));
    vlm_sb_appendf(e->out, ") -> %s {\n", type);
  } else {
    vlm_sb_appendf(e->out, ") {\n");
  }
}

/* Prefill: cache index start + r, valid rows r < valid_rows. */
static void prefill_rows(xla_emitter *e) {
  int64_t rows = e->rows;
  xla_value row = xla_iota(e, "i32", 1, &rows, 0);
  xla_value start = xla_broadcast(e, e->start, 1, &rows, NULL);
  e->cache_index = XLA_OP(e, "add", NULL, &row, row, start);
  xla_value valid = xla_broadcast(e, e->valid_rows, 1, &rows, NULL);
  e->row_valid = xla_compare(e, row, valid, "LT");
}

/* Request state (vlm_xla_text_decoder.request_state): each row's adapter
 * as the lora_mask.<k> graph inputs, and each row's RoPE length. */
static void request_rows(xla_emitter *e, bool request_state, int adapter_count) {
  if (!request_state) return;
  int64_t rows = e->rows;
  xla_value adapters;
  if (e->kind == XLA_DECODE) {
    adapters = e->adapters;
    /* A decode step is its own forward: its length is its position + 1. */
    e->rope_length = XLA_OP(e, "add", NULL, &e->positions, e->positions, xla_splat(e, 1, "i32", 1, &rows));
  } else {
    adapters = xla_broadcast(e, e->adapter, 1, &rows, NULL);
    e->rope_length = xla_broadcast(e, e->prompt_length, 1, &rows, NULL);
  }
  static const char *const names[VLM_DECODER_MAX_ADAPTERS] = {"lora_mask.0", "lora_mask.1", "lora_mask.2",
                                                              "lora_mask.3"};
  for (int k = 0; k < adapter_count; k++) {
    e->lora_names[k] = names[k];
    xla_value mine = xla_compare(e, adapters, xla_splat(e, k, "i32", 1, &rows), "EQ");
    e->lora_values[k] = xla_convert(e, mine, "i32");
  }
  e->input_names = e->lora_names;
  e->input_values = e->lora_values;
  e->input_count = adapter_count;
}

static void prologue(xla_emitter *e, const xla_value *logits, bool request_state, int adapter_count) {
  int64_t rows = e->rows, hidden = 0;
  e->valid_rows = xla_argument("valid_rows", "i32", 0, NULL);
  e->slot = xla_argument("slot", "i32", 0, NULL);
  e->start = xla_argument("start", "i32", 0, NULL);
  e->adapter = xla_argument("adapter", "i32", 0, NULL);
  e->prompt_length = xla_argument("prompt_length", "i32", 0, NULL);
  int extra = request_state ? 2 : 0;
  if (e->kind == XLA_TOKEN_PREFILL) {
    e->tokens = xla_argument("tokens", "i32", 1, &rows);
    print_signature(e, e->function_name, 4 + extra,
                    (xla_value[]){e->tokens, e->valid_rows, e->slot, e->start, e->adapter, e->prompt_length}, logits);
    prefill_rows(e);
    e->rope_positions = xla_convert(e, e->cache_index, "f32");
  } else if (e->kind == XLA_EMBEDDINGS_PREFILL) {
    hidden = e->text->hidden_size;
    int axes = e->position_axes;
    e->tokens = xla_argument("tokens", "i32", 1, &rows);
    e->embeddings = xla_argument("features", "f32", 2, (int64_t[]){rows, hidden});
    e->feature_mask = xla_argument("feature_mask", "i32", 1, &rows);
    e->positions = xla_argument("positions", "i32", 2, (int64_t[]){axes, rows});
    e->bias = xla_argument("bias", "f32", 2, (int64_t[]){rows, e->options->capacity});
    /* Layer features after the bias, request state after the scalars
     * (xla_runtime.c binds in this order). */
    xla_value arguments[11] = {e->tokens, e->embeddings, e->feature_mask, e->positions, e->bias};
    int count = 5;
    if (e->layer_feature_count > 0) {
      e->layer_features = xla_argument("layer_features", "f32", 3, (int64_t[]){e->layer_feature_count, rows, hidden});
      arguments[count++] = e->layer_features;
    }
    arguments[count++] = e->valid_rows;
    arguments[count++] = e->slot;
    arguments[count++] = e->start;
    if (extra) {
      arguments[count++] = e->adapter;
      arguments[count++] = e->prompt_length;
    }
    print_signature(e, e->function_name, count, arguments, logits);
    prefill_rows(e);
    if (axes == 1) e->rope_positions = xla_convert(e, xla_reshape(e, e->positions, 1, &rows), "f32");
    else e->row_positions = e->positions;
  } else {
    e->tokens = xla_argument("tokens", "i32", 1, &rows);
    e->cache_index = xla_argument("cache_index", "i32", 1, &rows);
    e->positions = xla_argument("positions", "i32", 1, &rows);
    e->active = xla_argument("active", "i32", 1, &rows);
    e->adapters = xla_argument("adapters", "i32", 1, &rows);
    e->row_windows = xla_argument("row_windows", "i32", 1, &rows);
    print_signature(e, e->function_name, 4 + extra,
                    (xla_value[]){e->tokens, e->cache_index, e->positions, e->active, e->adapters, e->row_windows},
                    logits);
    if (!request_state) e->row_windows = (xla_value){0};
    e->rope_positions = xla_convert(e, e->positions, "f32");
    xla_value zero = xla_splat(e, 0, "i32", 1, &rows);
    xla_value is_active = xla_compare(e, e->active, zero, "NE");
    xla_value spill = xla_splat(e, (double)e->options->capacity, "i32", 1, &rows);
    e->write_index = xla_select(e, is_active, e->cache_index, spill);
  }
  e->zero_index = xla_splat(e, 0, "i32", 0, NULL);
  request_rows(e, request_state, adapter_count);
}

/* ---------------------------------------------------------------------- */
/* One contract function                                                   */
/* ---------------------------------------------------------------------- */

typedef struct module_state {
  const vlm_xla_text_decoder *model;
  const vlm_stablehlo_options *options;
  vlm_string_builder functions;
  vlm_string_builder graph_listing;   /* function:graph hash, for the key */
  xla_weight_list weights;
  int layers;
  int64_t kv_heads, head_dim, vocab;
} module_state;

static xla_emitter make_emitter(module_state *state, xla_function_kind kind, int64_t rows) {
  xla_emitter e = {.out = &state->functions, .kind = kind, .weights = state->model->weights,
                   .options = state->options, .text = &state->model->config->text,
                   .max_position_embeddings = state->model->config->text.max_position_embeddings,
                   .declared = &state->weights, .rows = rows,
                   .cache_rows = state->options->capacity + state->options->prefill_chunk,
                   .position_axes = state->model->config->text.rope.mrope_section_count > 0 ? 3 : 1,
                   .layer_feature_count = (int64_t)state->model->decoder.layer_features.count};
  return e;
}

static vlm_status lower_graph(xla_emitter *e, const xla_value *logits) {
  const vlm_graph *graph = e->graph;
  VLM_RETURN_IF_ERROR(vlm_stablehlo_check_graph(graph));
  e->nodes = calloc((size_t)graph->count, sizeof(*e->nodes));
  e->nodes_f32 = calloc((size_t)graph->count, sizeof(*e->nodes_f32));
  e->nodes_transposed = calloc((size_t)graph->count, sizeof(*e->nodes_transposed));
  e->nodes_transposed_f32 = calloc((size_t)graph->count, sizeof(*e->nodes_transposed_f32));
  size_t layers = (size_t)e->text->num_hidden_layers;
  e->new_keys = calloc(layers, sizeof(*e->new_keys));
  e->new_values = calloc(layers, sizeof(*e->new_values));
  vlm_status status = e->nodes && e->nodes_f32 && e->nodes_transposed && e->nodes_transposed_f32 && e->new_keys && e->new_values
                          ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  if (!status)
    prologue(e, logits, e->request_state, e->request_state ? e->adapter_count : 0);
  for (int32_t i = 0; !status && i < graph->count; i++) status = xla_lower_node(e, i);
  for (size_t layer = 0; !status && layer < layers; layer++)
    if (!e->new_keys[layer].name[0] || !e->new_values[layer].name[0])
      status = VLM_ERROR(INTERNAL, "xla emitter: layer %zu of the decoder graph has no attention", layer);
  if (!status) {
    char type[160];
    xla_value output = e->nodes[graph->output];
    xla_type_text(&output, type, sizeof(type));
    xla_write_new_rows(e);
    xla_flush_cache(e);
    vlm_sb_appendf(e->out, "    return %s : %s\n  }\n\n", output.name, type);
  }
  free(e->nodes);
  free(e->nodes_f32);
  free(e->nodes_transposed);
  free(e->nodes_transposed_f32);
  e->nodes_transposed = e->nodes_transposed_f32 = NULL;
  free(e->new_keys);
  free(e->new_values);
  e->new_keys = e->new_values = NULL;
  return status;
}

/* size: decode's attention window, or a prefill's rows. */
static vlm_status emit_contract(module_state *state, xla_function_kind kind, int64_t size) {
  bool decode = kind == XLA_DECODE;
  int64_t rows = decode ? state->options->slot_count : size;
  int32_t *logit_rows = malloc((size_t)rows * sizeof(int32_t));
  if (!logit_rows) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t i = 0; i < rows; i++) logit_rows[i] = (int32_t)i;
  /* Decode: every slot's logits. Prefill: one row, which the lowering makes
   * the chunk's last valid row (the LM head runs on it alone). */
  int64_t logit_count = decode ? rows : 1;
  /* Every adapter the model has is compiled in; each row's mask selects it. */
  bool used[VLM_DECODER_MAX_ADAPTERS] = {false};
  for (int k = 0; k < state->model->decoder.adapter_count; k++)
    used[k] = state->model->decoder.adapters[k].module_count > 0;
  vlm_decoder_step step = {.row_count = rows, .with_features = kind == XLA_EMBEDDINGS_PREFILL,
                           .logit_rows = logit_rows, .logit_row_count = logit_count, .adapters_used = used};
  vlm_graph graph;
  vlm_graph_init(&graph);
  vlm_status status = vlm_build_decoder_graph(&state->model->decoder, &step, &graph);
  if (!status) {
    xla_emitter e = make_emitter(state, kind, rows);
    e.graph = &graph;
    e.request_state = state->model->request_state;
    e.adapter_count = state->model->decoder.adapter_count;
    if (decode) {
      e.window = size;
      vlm_stablehlo_decode_function(state->options, size, e.function_name, sizeof(e.function_name));
    } else {
      vlm_stablehlo_prefill_function(state->options, kind == XLA_TOKEN_PREFILL ? "token_prefill" : "embeddings_prefill",
                                     size, e.function_name, sizeof(e.function_name));
    }
    xla_value logits = xla_make_value("f32", 2, (int64_t[]){logit_count, state->vocab});
    status = lower_graph(&e, &logits);
    /* The key holds what every function computes: its graph listing. */
    if (!status)
      vlm_sb_appendf(&state->graph_listing, "%s:%016llx,", e.function_name,
                     (unsigned long long)vlm_stablehlo_graph_hash(&graph));
  }
  vlm_graph_release(&graph);
  free(logit_rows);
  return status;
}

/* ---------------------------------------------------------------------- */
/* Helper functions: read_kv, clear_slot, compatibility                    */
/* ---------------------------------------------------------------------- */

static void emit_read_kv(module_state *state) {
  xla_emitter e = make_emitter(state, XLA_DECODE, 0);
  int64_t capacity = state->options->capacity, kv = state->kv_heads, dim = state->head_dim;
  xla_value result = xla_make_value("f32", 5, (int64_t[]){state->layers, 2, capacity, kv, dim});
  e.slot = xla_argument("slot", "i32", 0, NULL);
  print_signature(&e, "read_kv", 1, &e.slot, &result);
  xla_value z = xla_splat(&e, 0, "i32", 0, NULL);
  xla_value cache = xla_current_cache(&e);
  xla_value rows = xla_dynamic_slice(&e, cache, 6, (xla_value[]){z, z, e.slot, z, z, z},
                                     (int64_t[]){state->layers, 2, 1, capacity, kv, dim});
  rows = xla_reshape(&e, rows, 5, result.shape);
  char type[160];
  xla_type_text(&rows, type, sizeof(type));
  vlm_sb_appendf(e.out, "    return %s : %s\n  }\n\n", rows.name, type);
}

static void emit_clear_slot(module_state *state) {
  xla_emitter e = make_emitter(state, XLA_DECODE, 0);
  e.slot = xla_argument("slot", "i32", 0, NULL);
  print_signature(&e, "clear_slot", 1, &e.slot, NULL);
  xla_value z = xla_splat(&e, 0, "i32", 0, NULL);
  xla_value cache = xla_current_cache(&e);
  int64_t shape[6];
  memcpy(shape, cache.shape, sizeof(shape));
  shape[2] = 1;
  xla_value zeros = xla_splat(&e, 0.0, "f32", 6, shape);
  e.cache = xla_dynamic_update_slice(&e, cache, zeros, 6, (xla_value[]){z, z, e.slot, z, z, z});
  xla_flush_cache(&e);
  vlm_sb_appendf(e.out, "    return\n  }\n\n");
}

/* The artifact proves what it was built from, independently of its sidecar:
 * the loader calls this before anything else and compares. */
void xla_emit_compatibility(vlm_string_builder *out, int contract_version, int emitter_version, uint64_t key_hash) {
  vlm_sb_appendf(out,
                 "  func.func @compatibility() -> tensor<4xi32> {\n"
                 "    %%key = \"stablehlo.constant\"() {value = dense<[%d, %d, %d, %d]> : tensor<4xi32>} "
                 ": () -> tensor<4xi32>\n"
                 "    return %%key : tensor<4xi32>\n  }\n",
                 contract_version, emitter_version, (int32_t)(uint32_t)key_hash, (int32_t)(uint32_t)(key_hash >> 32));
}

/* ---------------------------------------------------------------------- */
/* The compatibility key                                                   */
/* ---------------------------------------------------------------------- */

/* Names, dtypes and shapes of the parameters (not their values: one
 * artifact serves every checkpoint of the architecture and dtypes). */
/* The stored name, which the module's parameter references use. */
const char *xla_stored_name(const vlm_checkpoint *checkpoint, const char *name) {
  const vlm_tensor_info *info = vlm_checkpoint_find(checkpoint, name);
  return info && info->stored_name ? info->stored_name : name;
}

/* The parameter scope the runtime loads the tensor's file under: "model"
 * for the model's shards, "shard<N>" for extra file N (adapters store the
 * same names as each other, so each file is a scope of its own). */
void xla_parameter_scope(const vlm_checkpoint *checkpoint, const char *name, char *out, size_t size) {
  const vlm_tensor_info *info = vlm_checkpoint_find(checkpoint, name);
  if (info && (size_t)info->shard >= vlm_checkpoint_main_shard_count(checkpoint))
    snprintf(out, size, "shard%d", info->shard);
  else
    snprintf(out, size, "model");
}

void xla_weights_signature(const vlm_checkpoint *checkpoint, const xla_weight_list *weights, uint64_t *out_hash,
                              char *dtypes, size_t size) {
  uint64_t hash = VLM_FNV1A64_SEED;
  bool seen_f32 = false, seen_bf16 = false, seen_f16 = false;
  for (int i = 0; i < weights->count; i++) {
    const xla_weight *weight = &weights->items[i];
    char line[VLM_GRAPH_NAME_LENGTH + 128];
    char scope[32];
    xla_parameter_scope(checkpoint, weight->name, scope, sizeof(scope));
    int length = snprintf(line, sizeof(line), "%s%s%s=%s%s%s:%s", weight->name, weight->transposed ? "#t" : "",
                          weight->laid_out ? "@layout" : "",
                          xla_stored_name(checkpoint, weight->name), strcmp(scope, "model") ? "@" : "",
                          strcmp(scope, "model") ? scope : "", weight->element);
    for (int d = 0; d < weight->rank; d++)
      length += snprintf(line + length, sizeof(line) - (size_t)length, "%s%lld", d ? "x" : ":",
                         (long long)weight->shape[d]);
    hash = vlm_fnv1a64(line, (size_t)length + 1, hash);
    seen_f32 |= strcmp(weight->element, "f32") == 0;
    seen_bf16 |= strcmp(weight->element, "bf16") == 0;
    seen_f16 |= strcmp(weight->element, "f16") == 0;
  }
  snprintf(dtypes, size, "%s%s%s%s%s", seen_f32 ? "f32" : "", seen_f32 && (seen_bf16 || seen_f16) ? "+" : "",
           seen_bf16 ? "bf16" : "", seen_bf16 && seen_f16 ? "+" : "", seen_f16 ? "f16" : "");
  *out_hash = hash;
}

static void size_list(const int64_t *sizes, int count, char *out, size_t size) {
  out[0] = '\0';
  for (int i = 0; i < count; i++)
    snprintf(out + strlen(out), size - strlen(out), "%s%lld", i ? "," : "", (long long)sizes[i]);
}

static vlm_status build_key(module_state *state, vlm_xla_key *key) {
  const vlm_stablehlo_options *options = state->options;
  memset(key, 0, sizeof(*key));
  uint64_t weights_hash;
  char weight_dtypes[32];
  xla_weights_signature(state->model->weights, &state->weights, &weights_hash, weight_dtypes, sizeof(weight_dtypes));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "contract_version", "%d", VLM_TEXT_CONTRACT_VERSION));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "emitter_version", "%d", VLM_XLA_EMITTER_VERSION));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "module", "text_decoder"));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "model_type", "%s", state->model->config->model_type));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "weights_signature", "%016llx", (unsigned long long)weights_hash));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "dtype", "compute=f32,weights=%s", weight_dtypes));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "capacity", "%lld", (long long)options->capacity));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "slots", "%d", options->slot_count));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "prefill_chunk", "%lld", (long long)options->prefill_chunk));
  int64_t sizes[VLM_STABLEHLO_MAX_WINDOWS];
  char text[VLM_STABLEHLO_MAX_WINDOWS * 24];
  size_list(sizes, vlm_stablehlo_decode_windows(options, sizes), text, sizeof(text));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "decode_windows", "%s", text));
  size_list(sizes, vlm_stablehlo_prefill_buckets(options, sizes), text, sizeof(text));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "prefill_buckets", "%s", text));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "position_mode", "%s",
                                      state->model->config->text.rope.mrope_section_count > 0 ? "mrope-3d" : "rope-1d"));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "mask_mode", "token_prefill=causal,embeddings_prefill=additive-bias"));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "kv_layout", "global:f32[layers,2,slots,capacity+chunk,kv_heads,head_dim]"));
  /* Last, so a mismatch names the readable fields above first. Derived
   * from what was emitted (every function's graph listing, with
   * node parameters and RoPE sets), not from hand-kept config fields. */
  char *listing = vlm_sb_finish((vlm_string_builder *)&state->graph_listing);
  uint64_t graphs = listing ? vlm_fnv1a64(listing, strlen(listing), VLM_FNV1A64_SEED) : 0;
  free(listing);
  if (!graphs) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "graphs", "%016llx", (unsigned long long)graphs));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "encoder_buckets", "none"));
  size_t layer_features = state->model->decoder.layer_features.count;
  if (layer_features)
    VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "side_inputs", "embeddings_prefill:layer_features=f32[%zu,rows,%lld]",
                                        layer_features, (long long)state->model->config->text.hidden_size));
  else VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "side_inputs", "none"));
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* Assembly                                                                */
/* ---------------------------------------------------------------------- */

void xla_emit_module_header(vlm_string_builder *out, const char *module, const char *description,
                            int contract_version, int emitter_version, const vlm_xla_key *key,
                            const vlm_checkpoint *checkpoint, const xla_weight_list *weights) {
  char hash[17];
  vlm_xla_key_hash_hex(key, hash);
  vlm_sb_appendf(out,
                 "%s"
                 "module @%s attributes {vlm.contract_version = %d : i32, "
                 "vlm.emitter_version = %d : i32, vlm.compatibility_key_hash = \"%s\", "
                 "vlm.compatibility_key = {",
                 description, module, contract_version, emitter_version, hash);
  for (int i = 0; i < key->field_count; i++) {
    vlm_sb_appendf(out, "%s%s = ", i ? ", " : "", key->fields[i].name);
    vlm_sb_append_json_string(out, key->fields[i].value, strlen(key->fields[i].value));
  }
  vlm_sb_appendf(out, "}} {\n");
  char type[160];
  for (int i = 0; i < weights->count; i++) {
    const xla_weight *weight = &weights->items[i];
    xla_value value = xla_make_value(weight->element, weight->rank, weight->shape);
    xla_type_text(&value, type, sizeof(type));
    if (weight->laid_out) {
      const char *suffix = weight->transposed ? "#t" : "";
      vlm_sb_appendf(out, "  util.global private @\"%s%s\" = #stream.parameter.named<\"%s\"::\"%s%s\"> : %s\n",
                     weight->name, suffix, XLA_LAYOUT_SCOPE, weight->name, suffix, type);
      continue;
    }
    /* The global is named canonically; the parameter is looked up in the
     * safetensors files by the name stored there (older layouts differ). */
    const char *stored = xla_stored_name(checkpoint, weight->name);
    char scope[32];
    xla_parameter_scope(checkpoint, weight->name, scope, sizeof(scope));
    vlm_sb_appendf(out, "  util.global private @\"%s\" = #stream.parameter.named<\"%s\"::\"%s\"> : %s\n",
                   weight->name, scope, stored, type);
  }
}

static void emit_header(vlm_string_builder *out, const module_state *state, const vlm_xla_key *key) {
  xla_emit_module_header(out, "vlm_text_decoder",
                         "// vlm text decoder: StableHLO emitted from the shared decoder graph\n"
                         "// (src/backends/xla/stablehlo_emitter.h describes the functions and layout).\n",
                         VLM_TEXT_CONTRACT_VERSION, VLM_XLA_EMITTER_VERSION, key, state->model->weights,
                         &state->weights);
  char type[160];
  xla_value cache = xla_make_value("f32", 6, (int64_t[]){state->layers, 2, state->options->slot_count,
                                                         state->options->capacity + state->options->prefill_chunk,
                                                         state->kv_heads, state->head_dim});
  xla_type_text(&cache, type, sizeof(type));
  vlm_sb_appendf(out, "  util.global private mutable @%s = dense<0.0> : %s\n", XLA_CACHE_GLOBAL, type);
  vlm_sb_appendf(out, "\n");
}

static vlm_status check_options(const vlm_xla_text_decoder *model, const vlm_stablehlo_options *options) {
  if (options->slot_count < 1 || options->capacity < 1 || options->prefill_chunk < 1 || options->decode_window < 0 ||
      options->prefill_bucket < 0)
    return VLM_ERROR(INVALID_ARGUMENT, "xla emitter: slots, capacity and prefill chunk must be positive");
  if (options->prefill_chunk > options->capacity)
    return VLM_ERROR(INVALID_ARGUMENT, "xla emitter: prefill chunk %lld exceeds the capacity %lld",
                     (long long)options->prefill_chunk, (long long)options->capacity);
  /* Cache indices and positions are i32 in the module. */
  if (options->capacity + options->prefill_chunk > INT32_MAX / 2)
    return VLM_ERROR(OUT_OF_RANGE, "xla emitter: capacity %lld is too large", (long long)options->capacity);
  if (model->config->text.num_attention_heads % model->config->text.num_key_value_heads != 0)
    return VLM_ERROR(UNIMPLEMENTED, "xla emitter: %lld heads do not group over %lld KV heads",
                     (long long)model->config->text.num_attention_heads,
                     (long long)model->config->text.num_key_value_heads);
  return VLM_OK;
}

vlm_status vlm_stablehlo_emit_text_decoder(const vlm_xla_text_decoder *model,
                                           const vlm_stablehlo_options *options, char **out_module,
                                           vlm_xla_key *out_key) {
  *out_module = NULL;
  VLM_RETURN_IF_ERROR(check_options(model, options));
  const vlm_text_config *text = &model->config->text;
  module_state state = {.model = model, .options = options, .layers = (int)text->num_hidden_layers,
                        .kv_heads = text->num_key_value_heads, .head_dim = text->head_dim,
                        .vocab = text->vocab_size};
  state.weights.items = calloc(XLA_MAX_WEIGHTS, sizeof(xla_weight));
  vlm_status status = state.weights.items ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  int64_t buckets[VLM_STABLEHLO_MAX_WINDOWS];
  int bucket_count = vlm_stablehlo_prefill_buckets(options, buckets);
  for (int i = 0; !status && i < bucket_count; i++) status = emit_contract(&state, XLA_TOKEN_PREFILL, buckets[i]);
  for (int i = 0; !status && i < bucket_count; i++) status = emit_contract(&state, XLA_EMBEDDINGS_PREFILL, buckets[i]);
  int64_t windows[VLM_STABLEHLO_MAX_WINDOWS];
  int window_count = vlm_stablehlo_decode_windows(options, windows);
  for (int i = 0; !status && i < window_count; i++) status = emit_contract(&state, XLA_DECODE, windows[i]);
  vlm_xla_key key;
  if (!status) status = build_key(&state, &key);
  vlm_string_builder module = {0};
  if (!status) {
    emit_read_kv(&state);
    emit_clear_slot(&state);
    xla_emit_compatibility(&state.functions, VLM_TEXT_CONTRACT_VERSION, VLM_XLA_EMITTER_VERSION,
                           vlm_xla_key_hash(&key));
    emit_header(&module, &state, &key);
    char *functions = vlm_sb_finish(&state.functions);
    if (functions) vlm_sb_append(&module, functions, strlen(functions));
    else module.failed = true;
    free(functions);
    vlm_sb_appendf(&module, "}\n");
    *out_module = vlm_sb_finish(&module);
    if (!*out_module) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory emitting the module");
  }
  vlm_sb_release(&state.functions);
  vlm_sb_release(&state.graph_listing);
  vlm_sb_release(&module);
  free(state.weights.items);
  if (!status && out_key) *out_key = key;
  return status;
}
