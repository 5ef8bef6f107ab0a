/* The module-boundary stages of a golden case on a backend other than cpu
 * (`vlm compare --backend xla`), computed through the backend's modules --
 * the engine's tables (models/modules.h) -- so nothing of them runs on the
 * host's cpu backend:
 *
 *   projector, deepstack_features   each golden image through the backend's
 *                                   image encoder (its output rows: the
 *                                   projected features, then the layer features)
 *   audio_projector[_vision_speech] each clip through its audio encoder, in the
 *                                   stage's mode (request_kinds)
 *   prefill_logits                  the golden prompt's prefix up to each
 *                                   position, prefilled alone: the module gives
 *                                   the last row's logits only
 *   kv                              the whole prompt prefilled, every layer's
 *                                   keys and values read back (inspect_kv)
 *   greedy_tokens, text             greedy decoding on the backend, and the
 *                                   tokens it chose through the tokenizer
 *
 * The decoder is fed as on cpu (golden_prompt.h: the golden's ids,
 * positions, blocks' bias, adapter and, for media cases, its merged
 * input_embeddings), so it is proven independently of the encoders. The
 * modules are opened once per comparison and shared by the stages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "models/kv_layout.h"
#include "io/json.h"
#include "models/model.h"
#include "models/modules.h"
#include "vlm/tokenizer.h"
#include "validate/compare.h"
#include "validate/golden_media.h"
#include "validate/golden_prompt.h"
#include "validate/stages.h"

struct vlm_compare_modules {
  vlm_text_decoder *decoder;
  char *decoder_error;                       /* why it did not open (kept: not retried) */
  vlm_media_encoder *encoders[VLM_MEDIA_KIND_COUNT];
  char *encoder_errors[VLM_MEDIA_KIND_COUNT];
  int32_t *greedy;                           /* the tokens the backend decoded, once */
  int64_t greedy_count;
  char chunk_note[128];                      /* how the case's prefill chunk was adapted, or "" */
};

vlm_compare_modules *vlm_compare_modules_create(void) { return calloc(1, sizeof(vlm_compare_modules)); }

void vlm_compare_modules_release(vlm_compare_modules *modules) {
  if (!modules) return;
  vlm_text_decoder_release(modules->decoder);
  free(modules->decoder_error);
  for (int k = 0; k < VLM_MEDIA_KIND_COUNT; k++) {
    vlm_media_encoder_release(modules->encoders[k]);
    free(modules->encoder_errors[k]);
  }
  free(modules->greedy);
  free(modules);
}

/* A failed open as a message to repeat for every stage that needs it. */
static vlm_status remember_error(vlm_status status, char **out_message) {
  *out_message = strdup(vlm_status_message(status));
  return status;
}

/* The golden greedy_tokens stage's "tokens" (NULL when it has none). */
static const vlm_json_value *golden_greedy(const vlm_golden_case *golden) {
  for (size_t i = 0; i < golden->stage_count; i++)
    if (strcmp(golden->stages[i].name, "greedy_tokens") == 0) {
      const vlm_json_value *tokens = vlm_json_object_get(golden->stages[i].spec, "tokens");
      return tokens && tokens->type == VLM_JSON_ARRAY ? tokens : NULL;
    }
  return NULL;
}

/* The most rows one attention block of the prompt spans (0: none). */
static int64_t longest_block(const vlm_golden_prompt *prompt) {
  if (!prompt->bias) return 0;
  int64_t *reach = malloc((size_t)prompt->token_count * sizeof(int64_t)), longest = 0;
  if (!reach) return 0;
  vlm_prefill_bias_reach(prompt->bias, prompt->token_count, prompt->token_count, 0, reach);
  for (int64_t r = 0; r < prompt->token_count; r++)
    if (reach[r] - r + 1 > longest) longest = reach[r] - r + 1;
  free(reach);
  return longest;
}

/* One slot holding the prompt and the greedy tokens, its capacity rounded
 * up to a power of two from 128 so the cases of one model share compiled
 * artifacts (the compile is the slow part). */
static vlm_status open_decoder(const vlm_compare_context *context, vlm_text_decoder **out) {
  vlm_compare_modules *modules = context->modules;
  *out = modules->decoder;
  if (modules->decoder) return VLM_OK;
  if (modules->decoder_error) return vlm_status_make(VLM_STATUS_FAILED_PRECONDITION, "%s", modules->decoder_error);
  if (!context->model) return VLM_ERROR(FAILED_PRECONDITION, "%s does not open", context->model_directory);
  vlm_golden_prompt prompt;
  VLM_RETURN_IF_ERROR(vlm_golden_prompt_load(context, &prompt));
  const vlm_json_value *greedy = golden_greedy(context->golden);
  int64_t needed = prompt.token_count + (greedy ? (int64_t)greedy->as.array.count : 0), capacity = 128;
  while (capacity < needed) capacity *= 2;
  int64_t chunk = vlm_golden_prefill_chunk(context), block = longest_block(&prompt);
  vlm_golden_prompt_release(&prompt);
  /* A compiled chunk cannot stretch over an attention block as the cpu
   * decoder's steps do (the engine refuses such a chunk on xla): the
   * case's chunk is raised to the longest block, and the stages say so. */
  if (chunk > 0 && block > chunk) {
    snprintf(modules->chunk_note, sizeof(modules->chunk_note),
             "; prefill chunk %lld raised to %lld, the longest attention block", (long long)chunk, (long long)block);
    chunk = block;
  }
  const vlm_compare_backend *backend = context->backend;
  vlm_status status = backend->open_text_decoder(backend->user, context->model, capacity, chunk, &modules->decoder);
  if (status) return remember_error(status, &modules->decoder_error);
  *out = modules->decoder;
  return VLM_OK;
}

static vlm_status open_encoder(const vlm_compare_context *context, vlm_media_kind kind, vlm_media_encoder **out) {
  vlm_compare_modules *modules = context->modules;
  *out = modules->encoders[kind];
  if (*out) return VLM_OK;
  if (modules->encoder_errors[kind])
    return vlm_status_make(VLM_STATUS_FAILED_PRECONDITION, "%s", modules->encoder_errors[kind]);
  if (!context->model) return VLM_ERROR(FAILED_PRECONDITION, "%s does not open", context->model_directory);
  const vlm_compare_backend *backend = context->backend;
  vlm_status status = backend->open_media_encoder(backend->user, context->model, kind, &modules->encoders[kind]);
  /* Never the host instead: an encoder this backend lacks fails the stage. */
  if (!status && !modules->encoders[kind])
    status = VLM_ERROR(UNIMPLEMENTED, "the %s backend has no %s encoder for this model", backend->name,
                       vlm_media_kind_name(kind));
  if (status) return remember_error(status, &modules->encoder_errors[kind]);
  *out = modules->encoders[kind];
  return VLM_OK;
}

/* ---- Encoders -------------------------------------------------------- */

/* Transformers ran a bfloat16 case in bfloat16: its outputs are rounded. */
static void round_like_golden(const vlm_compare_context *context, double *values, int64_t count) {
  if (!context->golden->dtype || strcmp(context->golden->dtype, "bfloat16") != 0) return;
  for (int64_t i = 0; i < count; i++) values[i] = vlm_bf16_to_f32(vlm_f32_to_bf16((float)values[i]));
}

/* Every item of `kind` through the backend's encoder; of each output row,
 * columns [first, first + width) in item order. */
static vlm_status encode_items(const vlm_compare_context *context, vlm_media_kind kind, vlm_media_item *items,
                               int item_count, int64_t first, int64_t width, double **out_values,
                               int64_t *out_count) {
  *out_values = NULL;
  *out_count = 0;
  vlm_media_encoder *encoder = NULL;
  int64_t rows = 0;
  for (int i = 0; i < item_count; i++) rows += items[i].kind == kind ? items[i].token_count : 0;
  if (!rows) return VLM_ERROR(NOT_FOUND, "the case has no %s", vlm_media_kind_name(kind));
  VLM_RETURN_IF_ERROR(open_encoder(context, kind, &encoder));
  int64_t output_width = encoder->operations->output_width(encoder->self);
  if (width < 0) width = output_width - first;
  if (first < 0 || width <= 0 || first + width > output_width)
    return VLM_ERROR(DATA_LOSS, "columns %lld..%lld of the encoder's %lld", (long long)first,
                     (long long)(first + width), (long long)output_width);
  double *values = malloc((size_t)(rows * width) * sizeof(double));
  float *features = NULL;
  vlm_status status = values ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  int64_t next = 0;
  for (int i = 0; !status && i < item_count; i++) {
    if (items[i].kind != kind) continue;
    float *grown = realloc(features, (size_t)(items[i].token_count * output_width + 1) * sizeof(float));
    if (!grown) {
      status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
      break;
    }
    features = grown;
    status = vlm_status_annotate(encoder->operations->encode(encoder->self, &items[i], features),
                                 "%s item %d on %s", vlm_media_kind_name(kind), i, encoder->operations->backend);
    for (int64_t r = 0; !status && r < items[i].token_count; r++)
      for (int64_t c = 0; c < width; c++) values[next++] = features[r * output_width + first + c];
  }
  free(features);
  if (status) {
    free(values);
    return status;
  }
  *out_values = values;
  *out_count = next;
  return VLM_OK;
}

vlm_status vlm_module_stage_image_features(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                           vlm_stage_result *result) {
  vlm_media_item *items = NULL;
  int item_count = 0;
  VLM_RETURN_IF_ERROR(vlm_golden_media_items(context, &items, &item_count));
  /* projector: the hidden-wide feature; deepstack_features: the rest of the row. */
  int64_t hidden = context->model->config.text.hidden_size;
  bool layer_features = strcmp(stage->name, "deepstack_features") == 0;
  double *values = NULL;
  int64_t count = 0;
  vlm_status status = encode_items(context, VLM_MEDIA_IMAGE, items, item_count, layer_features ? hidden : 0,
                                   layer_features ? -1 : hidden, &values, &count);
  if (!status) {
    round_like_golden(context, values, count);
    status = vlm_compare_with_golden_tensor(context, stage, values, count, result);
  }
  if (!status && !result->detail[0])
    snprintf(result->detail, sizeof(result->detail), "image encoder output on %s", context->backend->name);
  free(values);
  vlm_golden_media_items_release(items, item_count);
  return status;
}

vlm_status vlm_module_stage_audio_features(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                           vlm_stage_result *result) {
  vlm_media_item *items = NULL;
  int item_count = 0;
  VLM_RETURN_IF_ERROR(vlm_golden_media_items(context, &items, &item_count));
  /* Each projector stage names its mode whatever media the case holds (as
   * on cpu, stage_audio.c): the encoder picks it from the request's kinds. */
  bool vision = strcmp(stage->name, "audio_projector_vision_speech") == 0;
  for (int i = 0; i < item_count; i++) {
    if (vision) items[i].request_kinds |= 1u << VLM_MEDIA_IMAGE;
    else items[i].request_kinds &= ~(1u << VLM_MEDIA_IMAGE);
  }
  double *values = NULL;
  int64_t count = 0;
  vlm_status status = encode_items(context, VLM_MEDIA_AUDIO, items, item_count, 0, -1, &values, &count);
  if (!status) {
    round_like_golden(context, values, count);
    status = vlm_compare_with_golden_tensor(context, stage, values, count, result);
  }
  if (!status && !result->detail[0])
    snprintf(result->detail, sizeof(result->detail), "audio encoder output on %s", context->backend->name);
  free(values);
  vlm_golden_media_items_release(items, item_count);
  return status;
}

/* ---- Decoder --------------------------------------------------------- */

/* Prefills `prompt` into the cleared slot 0 (the request's length for a
 * length-dependent RoPE: `request_length`, the whole golden prompt). */
static vlm_status prefill(vlm_text_decoder *decoder, const vlm_golden_prompt *prompt, int64_t request_length,
                          float *last_logits) {
  const vlm_text_decoder_operations *ops = decoder->operations;
  VLM_RETURN_IF_ERROR(ops->clear_slot(decoder->self, 0));
  VLM_RETURN_IF_ERROR(ops->begin_request(decoder->self, 0, prompt->adapter, request_length));
  if (!prompt->embeddings && !prompt->bias && !prompt->positions)
    return ops->token_prefill(decoder->self, 0, prompt->tokens, prompt->token_count, last_logits);
  vlm_prefill_input input;
  vlm_side_input side;
  vlm_golden_prompt_input(prompt, &input, &side);
  return ops->embeddings_prefill(decoder->self, 0, &input, last_logits);
}

/* The stage's "positions" list as int64 values. */
static int64_t stage_positions(const vlm_golden_stage *stage, int64_t *out, int64_t capacity) {
  const vlm_json_value *positions = vlm_json_object_get(stage->spec, "positions");
  int64_t count = 0;
  for (size_t i = 0; positions && i < positions->as.array.count && count < capacity; i++)
    if (vlm_json_get_int(&positions->as.array.items[i], &out[count])) count++;
  return count;
}

/* The golden stores every column or (real vocabularies) the stage's
 * "vocab_ids" sample. */
static vlm_status logits_columns(const vlm_golden_stage *stage, int64_t vocab, int64_t **out_ids, int64_t *out_count) {
  *out_ids = NULL;
  *out_count = vocab;
  const vlm_json_value *ids = vlm_json_object_get(stage->spec, "vocab_ids");
  if (!ids) return VLM_OK;
  int64_t golden_vocab = -1;
  if (ids->type != VLM_JSON_ARRAY || !vlm_json_get_int(vlm_json_object_get(stage->spec, "vocab_size"), &golden_vocab))
    return VLM_ERROR(DATA_LOSS, "prefill_logits: \"vocab_ids\" needs an array and \"vocab_size\"");
  if (golden_vocab != vocab)
    return VLM_ERROR(DATA_LOSS, "prefill_logits: the golden's vocabulary has %lld ids, the model %lld",
                     (long long)golden_vocab, (long long)vocab);
  *out_count = (int64_t)ids->as.array.count;
  *out_ids = malloc((size_t)(*out_count + 1) * sizeof(int64_t));
  if (!*out_ids) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t i = 0; i < *out_count; i++)
    if (!vlm_json_get_int(&ids->as.array.items[i], &(*out_ids)[i]) || (*out_ids)[i] < 0 || (*out_ids)[i] >= vocab) {
      free(*out_ids);
      *out_ids = NULL;
      return VLM_ERROR(DATA_LOSS, "prefill_logits: vocab_ids[%lld] is not an id below %lld", (long long)i,
                       (long long)vocab);
    }
  return VLM_OK;
}

/* Whether rows [0, p] see no row after p (so the prefix gives row p the
 * logits it has in the whole prompt): always without a bias. */
static bool prefix_is_closed(const int64_t *reach, int64_t p) {
  for (int64_t r = 0; reach && r <= p; r++)
    if (reach[r] > p) return false;
  return true;
}

/* Row p's logits are the last row's of the prefix [0, p] prefilled alone.
 * A position inside an attention block (rows up to it see later rows) has
 * no such prefix: it is named in the detail and left out, never passed. */
vlm_status vlm_module_stage_prefill_logits(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                           vlm_stage_result *result) {
  vlm_text_decoder *decoder = NULL;
  VLM_RETURN_IF_ERROR(open_decoder(context, &decoder));
  vlm_golden_prompt prompt;
  VLM_RETURN_IF_ERROR(vlm_golden_prompt_load(context, &prompt));
  vlm_text_decoder_shape shape;
  decoder->operations->shape(decoder->self, &shape);
  int64_t positions[64], count = stage_positions(stage, positions, 64), vocab = shape.vocab_size;
  int64_t *columns = NULL, width = vocab, *reach = NULL;
  vlm_tensor expected;
  vlm_status status = vlm_golden_case_tensor(context->golden, stage->tensor, &expected);
  if (!status) status = logits_columns(stage, vocab, &columns, &width);
  if (!status && vlm_tensor_element_count(&expected) != count * width)
    status = VLM_ERROR(DATA_LOSS, "the golden's %s holds %lld values, not %lld positions of %lld", stage->name,
                       (long long)vlm_tensor_element_count(&expected), (long long)count, (long long)width);
  float *logits = status ? NULL : malloc((size_t)vocab * sizeof(float));
  double *actual = status ? NULL : malloc((size_t)width * sizeof(double));
  double *golden = status ? NULL : malloc((size_t)width * sizeof(double));
  if (!status && (!logits || !actual || !golden)) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  if (!status && prompt.bias) {
    reach = malloc((size_t)prompt.token_count * sizeof(int64_t));
    if (!reach) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    else vlm_prefill_bias_reach(prompt.bias, prompt.token_count, prompt.token_count, 0, reach);
  }
  char skipped[160] = "";
  int64_t skipped_count = 0;
  for (int64_t p = 0; !status && p < count; p++) {
    if (positions[p] < 0 || positions[p] >= prompt.token_count) {
      status = VLM_ERROR(DATA_LOSS, "golden position %lld is outside the prompt", (long long)positions[p]);
      break;
    }
    if (!prefix_is_closed(reach, positions[p])) {
      size_t used = strlen(skipped);
      snprintf(skipped + used, sizeof(skipped) - used, "%s%lld", skipped_count++ ? ", " : "", (long long)positions[p]);
      continue;
    }
    vlm_golden_prompt prefix;
    status = vlm_golden_prompt_prefix(&prompt, positions[p] + 1, &prefix);
    if (!status) status = prefill(decoder, &prefix, prompt.token_count, logits);
    vlm_golden_prompt_release(&prefix);
    for (int64_t v = 0; !status && v < width; v++) {
      actual[v] = logits[columns ? columns[v] : v];
      vlm_tensor_value_as_double(&expected, p * width + v, &golden[v]);
    }
    char label[64];
    snprintf(label, sizeof(label), "%s@%lld", stage->name, (long long)positions[p]);
    if (!status) vlm_compare_values(golden, actual, width, label, result);
  }
  if (!status && skipped_count == count)
    status = VLM_ERROR(FAILED_PRECONDITION, "every position lies inside an attention block");
  if (!status && !result->detail[0]) {
    if (skipped_count)
      snprintf(result->detail, sizeof(result->detail),
               "positions %s not computed on %s: inside an attention block, and the module returns the last "
               "row's logits only%s", skipped, context->backend->name, context->modules->chunk_note);
    else
      snprintf(result->detail, sizeof(result->detail), "each position's prefix prefilled on %s%s%s",
               context->backend->name, prompt.embeddings ? ", fed the golden input_embeddings" : "",
               context->modules->chunk_note);
  }
  free(reach);
  free(logits);
  free(actual);
  free(golden);
  free(columns);
  vlm_golden_prompt_release(&prompt);
  return status;
}

/* Golden layout: per storing layer, keys (after RoPE) then values, each
 * [kv_head, position, width / kv_heads]; inspect_kv's: per storing layer
 * and half [position, width], as the family's KV layout says. */
vlm_status vlm_module_stage_kv(const vlm_compare_context *context, const vlm_golden_stage *stage,
                               vlm_stage_result *result) {
  vlm_text_decoder *decoder = NULL;
  VLM_RETURN_IF_ERROR(open_decoder(context, &decoder));
  if (!decoder->operations->inspect_kv)
    return VLM_ERROR(UNIMPLEMENTED, "the %s decoder cannot show its KV", context->backend->name);
  vlm_kv_layout *layout = malloc(sizeof(*layout));
  if (!layout) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_status status = vlm_family_kv_layout(context->model->family, &context->model->config, layout);
  if (status) {
    free(layout);
    return status;
  }
  vlm_golden_prompt prompt;
  status = vlm_golden_prompt_load(context, &prompt);
  if (status) {
    free(layout);
    return status;
  }
  const vlm_text_config *text = &context->model->config.text;
  int64_t length = prompt.token_count, token = vlm_kv_layout_token_values(layout);
  int64_t positions[64], count = stage_positions(stage, positions, 64);
  float *logits = malloc((size_t)text->vocab_size * sizeof(float));
  float *kv = malloc((size_t)(token * length) * sizeof(float));
  double *actual = malloc((size_t)(token * count + 1) * sizeof(double));
  status = logits && kv && actual ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  if (!status) status = prefill(decoder, &prompt, length, logits);
  if (!status) status = decoder->operations->inspect_kv(decoder->self, 0, 0, length, kv);
  for (int64_t p = 0; !status && p < count; p++)
    if (positions[p] < 0 || positions[p] >= length)
      status = VLM_ERROR(DATA_LOSS, "golden position %lld is outside the prompt", (long long)positions[p]);
  int64_t written = 0;
  if (!status)
    written = vlm_kv_layout_to_golden(layout, text->num_key_value_heads, kv, length, positions, count, actual);
  if (!status) status = vlm_compare_with_golden_tensor(context, stage, actual, written, result);
  if (!status && !result->detail[0])
    snprintf(result->detail, sizeof(result->detail), "%d layers read back from %s%s",
             vlm_kv_layout_storing_layers(layout), context->backend->name, context->modules->chunk_note);
  free(layout);
  free(logits);
  free(kv);
  free(actual);
  vlm_golden_prompt_release(&prompt);
  return status;
}

static int32_t argmax(const float *values, int64_t count) {
  int64_t best = 0;
  for (int64_t i = 1; i < count; i++)
    if (values[i] > values[best]) best = i;
  return (int32_t)best;
}

/* As many greedy tokens as the golden has, decoded once on the backend
 * (without stopping at a difference: the text stage decodes them all). */
static vlm_status backend_greedy(const vlm_compare_context *context, const int32_t **out_tokens, int64_t *out_count) {
  vlm_compare_modules *modules = context->modules;
  const vlm_json_value *expected = golden_greedy(context->golden);
  if (!expected) return VLM_ERROR(DATA_LOSS, "the case has no greedy_tokens \"tokens\" list");
  int64_t wanted = (int64_t)expected->as.array.count;
  if (!modules->greedy) {
    vlm_text_decoder *decoder = NULL;
    VLM_RETURN_IF_ERROR(open_decoder(context, &decoder));
    vlm_golden_prompt prompt;
    VLM_RETURN_IF_ERROR(vlm_golden_prompt_load(context, &prompt));
    int64_t vocab = context->model->config.text.vocab_size;
    float *logits = malloc((size_t)vocab * sizeof(float));
    int32_t *tokens = malloc((size_t)(wanted + 1) * sizeof(int32_t));
    vlm_status status = logits && tokens ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    if (!status) status = prefill(decoder, &prompt, prompt.token_count, logits);
    for (int64_t i = 0; !status && i < wanted; i++) {
      tokens[i] = argmax(logits, vocab);
      if (i + 1 == wanted) break;
      /* RoPE continues at the slot's length plus the M-RoPE delta. */
      int64_t position = decoder->operations->slot_length(decoder->self, 0) +
                         (prompt.positions ? prompt.position_delta : 0);
      int32_t slot = 0;
      status = decoder->operations->decode(decoder->self, 1, &tokens[i], &position, &slot, logits);
    }
    free(logits);
    vlm_golden_prompt_release(&prompt);
    if (status) {
      free(tokens);
      return status;
    }
    modules->greedy = tokens;
    modules->greedy_count = wanted;
  }
  *out_tokens = modules->greedy;
  *out_count = modules->greedy_count;
  return VLM_OK;
}

vlm_status vlm_module_stage_greedy_tokens(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                          vlm_stage_result *result) {
  const vlm_json_value *expected = vlm_json_object_get(stage->spec, "tokens");
  if (!expected || expected->type != VLM_JSON_ARRAY)
    return VLM_ERROR(DATA_LOSS, "stage greedy_tokens has no \"tokens\" list");
  const int32_t *tokens = NULL;
  int64_t count = 0;
  VLM_RETURN_IF_ERROR(backend_greedy(context, &tokens, &count));
  result->outcome = VLM_STAGE_MATCH;
  for (int64_t i = 0; i < count && i < (int64_t)expected->as.array.count; i++) {
    int64_t golden_token = -1;
    vlm_json_get_int(&expected->as.array.items[i], &golden_token);
    result->compared++;
    if (tokens[i] != golden_token) {
      result->mismatched++;
      result->outcome = VLM_STAGE_DIVERGED;
      snprintf(result->detail, sizeof(result->detail), "token %lld: %s %d, golden %lld", (long long)i,
               context->backend->name, tokens[i], (long long)golden_token);
      return VLM_OK; /* later tokens follow a different prefix */
    }
  }
  snprintf(result->detail, sizeof(result->detail), "%lld tokens identical, decoded on %s%s", (long long)count,
           context->backend->name, context->modules->chunk_note);
  return VLM_OK;
}

/* The backend's greedy tokens through vlm's tokenizer. */
vlm_status vlm_module_stage_text(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                 vlm_stage_result *result) {
  const vlm_json_value *expected = vlm_json_object_get(stage->spec, "text");
  if (!expected || expected->type != VLM_JSON_STRING) return VLM_ERROR(DATA_LOSS, "stage text has no \"text\"");
  bool skip_special = true;
  vlm_json_get_bool(vlm_json_object_get(stage->spec, "skip_special_tokens"), &skip_special);
  const int32_t *tokens = NULL;
  int64_t count = 0;
  VLM_RETURN_IF_ERROR(backend_greedy(context, &tokens, &count));
  vlm_tokenizer *tokenizer = NULL;
  char *text = NULL;
  size_t length = 0;
  vlm_status status = vlm_tokenizer_create(context->model_directory, NULL, &tokenizer);
  if (!status) status = vlm_tokenizer_decode(tokenizer, tokens, (size_t)count, skip_special, &text, &length);
  if (!status) {
    size_t expected_length = expected->as.string.length;
    result->compared = 1;
    if (length != expected_length || memcmp(text, expected->as.string.chars, length) != 0) {
      result->outcome = VLM_STAGE_DIVERGED;
      result->mismatched = 1;
      snprintf(result->detail, sizeof(result->detail), "%s's tokens decode to %zu bytes, the golden text has %zu"
               " (or differs)", context->backend->name, length, expected_length);
    } else {
      snprintf(result->detail, sizeof(result->detail), "%zu bytes identical, from %s's tokens", length,
               context->backend->name);
    }
  }
  free(text);
  vlm_tokenizer_release(tokenizer);
  return status;
}
