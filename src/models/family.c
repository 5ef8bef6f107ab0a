#include "models/family.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "media/media_item.h"
#include "models/decoder.h"
#include "models/kv_layout.h"

/* Every family record, defined in its own src/models/<family>.c. Adding a
 * family means adding its file and one line here. */
extern const vlm_family vlm_family_llama, vlm_family_mistral, vlm_family_qwen2,
    vlm_family_qwen3, vlm_family_llava, vlm_family_qwen2_vl, vlm_family_qwen2_5_vl,
    vlm_family_qwen3_vl, vlm_family_qwen3_vl_moe, vlm_family_gemma3, vlm_family_gemma3_text, vlm_family_phi4_multimodal,
    vlm_family_youtu;

static const vlm_family *const families[] = {
    &vlm_family_llama, &vlm_family_mistral, &vlm_family_qwen2,   &vlm_family_qwen3,
    &vlm_family_llava, &vlm_family_qwen2_vl, &vlm_family_qwen2_5_vl, &vlm_family_qwen3_vl, &vlm_family_qwen3_vl_moe,
    &vlm_family_gemma3,  &vlm_family_gemma3_text, &vlm_family_phi4_multimodal, &vlm_family_youtu,
};

const vlm_family *vlm_family_find(const char *model_type) {
  if (!model_type) return NULL;
  for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
    if (strcmp(families[i]->model_type, model_type) == 0) return families[i];
  return NULL;
}

size_t vlm_family_count(void) { return sizeof(families) / sizeof(families[0]); }

const vlm_family *vlm_family_at(size_t index) {
  return index < vlm_family_count() ? families[index] : NULL;
}

bool vlm_family_runs(const vlm_family *family) { return family && family->describe_decoder; }

const char *vlm_family_supported_list(void) {
  static char list[512];
  if (!list[0]) {
    size_t used = 0;
    for (size_t i = 0; i < sizeof(families) / sizeof(families[0]) && used < sizeof(list); i++)
      if (vlm_family_runs(families[i]))
        used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", used ? ", " : "",
                                 families[i]->model_type);
  }
  return list;
}

const char *vlm_component_name(vlm_component component) {
  switch (component) {
    case VLM_COMPONENT_TEXT_DECODER: return "text_decoder";
    case VLM_COMPONENT_EMBEDDINGS: return "embeddings";
    case VLM_COMPONENT_VISION_TOWER: return "vision_tower";
    case VLM_COMPONENT_PROJECTOR: return "projector";
    case VLM_COMPONENT_AUDIO_TOWER: return "audio_tower";
    case VLM_COMPONENT_OTHER:
    case VLM_COMPONENT_COUNT: break;
  }
  return "other";
}

/* Name fragments in the order they are tested; the first hit decides. Covers
 * both the canonical (Transformers 5) and older layouts of every family in
 * SPEC section 4. */
static const struct {
  const char *fragment;
  vlm_component component;
} name_rules[] = {
    /* Phi-4-multimodal's towers live under embed_tokens_extend. */
    {"embed_tokens_extend.image_embed.img_projection", VLM_COMPONENT_PROJECTOR},
    {"embed_tokens_extend.image_embed", VLM_COMPONENT_VISION_TOWER},
    {"embed_tokens_extend.audio_embed.audio_projection", VLM_COMPONENT_PROJECTOR},
    {"embed_tokens_extend.audio_embed", VLM_COMPONENT_AUDIO_TOWER},
    {"embed_tokens", VLM_COMPONENT_EMBEDDINGS},
    {"lm_head", VLM_COMPONENT_EMBEDDINGS},
    {"embed_tokens_per_layer", VLM_COMPONENT_EMBEDDINGS},
    {"multi_modal_projector", VLM_COMPONENT_PROJECTOR},
    {"mm_projector", VLM_COMPONENT_PROJECTOR},
    {"visual.merger", VLM_COMPONENT_PROJECTOR},
    {"embed_vision", VLM_COMPONENT_PROJECTOR},
    {"embed_audio", VLM_COMPONENT_PROJECTOR},
    {"image_projection", VLM_COMPONENT_PROJECTOR},
    {"audio_tower", VLM_COMPONENT_AUDIO_TOWER},
    {"audio_model", VLM_COMPONENT_AUDIO_TOWER},
    {"audio_embed", VLM_COMPONENT_AUDIO_TOWER},
    {"vision_tower", VLM_COMPONENT_VISION_TOWER},
    {"vision_model", VLM_COMPONENT_VISION_TOWER},
    {"visual.", VLM_COMPONENT_VISION_TOWER},
    {"vision_backbone", VLM_COMPONENT_VISION_TOWER},
    {"image_embed", VLM_COMPONENT_VISION_TOWER},
    {"layers.", VLM_COMPONENT_TEXT_DECODER},
    {"norm.", VLM_COMPONENT_TEXT_DECODER},
};

vlm_component vlm_component_from_name(const char *name) {
  for (size_t i = 0; i < sizeof(name_rules) / sizeof(name_rules[0]); i++)
    if (strstr(name, name_rules[i].fragment)) return name_rules[i].component;
  return VLM_COMPONENT_OTHER;
}

void vlm_manifest_init(vlm_tensor_manifest *manifest) {
  memset(manifest, 0, sizeof(*manifest));
  vlm_arena_init(&manifest->arena, NULL, 32 * 1024);
}

void vlm_manifest_release(vlm_tensor_manifest *manifest) {
  vlm_arena_reset(&manifest->arena);
  free(manifest->tensors);
  memset(manifest, 0, sizeof(*manifest));
}

void vlm_manifest_add(vlm_tensor_manifest *manifest, vlm_component component, int rank,
                      const int64_t *shape, const char *name_format, ...) {
  if (manifest->out_of_memory || rank < 0 || rank > VLM_MAX_DIMS) {
    manifest->out_of_memory = true;
    return;
  }
  if (manifest->count == manifest->capacity) {
    size_t capacity = manifest->capacity ? manifest->capacity * 2 : 256;
    vlm_expected_tensor *grown = realloc(manifest->tensors, capacity * sizeof(*grown));
    if (!grown) {
      manifest->out_of_memory = true;
      return;
    }
    manifest->tensors = grown;
    manifest->capacity = capacity;
  }
  char name[512];
  va_list args;
  va_start(args, name_format);
  vsnprintf(name, sizeof(name), name_format, args);
  va_end(args);
  vlm_expected_tensor *tensor = &manifest->tensors[manifest->count];
  memset(tensor, 0, sizeof(*tensor));
  tensor->name = vlm_arena_strdup(&manifest->arena, name);
  if (!tensor->name) {
    manifest->out_of_memory = true;
    return;
  }
  tensor->component = component;
  tensor->rank = rank;
  if (rank) memcpy(tensor->shape, shape, sizeof(int64_t) * (size_t)rank);
  manifest->count++;
}

void vlm_manifest_mark_optional(vlm_tensor_manifest *manifest) {
  if (manifest->count) manifest->tensors[manifest->count - 1].optional = true;
}

void vlm_manifest_allow_shape(vlm_tensor_manifest *manifest, int rank, const int64_t *shape) {
  if (!manifest->count || rank < 1 || rank > VLM_MAX_DIMS) return;
  vlm_expected_tensor *tensor = &manifest->tensors[manifest->count - 1];
  tensor->alternative_rank = rank;
  memcpy(tensor->alternative_shape, shape, sizeof(int64_t) * (size_t)rank);
}

bool vlm_expected_shape_matches(const vlm_expected_tensor *expected, int rank, const int64_t *shape) {
  bool main = rank == expected->rank, other = expected->alternative_rank > 0 && rank == expected->alternative_rank;
  for (int i = 0; i < rank && (main || other); i++) {
    main = main && shape[i] == expected->shape[i];
    other = other && shape[i] == expected->alternative_shape[i];
  }
  return main || other;
}

const vlm_expected_tensor *vlm_manifest_find(const vlm_tensor_manifest *manifest,
                                             const char *name) {
  for (size_t i = 0; i < manifest->count; i++)
    if (strcmp(manifest->tensors[i].name, name) == 0) return &manifest->tensors[i];
  return NULL;
}

void vlm_family_set_request_media(const vlm_family *family, const vlm_model_config *config, vlm_media_item *items,
                                  int count) {
  uint32_t kinds = 0, traits = 0;
  for (int i = 0; i < count; i++) {
    kinds |= 1u << items[i].kind;
    if (items[i].kind == VLM_MEDIA_IMAGE && family && family->image && family->image->item_traits)
      traits |= family->image->item_traits(config, &items[i]);
  }
  for (int i = 0; i < count; i++) {
    items[i].request_kinds = kinds;
    items[i].request_traits = traits;
  }
}

vlm_status vlm_expand_repeated(const vlm_model_config *config, const vlm_media_item *item, const char *placeholder,
                               vlm_token_text_fn token_text, void *context, vlm_string_builder *out) {
  (void)config, (void)token_text, (void)context;
  size_t length = strlen(placeholder);
  for (int64_t i = 0; i < item->token_count; i++) vlm_sb_append(out, placeholder, length);
  return VLM_OK;
}

void vlm_family_describe_decoder(const vlm_family *family, const vlm_model_config *config,
                                 vlm_decoder_description *out) {
  family->describe_decoder(config, out);
  out->build = family->build_decoder;
}

vlm_status vlm_family_kv_layout(const vlm_family *family, const vlm_model_config *config, vlm_kv_layout *out) {
  vlm_status status = family && family->kv_layout
                          ? family->kv_layout(config, out)
                          : vlm_kv_layout_standard(config->text.num_hidden_layers, config->text.num_key_value_heads,
                                                   config->text.head_dim, out);
  return status ? status : vlm_kv_layout_check(out);
}
