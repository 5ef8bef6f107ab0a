/* The xla backend behind the engine's text-decoder table
 * (src/engine/text_decoder.h): finds (or compiles) the artifact for this
 * model and geometry, opens it with xla_runtime, and keeps each slot's
 * length, which the compiled functions take as their start position. */
#include <stdlib.h>
#include <string.h>

#include "backends/xla/iree_compiler.h"
#include "backends/xla/stablehlo_emitter.h"
#include "backends/xla/xla_runtime.h"
#include "core/log.h"
#include "core/status.h"
#include "models/model.h"
#include "models/modules.h"
#include "vlm/xla.h"

typedef struct xla_decoder {
  vlm_xla_text_decoder model;       /* config, decoder description, weights */
  bool model_open;
  vlm_stablehlo_options geometry;
  vlm_xla_runtime *runtime;
  int64_t vocab, hidden;
  int64_t *lengths;                 /* [slots] */
  float *slot_logits;               /* [slots, vocab] */
  int32_t *tokens, *cache_indices, *positions, *active; /* [slots] */
  int32_t *row_positions;           /* [3, capacity] */
  int position_axes;
  /* Per slot, cleared with it: the request's adapter (-1: none) and prompt
   * length (begin_request), and decode's per-row adapters and windows. */
  int32_t *adapters, *windows, *row_adapters;
  int64_t *prompt_lengths;
  vlm_module_report report;
} xla_decoder;

static void xla_shape(void *self, vlm_text_decoder_shape *out) {
  xla_decoder *decoder = self;
  *out = (vlm_text_decoder_shape){decoder->vocab, decoder->hidden, decoder->geometry.capacity, decoder->position_axes,
                                  .prefill_rows_limit = decoder->geometry.prefill_chunk,
                                  .layer_feature_count = (int)decoder->model.decoder.layer_features.count};
}
static int32_t xla_slot_count(void *self) { return ((xla_decoder *)self)->geometry.slot_count; }

/* The device-resident cache: [layers, 2, slots, capacity + chunk, kv_heads, head_dim] f32. */
static uint64_t xla_kv_bytes(void *self) {
  xla_decoder *decoder = self;
  const vlm_text_config *text = &decoder->model.config->text;
  int64_t head_dim = text->head_dim ? text->head_dim : text->hidden_size / text->num_attention_heads;
  return (uint64_t)text->num_hidden_layers * 2 * (uint64_t)decoder->geometry.slot_count *
         (uint64_t)(decoder->geometry.capacity + decoder->geometry.prefill_chunk) *
         (uint64_t)text->num_key_value_heads * (uint64_t)head_dim * sizeof(float);
}

static int64_t xla_slot_length(void *self, int32_t slot) { return ((xla_decoder *)self)->lengths[slot]; }

static vlm_status xla_clear_slot(void *self, int32_t slot) {
  xla_decoder *decoder = self;
  if (slot < 0 || slot >= decoder->geometry.slot_count)
    return VLM_ERROR(INVALID_ARGUMENT, "xla: slot %d out of range", slot);
  decoder->lengths[slot] = 0;
  decoder->adapters[slot] = -1;
  decoder->prompt_lengths[slot] = 0;
  return vlm_xla_clear_slot(decoder->runtime, slot);
}

static vlm_status xla_begin_request(void *self, int32_t slot, int32_t adapter, int64_t prompt_length) {
  xla_decoder *decoder = self;
  if (slot < 0 || slot >= decoder->geometry.slot_count)
    return VLM_ERROR(INVALID_ARGUMENT, "xla: slot %d out of range", slot);
  if (adapter < -1 || adapter >= decoder->model.decoder.adapter_count)
    return VLM_ERROR(INVALID_ARGUMENT, "adapter %d is outside -1..%d", adapter, decoder->model.decoder.adapter_count - 1);
  if (prompt_length < 0) return VLM_ERROR(INVALID_ARGUMENT, "prompt length %lld is negative", (long long)prompt_length);
  decoder->adapters[slot] = adapter;
  decoder->prompt_lengths[slot] = prompt_length;
  return VLM_OK;
}

/* The prefill's request state: every row sees the whole prompt's length
 * (the request's, or this call's end when it is longer), as on cpu. */
static vlm_status set_prefill_state(xla_decoder *decoder, int32_t slot, int64_t count) {
  int64_t *prompt_length = &decoder->prompt_lengths[slot];
  if (*prompt_length < decoder->lengths[slot] + count) *prompt_length = decoder->lengths[slot] + count;
  return vlm_xla_set_prefill_state(decoder->runtime, decoder->adapters[slot], *prompt_length);
}

static vlm_status check_room(const xla_decoder *decoder, int32_t slot, int64_t count) {
  if (slot < 0 || slot >= decoder->geometry.slot_count)
    return VLM_ERROR(INVALID_ARGUMENT, "xla: slot %d out of range", slot);
  if (count <= 0 || decoder->lengths[slot] + count > decoder->geometry.capacity)
    return VLM_ERROR(OUT_OF_RANGE, "xla: %lld rows after %lld exceed the compiled capacity of %lld",
                     (long long)count, (long long)decoder->lengths[slot], (long long)decoder->geometry.capacity);
  return VLM_OK;
}

/* The runtime chunks the rows and returns the last row's logits. */
static vlm_status xla_token_prefill(void *self, int32_t slot, const int32_t *tokens, int64_t count,
                                    float *last_logits) {
  xla_decoder *decoder = self;
  VLM_RETURN_IF_ERROR(check_room(decoder, slot, count));
  VLM_RETURN_IF_ERROR(set_prefill_state(decoder, slot, count));
  VLM_RETURN_IF_ERROR(vlm_xla_token_prefill(decoder->runtime, slot, decoder->lengths[slot], tokens, count,
                                            last_logits));
  decoder->lengths[slot] += count;
  return VLM_OK;
}

static vlm_status xla_embeddings_prefill(void *self, int32_t slot, const vlm_prefill_input *input,
                                         float *last_logits) {
  xla_decoder *decoder = self;
  int64_t count = input->row_count, length = decoder->lengths[slot >= 0 && slot < decoder->geometry.slot_count ? slot : 0];
  VLM_RETURN_IF_ERROR(check_room(decoder, slot, count));
  vlm_text_decoder_shape shape;
  xla_shape(self, &shape);
  VLM_RETURN_IF_ERROR(vlm_prefill_input_check(&shape, length, input));
  int axes = decoder->position_axes;
  for (int a = 0; a < axes; a++)
    for (int64_t i = 0; i < count; i++) {
      int64_t position = input->positions ? input->positions[(input->position_axes == axes ? a : 0) * count + i]
                                          : length + i;
      if (position > INT32_MAX) return VLM_ERROR(OUT_OF_RANGE, "xla: position %lld is too large", (long long)position);
      decoder->row_positions[a * count + i] = (int32_t)position;
    }
  const vlm_side_input *layer_features = vlm_prefill_input_side(input, VLM_SIDE_INPUT_LAYER_FEATURES);
  vlm_xla_prefill_rows rows = {.tokens = input->tokens, .features = input->features,
                               .feature_mask = input->feature_mask,
                               .layer_features = layer_features ? layer_features->values : NULL,
                               .positions = decoder->row_positions,
                               .bias = input->bias, .bias_key_count = input->bias_key_count};
  VLM_RETURN_IF_ERROR(set_prefill_state(decoder, slot, count));
  VLM_RETURN_IF_ERROR(vlm_xla_embeddings_prefill(decoder->runtime, slot, length, &rows, count, last_logits));
  decoder->lengths[slot] += count;
  return VLM_OK;
}

/* The compiled decode takes one row per slot with an active mask; the
 * engine's batch rows are scattered into it and gathered back. The KV goes
 * to each slot's length; RoPE takes the engine's position (the slot's
 * M-RoPE delta included). */
static vlm_status xla_decode(void *self, int64_t batch, const int32_t *tokens, const int64_t *positions,
                             const int32_t *slots, float *logits) {
  xla_decoder *decoder = self;
  int32_t slot_count = decoder->geometry.slot_count;
  memset(decoder->active, 0, (size_t)slot_count * sizeof(int32_t));
  memset(decoder->tokens, 0, (size_t)slot_count * sizeof(int32_t));
  memset(decoder->cache_indices, 0, (size_t)slot_count * sizeof(int32_t));
  memset(decoder->positions, 0, (size_t)slot_count * sizeof(int32_t));
  memset(decoder->windows, 0, (size_t)slot_count * sizeof(int32_t));
  for (int32_t s = 0; s < slot_count; s++) decoder->row_adapters[s] = -1;
  int64_t reset = decoder->model.decoder.rope_cache_reset_length;
  for (int64_t b = 0; b < batch; b++) {
    int32_t slot = slots[b];
    VLM_RETURN_IF_ERROR(check_room(decoder, slot, 1));
    if (decoder->active[slot]) return VLM_ERROR(INVALID_ARGUMENT, "xla decode: slot %d appears twice", slot);
    if (positions[b] < 0 || positions[b] > INT32_MAX)
      return VLM_ERROR(INVALID_ARGUMENT, "xla decode: slot %d's position %lld is out of range", slot,
                       (long long)positions[b]);
    decoder->active[slot] = 1;
    decoder->tokens[slot] = tokens[b];
    decoder->cache_indices[slot] = (int32_t)decoder->lengths[slot];
    decoder->positions[slot] = (int32_t)positions[b];
    decoder->row_adapters[slot] = decoder->adapters[slot];
    /* LongRoPE's cache reset (decoder.h), as on cpu. */
    decoder->windows[slot] =
        reset > 0 && decoder->lengths[slot] >= reset && decoder->prompt_lengths[slot] <= reset ? 1 : 0;
  }
  VLM_RETURN_IF_ERROR(vlm_xla_set_decode_state(decoder->runtime, decoder->row_adapters, decoder->windows));
  VLM_RETURN_IF_ERROR(vlm_xla_decode(decoder->runtime, decoder->tokens, decoder->cache_indices, decoder->positions,
                                     decoder->active, decoder->slot_logits));
  for (int64_t b = 0; b < batch; b++) {
    decoder->lengths[slots[b]]++;
    memcpy(logits + b * decoder->vocab, decoder->slot_logits + (int64_t)slots[b] * decoder->vocab,
           (size_t)decoder->vocab * sizeof(float));
  }
  return VLM_OK;
}

static int xla_module_reports(void *self, vlm_module_report *out, int max) {
  if (max > 0) *out = ((xla_decoder *)self)->report;
  return 1;
}

/* The runtime copies a slot's whole cache [layers, 2, capacity, kv_heads,
 * head_dim] out of the device; the positions asked for are cut from it. */
static vlm_status xla_inspect_kv(void *self, int32_t slot, int64_t first, int64_t count, float *out) {
  xla_decoder *decoder = self;
  VLM_RETURN_IF_ERROR(check_room(decoder, slot, 1));
  if (first < 0 || count < 0 || first + count > decoder->lengths[slot])
    return VLM_ERROR(OUT_OF_RANGE, "xla: KV positions %lld..%lld beyond the slot's %lld", (long long)first,
                     (long long)(first + count), (long long)decoder->lengths[slot]);
  const vlm_text_config *text = &decoder->model.config->text;
  int64_t head_dim = text->head_dim ? text->head_dim : text->hidden_size / text->num_attention_heads;
  int64_t row = text->num_key_value_heads * head_dim, capacity = decoder->geometry.capacity;
  int64_t halves = 2 * (int64_t)text->num_hidden_layers;
  float *all = malloc((size_t)(halves * capacity * row) * sizeof(float));
  if (!all) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for the xla KV copy");
  vlm_status status = vlm_xla_read_kv(decoder->runtime, slot, all);
  for (int64_t half = 0; !status && half < halves; half++)
    memcpy(out + half * count * row, all + (half * capacity + first) * row, (size_t)(count * row) * sizeof(float));
  free(all);
  return status;
}

static void xla_release(void *self) {
  xla_decoder *decoder = self;
  if (!decoder) return;
  vlm_xla_runtime_release(decoder->runtime);
  if (decoder->model_open) vlm_xla_text_decoder_release(&decoder->model);
  free(decoder->lengths);
  free(decoder->slot_logits);
  free(decoder->tokens);
  free(decoder->cache_indices);
  free(decoder->positions);
  free(decoder->active);
  free(decoder->row_positions);
  free(decoder->adapters);
  free(decoder->windows);
  free(decoder->row_adapters);
  free(decoder->prompt_lengths);
  free(decoder);
}

/* No read_kv/write_kv (inspect_kv only shows it to vlm compare): the KV
 * lives in the runtime's device buffers, and
 * IREE's compiled prefill of a chunk size is not known to give a position
 * the same bits as another chunk size or decode would (SPEC 3.5 is a cpu
 * guarantee), so the engine keeps the prefix cache off on xla and logs it.
 * The encoder cache, which stores encoder outputs, works on xla too. */
static const vlm_text_decoder_operations xla_operations = {
    .backend = "xla", .shape = xla_shape, .slot_count = xla_slot_count, .kv_bytes = xla_kv_bytes,
    .slot_length = xla_slot_length, .clear_slot = xla_clear_slot, .begin_request = xla_begin_request,
    .token_prefill = xla_token_prefill,
    .embeddings_prefill = xla_embeddings_prefill, .decode = xla_decode, .module_reports = xla_module_reports,
    .inspect_kv = xla_inspect_kv, .release = xla_release};

/* Compiles the artifact when the cache has none for this key. */
static vlm_status ensure_artifact(xla_decoder *decoder, const vlm_xla_decoder_options *options,
                                  vlm_xla_target target, const char *cache_dir) {
  char *module = NULL;
  vlm_xla_key key;
  vlm_iree_compiler compiler;
  VLM_RETURN_IF_ERROR(vlm_stablehlo_emit_text_decoder(&decoder->model, &decoder->geometry, &module, &key));
  vlm_status status = vlm_iree_compiler_find(&compiler);
  if (!status) status = vlm_xla_key_add_target(&key, compiler.version, target);
  char artifact_dir[VLM_XLA_PATH_LENGTH];
  if (!status) {
    vlm_xla_artifact_dir(cache_dir, &key, artifact_dir, sizeof(artifact_dir));
    vlm_status check = vlm_xla_artifact_check(artifact_dir, &key);
    if (check && !options->compile_if_missing) {
      status = vlm_status_annotate(check, "no usable xla artifact for %s with %d slot(s), capacity %lld, prefill "
                                   "chunk %lld; run `vlm compile --model DIR --backend xla --slots %d --capacity "
                                   "%lld --prefill-chunk %lld` first",
                                   decoder->model.config->model_type, decoder->geometry.slot_count,
                                   (long long)decoder->geometry.capacity, (long long)decoder->geometry.prefill_chunk,
                                   decoder->geometry.slot_count, (long long)decoder->geometry.capacity,
                                   (long long)decoder->geometry.prefill_chunk);
    } else if (check) {
      vlm_status_free(check);
      if (options->progress)
        fprintf(options->progress, "vlm: compiling the text decoder for the xla backend (%s, %d slot(s), capacity "
                "%lld, prefill chunk %lld); cached for next time\n", vlm_xla_target_name(target),
                decoder->geometry.slot_count, (long long)decoder->geometry.capacity,
                (long long)decoder->geometry.prefill_chunk);
      double started = xla_seconds_now();
      status = vlm_xla_compile(&compiler, module, &key, target, cache_dir, options->progress, artifact_dir,
                               sizeof(artifact_dir));
      decoder->report.compile_seconds = xla_seconds_now() - started;
    } else {
      decoder->report.cached = true;
      VLM_LOG_INFOF("xla: text_decoder module from the cache: %s", artifact_dir);
    }
  }
  free(module);
  return status;
}

static vlm_status allocate_buffers(xla_decoder *decoder) {
  size_t slots = (size_t)decoder->geometry.slot_count, capacity = (size_t)decoder->geometry.capacity;
  decoder->lengths = calloc(slots, sizeof(int64_t));
  decoder->slot_logits = malloc(slots * (size_t)decoder->vocab * sizeof(float));
  decoder->tokens = calloc(slots, sizeof(int32_t));
  decoder->cache_indices = calloc(slots, sizeof(int32_t));
  decoder->positions = calloc(slots, sizeof(int32_t));
  decoder->active = calloc(slots, sizeof(int32_t));
  decoder->row_positions = calloc(3 * capacity, sizeof(int32_t));
  decoder->adapters = malloc(slots * sizeof(int32_t));
  decoder->windows = calloc(slots, sizeof(int32_t));
  decoder->row_adapters = malloc(slots * sizeof(int32_t));
  decoder->prompt_lengths = calloc(slots, sizeof(int64_t));
  bool ok = decoder->lengths && decoder->slot_logits && decoder->tokens && decoder->cache_indices &&
            decoder->positions && decoder->active && decoder->row_positions && decoder->adapters &&
            decoder->windows && decoder->row_adapters && decoder->prompt_lengths;
  for (size_t s = 0; ok && s < slots; s++) decoder->adapters[s] = decoder->row_adapters[s] = -1;
  return ok ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for the xla decoder's buffers");
}

vlm_status vlm_xla_open_text_decoder(vlm_model *model, const vlm_xla_decoder_options *options,
                                     vlm_text_decoder **out_decoder) {
  *out_decoder = NULL;
  vlm_xla_decoder_options defaults = {0};
  if (!options) options = &defaults;
  /* Refused before any buffer or compile (quantized weights, dynamic RoPE):
   * the gate vlm inspect reports. */
  VLM_RETURN_IF_ERROR(vlm_xla_text_decoder_check(model));
  vlm_xla_target target = VLM_XLA_TARGET_LLVM_CPU;
  if (options->target) VLM_RETURN_IF_ERROR(vlm_xla_target_from_name(options->target, &target));
  char cache_dir[VLM_XLA_PATH_LENGTH];
  if (options->cache_dir) snprintf(cache_dir, sizeof(cache_dir), "%s", options->cache_dir);
  else vlm_xla_default_cache_dir(cache_dir, sizeof(cache_dir));
  xla_decoder *decoder = calloc(1, sizeof(*decoder));
  vlm_text_decoder *handle = calloc(1, sizeof(*handle));
  if (!decoder || !handle) {
    free(decoder);
    free(handle);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  vlm_status status = vlm_xla_text_decoder_open(model, &decoder->model);
  decoder->model_open = status == VLM_OK;
  if (!status) {
    decoder->geometry = (vlm_stablehlo_options){options->slot_count, options->capacity, options->prefill_chunk};
    vlm_stablehlo_default_options(&decoder->model, &decoder->geometry);
    decoder->vocab = decoder->model.config->text.vocab_size;
    decoder->hidden = decoder->model.config->text.hidden_size;
    decoder->position_axes = decoder->model.config->text.rope.mrope_section_count > 0 ? 3 : 1;
    status = allocate_buffers(decoder);
  }
  if (!status) status = ensure_artifact(decoder, options, target, cache_dir);
  vlm_xla_runtime_options runtime_options = {.target = target, .thread_count = xla_thread_count(options->thread_count)};
  double load_started = xla_seconds_now();
  if (!status)
    status = vlm_xla_runtime_open(&decoder->model, &decoder->geometry, cache_dir, NULL, &runtime_options,
                                  &decoder->runtime);
  if (!status) {
    snprintf(decoder->report.name, sizeof(decoder->report.name), "text_decoder");
    decoder->report.load_seconds = xla_seconds_now() - load_started;
    decoder->report.weight_bytes = vlm_xla_runtime_layout_bytes(decoder->runtime);
    VLM_LOG_INFOF("xla: text_decoder loaded in %.2f s (%.1f MiB of weights laid out; %s, %d thread(s))",
                  decoder->report.load_seconds, (double)decoder->report.weight_bytes / 1048576.0,
                  runtime_options.thread_count > 1 ? "local-task" : "local-sync",
                  runtime_options.thread_count > 1 ? runtime_options.thread_count : 1);
  }
  if (status) {
    xla_release(decoder);
    free(handle);
    return status;
  }
  handle->operations = &xla_operations;
  handle->self = decoder;
  *out_decoder = handle;
  return VLM_OK;
}
