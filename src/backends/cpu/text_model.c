#include "backends/cpu/text_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/cpu_graph.h"
#include "backends/cpu_packs.h"
#include "backends/cpu/cpu_features.h"
#include "core/alloc.h"
#include "core/log.h"
#include "core/status.h"
#include "models/decoder.h"
#include "models/family.h"
#include "models/model.h"

#define DEFAULT_CAPACITY 4096
#define DEFAULT_PREFILL_CHUNK 512

struct vlm_text_model {
  vlm_model *model;
  const vlm_model_config *config;
  vlm_decoder_description decoder;
  const vlm_checkpoint *weights;
  vlm_kv_cache *cache;
  vlm_cpu_packs *packs; /* the decoder's linear weights, repacked once */
  vlm_thread_pool *pool;
  const vlm_allocator *allocator;
  int32_t slot_count;
  int64_t capacity;
  int64_t prefill_chunk;
  vlm_node_observer observer;
  void *observer_context;
  /* Per slot, cleared with it: the request's LoRA adapter (-1: none) and
   * its prompt length (for length-dependent RoPE and the LongRoPE cache
   * reset; 0 until the request says or a prefill shows it). */
  int32_t *slot_adapters;
  int64_t *slot_prompt_lengths;
};

void vlm_text_model_set_observer(vlm_text_model *model, vlm_node_observer observer, void *context) {
  model->observer = observer;
  model->observer_context = context;
}

/* One step of rows through the decoder graph. */
typedef struct step_request {
  int64_t row_count;
  const int32_t *tokens;
  const float *features;          /* [rows, hidden] where feature_mask, or NULL */
  const int32_t *feature_mask;
  const float *layer_features;    /* [L, layer_feature_stride rows, hidden], from row 0; or NULL */
  int64_t layer_feature_stride;
  vlm_row_context rows;
  const int32_t *logit_rows;
  int64_t logit_row_count;
  float *output;                  /* [logit rows, vocab] or [rows, hidden] */
} step_request;

static bool uses_mrope(const vlm_text_model *model) {
  return model->config->text.rope.mrope_section_count > 0;
}

/* Packs every linear weight of the decoder (a one-row step's graph holds
 * them all, the LM head included) before the first request. */
static vlm_status prepare_weights(vlm_text_model *model) {
  int32_t slot = 0, logit_row = 0;
  int64_t cache_index = 0, positions[3] = {0, 0, 0};
  vlm_decoder_step step = {.row_count = 1, .logit_rows = &logit_row, .logit_row_count = 1};
  vlm_graph graph;
  vlm_graph_init(&graph);
  graph.rows = (vlm_row_context){.row_count = 1, .slots = &slot, .cache_indices = &cache_index,
                                 .positions = positions, .position_axes = uses_mrope(model) ? 3 : 1};
  vlm_status status = vlm_build_decoder_graph(&model->decoder, &step, &graph);
  if (!status) {
    /* Packing reads every decoder weight from the mapped files (and
     * quantizes them with --quantize): on a large model the longest part of
     * a load, hence a line before and after. */
    const char *quantized = model->model->quantize == VLM_WEIGHT_QUANTIZATION_Q8   ? " to q8"
                            : model->model->quantize == VLM_WEIGHT_QUANTIZATION_Q4 ? " to q4"
                                                                                   : "";
    VLM_LOG_INFOF("cpu backend: packing the text decoder's linear weights%s", quantized);
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    vlm_cpu_graph_run run = {.graph = &graph, .weights = model->weights, .pool = model->pool, .packs = model->packs};
    status = vlm_cpu_graph_prepare(&run);
    clock_gettime(CLOCK_MONOTONIC, &end);
    if (!status)
      VLM_LOG_INFOF("cpu backend: packed %lld linear weights%s, %.1f MiB, in %.2f s",
                    (long long)vlm_cpu_packs_count(model->packs), quantized,
                    (double)vlm_cpu_packs_bytes(model->packs) / 1048576.0,
                    (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) * 1e-9);
  }
  vlm_graph_release(&graph);
  return status;
}

/* ---------------------------------------------------------------------- */

vlm_status vlm_text_model_open(vlm_model *opened, const vlm_text_model_options *options,
                               vlm_text_model **out_model) {
  *out_model = NULL;
  vlm_text_model_options defaults = {0};
  if (!options) options = &defaults;
  VLM_RETURN_IF_ERROR(vlm_model_require_family(opened, "the text decoder"));
  if (!opened->family->describe_decoder)
    return VLM_ERROR(UNIMPLEMENTED, "%s: the text decoder of model_type '%s' is not supported yet",
                     opened->directory, opened->config.model_type);
  vlm_text_model *model = calloc(1, sizeof(*model));
  if (!model) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  model->model = vlm_model_retain(opened);
  model->config = &opened->config;
  model->weights = opened->weights;
  model->pool = options->pool;
  model->allocator = options->allocator;
  vlm_family_describe_decoder(opened->family, model->config, &model->decoder);
  vlm_model_describe_adapters(opened, &model->decoder);
  const vlm_text_config *text = &model->config->text;
  model->slot_count = options->slot_count > 0 ? options->slot_count : 1;
  model->slot_adapters = malloc((size_t)model->slot_count * sizeof(int32_t));
  model->slot_prompt_lengths = calloc((size_t)model->slot_count, sizeof(int64_t));
  if (!model->slot_adapters || !model->slot_prompt_lengths) {
    vlm_text_model_release(model);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  for (int32_t i = 0; i < model->slot_count; i++) model->slot_adapters[i] = -1;
  model->capacity = options->capacity > 0 ? options->capacity
                    : text->max_position_embeddings < DEFAULT_CAPACITY ? text->max_position_embeddings
                                                                       : DEFAULT_CAPACITY;
  model->prefill_chunk = options->prefill_chunk > 0 ? options->prefill_chunk : DEFAULT_PREFILL_CHUNK;
  vlm_kv_layout *layout = vlm_allocate(NULL, sizeof(*layout), VLM_DEFAULT_ALIGNMENT);
  vlm_status status = layout ? vlm_family_kv_layout(opened->family, model->config, layout)
                             : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_kv_cache_shape shape = {model->slot_count, (int32_t)text->num_hidden_layers,
                              (int32_t)text->num_key_value_heads, (int32_t)text->head_dim, model->capacity,
                              layout};
  if (!status) status = vlm_kv_cache_create(&shape, options->allocator, &model->cache);
  vlm_release(NULL, layout);
  if (!status) status = vlm_cpu_packs_create(&model->packs);
  if (!status && opened->quantize)
    vlm_cpu_packs_set_quantization(model->packs,
                                   opened->quantize == VLM_WEIGHT_QUANTIZATION_Q8 ? CPU_QUANT_Q8 : CPU_QUANT_Q4,
                                   CPU_QUANT_GROUP_SIZE);
  if (!status) vlm_cpu_packs_set_hub_quantization(model->packs, &opened->hub_quantization);
  if (!status) {
    cpu_kernel_log_choice("text decoder", vlm_thread_pool_size(model->pool));
    status = prepare_weights(model);
  }
  if (status) {
    vlm_text_model_release(model);
    return status;
  }
  *out_model = model;
  return VLM_OK;
}

void vlm_text_model_release(vlm_text_model *model) {
  if (!model) return;
  vlm_kv_cache_release(model->cache);
  vlm_cpu_packs_release(model->packs);
  vlm_model_release(model->model);
  free(model->slot_adapters);
  free(model->slot_prompt_lengths);
  free(model);
}

const vlm_model_config *vlm_text_model_config(const vlm_text_model *model) { return model->config; }
int64_t vlm_text_model_vocab_size(const vlm_text_model *model) { return model->config->text.vocab_size; }

void vlm_text_model_shape(const vlm_text_model *model, vlm_text_decoder_shape *out) {
  *out = (vlm_text_decoder_shape){model->config->text.vocab_size, model->config->text.hidden_size, model->capacity,
                                  uses_mrope(model) ? 3 : 1, .layer_feature_count = (int)model->decoder.layer_features.count};
}
int64_t vlm_text_model_capacity(const vlm_text_model *model) { return model->capacity; }
vlm_kv_cache *vlm_text_model_cache(vlm_text_model *model) { return model->cache; }
const vlm_checkpoint *vlm_text_model_weights(const vlm_text_model *model) { return model->weights; }
uint64_t vlm_text_model_packed_bytes(const vlm_text_model *model) { return vlm_cpu_packs_bytes(model->packs); }

int64_t vlm_text_model_slot_length(const vlm_text_model *model, int32_t slot) {
  return slot >= 0 && slot < model->slot_count ? vlm_kv_cache_length(model->cache, slot) : -1;
}

vlm_status vlm_text_model_embedding_table(const vlm_text_model *model, vlm_tensor *out_table) {
  char name[160];
  snprintf(name, sizeof(name), "%sembed_tokens.weight", model->decoder.prefix);
  const vlm_text_config *text = &model->config->text;
  return vlm_checkpoint_get(model->weights, name, VLM_DTYPE_INVALID, 2,
                            (const int64_t[]){text->vocab_size, text->hidden_size}, out_table);
}

static vlm_status check_slot(const vlm_text_model *model, int32_t slot) {
  if (slot < 0 || slot >= model->slot_count)
    return VLM_ERROR(INVALID_ARGUMENT, "slot %d is outside 0..%d", slot, model->slot_count - 1);
  return VLM_OK;
}

vlm_status vlm_text_model_clear_slot(vlm_text_model *model, int32_t slot) {
  VLM_RETURN_IF_ERROR(check_slot(model, slot));
  vlm_kv_cache_clear(model->cache, slot);
  model->slot_adapters[slot] = -1;
  model->slot_prompt_lengths[slot] = 0;
  return VLM_OK;
}

int vlm_text_model_adapter_count(const vlm_text_model *model) { return model->decoder.adapter_count; }

void vlm_text_model_kv_variant(const vlm_text_model *model, int32_t slot, int64_t out[3]) {
  out[0] = out[1] = out[2] = 0;
  if (slot < 0 || slot >= model->slot_count) return;
  const vlm_text_config *text = &model->config->text;
  int64_t length = model->slot_prompt_lengths[slot];
  out[0] = model->slot_adapters[slot] + 1;
  out[1] = cpu_rope_length_class(&text->rope, text->max_position_embeddings, length);
  if (text->has_sliding_rope)
    out[2] = cpu_rope_length_class(&text->sliding_rope, text->max_position_embeddings, length);
}

vlm_status vlm_text_model_begin_request(vlm_text_model *model, int32_t slot, int32_t adapter,
                                        int64_t prompt_length) {
  VLM_RETURN_IF_ERROR(check_slot(model, slot));
  if (adapter < -1 || adapter >= model->decoder.adapter_count)
    return VLM_ERROR(INVALID_ARGUMENT, "adapter %d is outside -1..%d", adapter, model->decoder.adapter_count - 1);
  if (prompt_length < 0) return VLM_ERROR(INVALID_ARGUMENT, "prompt length %lld is negative", (long long)prompt_length);
  model->slot_adapters[slot] = adapter;
  model->slot_prompt_lengths[slot] = prompt_length;
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* Validation shared by the contracts                                      */
/* ---------------------------------------------------------------------- */

static vlm_status check_tokens(const vlm_text_model *model, const int32_t *tokens, int64_t count) {
  if (!tokens) return VLM_ERROR(INVALID_ARGUMENT, "tokens are missing");
  for (int64_t i = 0; i < count; i++)
    if (tokens[i] < 0 || tokens[i] >= model->config->text.vocab_size)
      return VLM_ERROR(INVALID_ARGUMENT, "token %lld (id %d) is outside the vocabulary of %lld",
                       (long long)i, tokens[i], (long long)model->config->text.vocab_size);
  return VLM_OK;
}

static vlm_status check_capacity(const vlm_text_model *model, int32_t slot, int64_t new_rows) {
  int64_t length = vlm_kv_cache_length(model->cache, slot);
  if (new_rows <= 0) return VLM_ERROR(INVALID_ARGUMENT, "a prefill needs at least one row");
  if (length + new_rows > model->capacity)
    return VLM_ERROR(OUT_OF_RANGE,
                     "context length exceeded: slot %d holds %lld positions and %lld more would "
                     "exceed its capacity of %lld",
                     slot, (long long)length, (long long)new_rows, (long long)model->capacity);
  return VLM_OK;
}

static vlm_status check_positions(const vlm_text_model *model, const vlm_positions *positions,
                                  int64_t count) {
  if (!positions || !positions->values) return VLM_OK;
  int wanted = uses_mrope(model) ? 3 : 1;
  if (positions->axes != wanted)
    return VLM_ERROR(INVALID_ARGUMENT, "%d-axis positions given to a model with %s",
                     positions->axes, wanted == 3 ? "3-axis M-RoPE" : "1-axis RoPE");
  for (int64_t i = 0; i < count * positions->axes; i++)
    if (positions->values[i] < 0)
      return VLM_ERROR(INVALID_ARGUMENT, "position %lld is negative", (long long)i);
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* Steps                                                                   */
/* ---------------------------------------------------------------------- */

static vlm_status run_step(vlm_text_model *model, const step_request *request) {
  vlm_decoder_step step = {.row_count = request->row_count,
                           .with_features = request->features != NULL,
                           .logit_rows = request->logit_rows,
                           .logit_row_count = request->logit_row_count};
  /* Each adapter some row's slot uses gets its row mask; the masks and the
   * side inputs are the graph's named inputs. */
  bool used[VLM_DECODER_MAX_ADAPTERS] = {false};
  vlm_tensor_list inputs = {0};
  vlm_status status = VLM_OK;
  for (int k = 0; k < model->decoder.adapter_count && !status; k++) {
    for (int64_t r = 0; r < request->row_count; r++)
      if (model->slot_adapters[request->rows.slots[r]] == k) used[k] = true;
    if (!used[k]) continue;
    char name[32];
    snprintf(name, sizeof(name), "lora_mask.%d", k);
    int32_t *mask = NULL;
    status = vlm_tensor_list_add(&inputs, name, VLM_DTYPE_I32, 1, (const int64_t[]){request->row_count},
                                 (void **)&mask);
    for (int64_t r = 0; !status && r < request->row_count; r++)
      mask[r] = model->slot_adapters[request->rows.slots[r]] == k;
  }
  step.adapters_used = used;
  vlm_graph graph;
  vlm_graph_init(&graph);
  graph.rows = request->rows;
  if (!status) status = vlm_build_decoder_graph(&model->decoder, &step, &graph);
  /* The step's rows of each layer feature ([L, stride, hidden] -> [L, rows, hidden]). */
  if (!status && request->layer_features) {
    int64_t layers = (int64_t)model->decoder.layer_features.count, width = model->config->text.hidden_size;
    float *values = NULL;
    status = vlm_tensor_list_add(&inputs, VLM_SIDE_INPUT_LAYER_FEATURES, VLM_DTYPE_F32, 3,
                                 (const int64_t[]){layers, request->row_count, width}, (void **)&values);
    for (int64_t j = 0; !status && j < layers; j++)
      memcpy(values + j * request->row_count * width, request->layer_features + j * request->layer_feature_stride * width,
             (size_t)(request->row_count * width) * sizeof(float));
  }
  if (!status) {
    vlm_cpu_graph_run run = {.graph = &graph, .weights = model->weights, .cache = model->cache,
                             .pool = model->pool,
                             .max_position_embeddings = model->config->text.max_position_embeddings,
                             .tokens = request->tokens, .features = request->features,
                             .feature_mask = request->feature_mask, .inputs = &inputs, .observer = model->observer,
                             .observer_context = model->observer_context, .packs = model->packs};
    status = vlm_cpu_graph_execute(&run, request->output);
  }
  vlm_graph_release(&graph);
  vlm_tensor_list_release(&inputs);
  return status;
}

/* Chunked prefill of one slot: `tokens` (and, for feature rows,
 * `features` where `feature_mask`) hold all rows. */
typedef struct prefill_request {
  int32_t slot;
  int64_t row_count;
  const int32_t *tokens;
  const float *features;
  const int32_t *feature_mask;
  const float *layer_features;    /* [L, row_count, hidden] or NULL */
  const vlm_positions *positions;
  const float *bias;
  int64_t bias_key_count;
  const vlm_prefill_logits *logits;
} prefill_request;

/* Positions of rows [first, first + count) in the step's layout. */
static void chunk_positions(const vlm_text_model *model, const prefill_request *request,
                            int64_t first, int64_t count, int64_t past, int64_t *out) {
  int axes = uses_mrope(model) ? 3 : 1;
  for (int axis = 0; axis < axes; axis++)
    for (int64_t i = 0; i < count; i++)
      out[axis * count + i] = request->positions && request->positions->values
                                  ? request->positions->values[axis * request->row_count + first + i]
                                  : past + first + i;
}

/* The end of each step of a prefill: every prefill_chunk rows, except that
 * a step never ends inside rows the bias lets see each other (a
 * bidirectional block): those keys would not be in the cache yet. A block
 * longer than the chunk goes in one longer step. */
static vlm_status plan_steps(const vlm_text_model *model, const prefill_request *request, int64_t past,
                             int64_t **out_ends, int64_t *out_count, int64_t *out_longest) {
  int64_t count = request->row_count, chunk = model->prefill_chunk, steps = 0, longest = 0;
  int64_t *ends = malloc((size_t)(count + 1) * sizeof(int64_t));
  int64_t *reach = request->bias ? malloc((size_t)count * sizeof(int64_t)) : NULL;
  if (!ends || (request->bias && !reach)) {
    free(ends);
    free(reach);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory planning a prefill");
  }
  if (reach) vlm_prefill_bias_reach(request->bias, count, request->bias_key_count, past, reach);
  for (int64_t first = 0, end; first < count; first = end) {
    end = reach ? vlm_prefill_chunk_end(reach, count, first, chunk) : (count - first < chunk ? count : first + chunk);
    ends[steps++] = end;
    if (end - first > longest) longest = end - first;
  }
  free(reach);
  *out_ends = ends, *out_count = steps, *out_longest = longest;
  return VLM_OK;
}

static vlm_status run_prefill(vlm_text_model *model, const prefill_request *request) {
  int64_t past = vlm_kv_cache_length(model->cache, request->slot);
  int64_t vocab = model->config->text.vocab_size, hidden = model->config->text.hidden_size;
  int64_t *ends = NULL, step_count = 0, chunk = 0;
  VLM_RETURN_IF_ERROR(plan_steps(model, request, past, &ends, &step_count, &chunk));
  size_t largest = (size_t)(chunk * (vocab > hidden ? vocab : hidden));
  float *scratch = malloc(largest * sizeof(float));
  int64_t *positions = malloc((size_t)(3 * chunk) * sizeof(int64_t));
  int64_t *cache_indices = malloc((size_t)chunk * sizeof(int64_t));
  int32_t *slots = malloc((size_t)chunk * sizeof(int32_t));
  int32_t *logit_rows = malloc((size_t)chunk * sizeof(int32_t));
  int64_t *rope_lengths = malloc((size_t)chunk * sizeof(int64_t));
  vlm_status status = scratch && positions && cache_indices && slots && logit_rows && rope_lengths
                          ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for a prefill chunk");
  /* Every row of a prompt sees the whole prompt's length, as in
   * Transformers' one forward over it: the request's prompt length when the
   * engine prefills it chunk by chunk, else this call's. */
  int64_t *prompt_length = &model->slot_prompt_lengths[request->slot];
  if (*prompt_length < past + request->row_count) *prompt_length = past + request->row_count;
  for (int64_t i = 0; rope_lengths && i < chunk; i++) rope_lengths[i] = *prompt_length;
  for (int64_t index = 0, first = 0; !status && index < step_count; first = ends[index++]) {
    int64_t count = ends[index] - first;
    bool last_chunk = first + count == request->row_count;
    for (int64_t i = 0; i < count; i++) {
      cache_indices[i] = past + first + i;
      slots[i] = request->slot;
      logit_rows[i] = (int32_t)i;
    }
    chunk_positions(model, request, first, count, past, positions);
    step_request step = {
        .row_count = count,
        .tokens = request->tokens + first,
        .features = request->features ? request->features + first * hidden : NULL,
        .feature_mask = request->feature_mask ? request->feature_mask + first : NULL,
        .layer_features = request->layer_features ? request->layer_features + first * hidden : NULL,
        .layer_feature_stride = request->row_count,
        .rows = {.row_count = count, .slots = slots, .cache_indices = cache_indices,
                 .positions = positions, .position_axes = uses_mrope(model) ? 3 : 1,
                 .bias = request->bias ? request->bias + first * request->bias_key_count : NULL,
                 .bias_key_count = request->bias_key_count, .rope_lengths = rope_lengths},
        .output = scratch};
    if (request->logits->all_rows) {
      step.logit_rows = logit_rows;
      step.logit_row_count = count;
    } else if (last_chunk) {
      step.logit_rows = &logit_rows[count - 1];
      step.logit_row_count = 1;
    }
    status = run_step(model, &step);
    if (status) break;
    vlm_kv_cache_set_length(model->cache, request->slot, past + first + count);
    if (request->logits->all_rows)
      memcpy(request->logits->all_rows + first * vocab, scratch, (size_t)(count * vocab) * sizeof(float));
    if (last_chunk && request->logits->last_row)
      memcpy(request->logits->last_row, scratch + (step.logit_row_count - 1) * vocab,
             (size_t)vocab * sizeof(float));
  }
  free(ends);
  free(scratch);
  free(positions);
  free(cache_indices);
  free(slots);
  free(logit_rows);
  free(rope_lengths);
  /* A failed prefill leaves nothing half-written behind. */
  if (status) vlm_kv_cache_set_length(model->cache, request->slot, past);
  return status;
}

vlm_status vlm_text_model_token_prefill(vlm_text_model *model, int32_t slot,
                                        const int32_t *tokens, int64_t token_count,
                                        const vlm_positions *positions,
                                        const vlm_prefill_logits *logits) {
  VLM_RETURN_IF_ERROR(check_slot(model, slot));
  VLM_RETURN_IF_ERROR(check_capacity(model, slot, token_count));
  VLM_RETURN_IF_ERROR(check_tokens(model, tokens, token_count));
  VLM_RETURN_IF_ERROR(check_positions(model, positions, token_count));
  if (!logits || (!logits->last_row && !logits->all_rows))
    return VLM_ERROR(INVALID_ARGUMENT, "token_prefill: no logits buffer given");
  prefill_request request = {.slot = slot, .row_count = token_count, .tokens = tokens,
                             .positions = positions, .logits = logits};
  return run_prefill(model, &request);
}

vlm_status vlm_text_model_embeddings_prefill(vlm_text_model *model, int32_t slot,
                                             const vlm_prefill_input *input,
                                             const vlm_prefill_logits *logits) {
  VLM_RETURN_IF_ERROR(check_slot(model, slot));
  vlm_text_decoder_shape shape;
  vlm_text_model_shape(model, &shape);
  VLM_RETURN_IF_ERROR(vlm_status_annotate(vlm_prefill_input_check(&shape, vlm_kv_cache_length(model->cache, slot), input),
                                          "embeddings_prefill"));
  if (!logits || (!logits->last_row && !logits->all_rows))
    return VLM_ERROR(INVALID_ARGUMENT, "embeddings_prefill: no logits buffer given");
  /* A feature row's id is not read, but the gather still looks it up:
   * give it a valid one (placeholder ids may lie outside the table). */
  int32_t *tokens = malloc((size_t)input->row_count * sizeof(int32_t));
  if (!tokens) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t i = 0; i < input->row_count; i++)
    tokens[i] = input->feature_mask && input->feature_mask[i] ? 0 : input->tokens[i];
  vlm_positions positions = {input->positions, input->position_axes};
  const vlm_side_input *layer_features = vlm_prefill_input_side(input, VLM_SIDE_INPUT_LAYER_FEATURES);
  prefill_request request = {.slot = slot, .row_count = input->row_count, .tokens = tokens,
                             .features = input->features, .feature_mask = input->feature_mask,
                             .layer_features = layer_features ? layer_features->values : NULL,
                             .positions = &positions, .bias = input->bias,
                             .bias_key_count = input->bias_key_count, .logits = logits};
  vlm_status status = run_prefill(model, &request);
  free(tokens);
  return status;
}

static vlm_status check_decode(const vlm_text_model *model, int64_t batch, const int32_t *tokens,
                               const int64_t *positions, const int64_t *mrope_deltas,
                               const int32_t *slots) {
  if (batch <= 0 || batch > model->slot_count)
    return VLM_ERROR(INVALID_ARGUMENT, "decode: batch of %lld rows, expected 1..%d", (long long)batch,
                     model->slot_count);
  if (!positions || !slots) return VLM_ERROR(INVALID_ARGUMENT, "decode: positions and slots are required");
  if (mrope_deltas && !uses_mrope(model))
    return VLM_ERROR(INVALID_ARGUMENT, "decode: M-RoPE deltas given to a model with 1-axis RoPE");
  VLM_RETURN_IF_ERROR(check_tokens(model, tokens, batch));
  for (int64_t b = 0; b < batch; b++) {
    VLM_RETURN_IF_ERROR(check_slot(model, slots[b]));
    for (int64_t c = 0; c < b; c++)
      if (slots[c] == slots[b])
        return VLM_ERROR(INVALID_ARGUMENT, "decode: slot %d appears twice in one batch", slots[b]);
    if (positions[b] < 0) return VLM_ERROR(INVALID_ARGUMENT, "decode: position %lld is negative", (long long)b);
    VLM_RETURN_IF_ERROR(check_capacity(model, slots[b], 1));
  }
  return VLM_OK;
}

vlm_status vlm_text_model_decode(vlm_text_model *model, int64_t batch, const int32_t *tokens,
                                 const int64_t *positions, const int64_t *mrope_deltas,
                                 const int32_t *slots, float *logits) {
  VLM_RETURN_IF_ERROR(check_decode(model, batch, tokens, positions, mrope_deltas, slots));
  int axes = uses_mrope(model) ? 3 : 1;
  int64_t *row_positions = malloc((size_t)(axes * batch) * sizeof(int64_t));
  int64_t *cache_indices = malloc((size_t)batch * sizeof(int64_t));
  int32_t *logit_rows = malloc((size_t)batch * sizeof(int32_t));
  int64_t *rope_lengths = malloc((size_t)batch * sizeof(int64_t));
  int64_t *windows = malloc((size_t)batch * sizeof(int64_t));
  vlm_status status = row_positions && cache_indices && logit_rows && rope_lengths && windows
                          ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  int64_t reset = model->decoder.rope_cache_reset_length;
  for (int64_t b = 0; !status && b < batch; b++) {
    cache_indices[b] = vlm_kv_cache_length(model->cache, slots[b]);
    logit_rows[b] = (int32_t)b;
    for (int axis = 0; axis < axes; axis++)
      row_positions[axis * batch + b] = positions[b] + (mrope_deltas ? mrope_deltas[b] : 0);
    /* A decode step is its own forward call: its length is its position + 1. */
    rope_lengths[b] = row_positions[b] + 1;
    windows[b] = reset > 0 && cache_indices[b] >= reset && model->slot_prompt_lengths[slots[b]] <= reset ? 1 : 0;
  }
  if (!status) {
    step_request step = {.row_count = batch, .tokens = tokens,
                         .rows = {.row_count = batch, .slots = slots, .cache_indices = cache_indices,
                                  .positions = row_positions, .position_axes = axes,
                                  .rope_lengths = rope_lengths, .row_windows = windows},
                         .logit_rows = logit_rows, .logit_row_count = batch, .output = logits};
    status = run_step(model, &step);
  }
  for (int64_t b = 0; !status && b < batch; b++)
    vlm_kv_cache_set_length(model->cache, slots[b], cache_indices[b] + 1);
  free(row_positions);
  free(cache_indices);
  free(logit_rows);
  free(rope_lengths);
  free(windows);
  return status;
}
