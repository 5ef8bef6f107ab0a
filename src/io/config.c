/* config.json: which class each section is, how the sections are found
 * (nested, flat or legacy), and the model-level multimodal values. What a
 * class does beyond its defaults table is in its record (io/config_record.h). */
#include "io/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "io/config_reader.h"
#include "io/config_record.h"

/* Everything being assembled for one config.json. */
typedef struct model_parse {
  vlm_config_storage *storage;
  const char *source_name;
  const vlm_json_value *file_root;
  const vlm_config_record *record; /* the top level's */
  vlm_config_class root_class;
  vlm_config_section root;
  bool used_legacy_vision_key; /* the record's legacy_vision_key stood in */
  vlm_config_section text, vision, audio, adapter;
  vlm_config_class text_class, vision_class, audio_class, adapter_class;
  bool has_text, has_vision, has_audio, has_adapter;
} model_parse;

/* ---------------------------------------------------------------------- */
/* Sub-config resolution                                                   */
/* ---------------------------------------------------------------------- */

/* Which role a sub-config key plays. */
typedef enum section_role { ROLE_TEXT, ROLE_VISION, ROLE_AUDIO, ROLE_ADAPTER } section_role;

static section_role role_of(const char *key) {
  if (strcmp(key, "text_config") == 0) return ROLE_TEXT;
  if (strcmp(key, "vision_config") == 0) return ROLE_VISION;
  if (strcmp(key, "audio_config") == 0) return ROLE_AUDIO;
  return ROLE_ADAPTER;
}

static vlm_config_record_filter role_filter(section_role role) {
  switch (role) {
    case ROLE_TEXT: return vlm_config_record_is_text;
    case ROLE_VISION: return vlm_config_record_is_vision;
    case ROLE_AUDIO: return vlm_config_record_is_audio;
    case ROLE_ADAPTER: break;
  }
  return NULL; /* any class with a record */
}

static bool role_accepts(section_role role, const char *model_type) {
  const vlm_config_record *record = vlm_config_record_find(model_type);
  vlm_config_record_filter filter = role_filter(role);
  return record && (!filter || filter(record));
}

/* The class a sub-config resolves to (SubConfigSpec.create_subconfig): an
 * AutoConfig spec lets the section's own model_type choose, else the spec's
 * class is fixed and the section's model_type is ignored. */
static vlm_status resolve_sub_class(model_parse *parse, const char *key, const vlm_json_value *spec,
                                    const vlm_json_value *file_section, vlm_config_class *out) {
  const char *model_type = vlm_json_get_string(vlm_json_object_get(spec, "model_type"));
  bool automatic = false;
  vlm_json_get_bool(vlm_json_object_get(spec, "auto"), &automatic);
  const vlm_json_value *declared = vlm_json_object_get(file_section, "model_type");
  if (automatic && declared && declared->type != VLM_JSON_NULL) {
    vlm_config_section where = {file_section, parse->source_name, "", parse->storage};
    char path[64];
    snprintf(path, sizeof(path), "%s.model_type", key);
    if (!vlm_json_get_string(declared) || declared->as.string.length > VLM_CONFIG_MAX_STRING_LENGTH)
      return vlm_config_type_error(&where, path, "a model type name", declared);
    model_type = vlm_json_get_string(declared);
    section_role role = role_of(key);
    char names[1024];
    if (!role_accepts(role, model_type))
      return VLM_ERROR(UNIMPLEMENTED, "%s: %s \"%s\" is not supported for %s (supported: %s)",
                       parse->source_name, path, model_type, parse->root_class.model_type,
                       vlm_config_record_names(role_filter(role), names, sizeof(names)));
  }
  return vlm_config_class_load(parse->storage, model_type, out);
}

static vlm_status flat_text_object(model_parse *parse, const vlm_config_class *text_class,
                                   const vlm_json_value **out) {
  const vlm_json_value *root = parse->file_root;
  size_t count = root->as.object.count;
  vlm_json_member *members = malloc((count + 1) * sizeof(*members));
  if (!members) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory reading a config");
  size_t kept = 0;
  for (size_t i = 0; i < count; i++) {
    const vlm_json_member *member = &root->as.object.members[i];
    bool text_key = vlm_config_class_has_field(text_class, member->key) ||
                    strcmp(member->key, "rope_scaling") == 0 ||
                    strcmp(member->key, "rope_theta") == 0;
    if (text_key && !vlm_config_class_has_field(&parse->root_class, member->key))
      members[kept++] = *member;
  }
  /* The text config's dtype is the top-level torch_dtype (dtype itself is
   * a field of the composite, so __post_init__ never sees it in kwargs). */
  const vlm_json_value *torch_dtype = vlm_json_object_get(root, "torch_dtype");
  if (torch_dtype) members[kept++] = (vlm_json_member){"dtype", 5, *torch_dtype};
  vlm_status status = vlm_config_object_create(parse->storage, members, kept, out);
  free(members);
  return status;
}

static vlm_config_section *section_for(model_parse *parse, section_role role,
                                       vlm_config_class **out_class, bool **out_present) {
  switch (role) {
    case ROLE_TEXT: *out_class = &parse->text_class; *out_present = &parse->has_text; return &parse->text;
    case ROLE_VISION: *out_class = &parse->vision_class; *out_present = &parse->has_vision; return &parse->vision;
    case ROLE_AUDIO: *out_class = &parse->audio_class; *out_present = &parse->has_audio; return &parse->audio;
    case ROLE_ADAPTER: break;
  }
  *out_class = &parse->adapter_class;
  *out_present = &parse->has_adapter;
  return &parse->adapter;
}

static vlm_status build_sub_section(model_parse *parse, const char *key, const vlm_json_value *spec) {
  const vlm_json_value *file_section = vlm_json_object_get(parse->file_root, key);
  char prefix[64];
  snprintf(prefix, sizeof(prefix), "%s.", key);
  /* A remote-code name standing in for an absent vision_config (Molmo2's
   * vit_config). */
  const char *legacy_key = parse->record->legacy_vision_key;
  if (legacy_key && strcmp(key, "vision_config") == 0 && (!file_section || file_section->type == VLM_JSON_NULL)) {
    const vlm_json_value *legacy = vlm_json_object_get(parse->file_root, legacy_key);
    if (legacy && legacy->type != VLM_JSON_NULL) {
      file_section = legacy;
      snprintf(prefix, sizeof(prefix), "%s.", legacy_key);
      parse->used_legacy_vision_key = true;
    }
  }
  if (file_section && file_section->type == VLM_JSON_NULL) file_section = NULL;
  if (file_section && file_section->type != VLM_JSON_OBJECT)
    return vlm_config_type_error(&parse->root, key, "an object", file_section);
  vlm_config_class *config_class;
  bool *present;
  vlm_config_section *section = section_for(parse, role_of(key), &config_class, &present);
  VLM_RETURN_IF_ERROR(resolve_sub_class(parse, key, spec, file_section, config_class));
  const char *key_prefix = vlm_config_storage_copy_string(parse->storage, prefix);
  if (!key_prefix) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory reading a config");
  /* init_kwargs apply only when the section is absent. */
  const vlm_json_value *init_kwargs = file_section ? NULL : vlm_json_object_get(spec, "init_kwargs");
  if (!file_section && role_of(key) == ROLE_TEXT && parse->record->flat_text_fallback) {
    VLM_RETURN_IF_ERROR(flat_text_object(parse, config_class, &file_section));
    key_prefix = "";
  }
  *present = true;
  return vlm_config_section_merge(parse->storage, config_class, init_kwargs, file_section,
                                  parse->source_name, key_prefix, section);
}

static vlm_status build_sections(model_parse *parse) {
  VLM_RETURN_IF_ERROR(vlm_config_section_merge(parse->storage, &parse->root_class, NULL,
                                               parse->file_root, parse->source_name, "",
                                               &parse->root));
  const vlm_json_value *subs = parse->root_class.sub_configs;
  for (size_t i = 0; subs && i < subs->as.object.count; i++)
    VLM_RETURN_IF_ERROR(build_sub_section(parse, subs->as.object.members[i].key,
                                          &subs->as.object.members[i].value));
  if (!parse->has_text) {
    /* A text decoder (or Phi-4-multimodal, whose text fields are top level). */
    parse->text = parse->root;
    parse->text_class = parse->root_class;
    parse->has_text = true;
  }
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* Model-level values                                                      */
/* ---------------------------------------------------------------------- */

/* The first of `keys` present (non-null) in `section`, read as a token id.
 * A key the top-level class aliases (its attribute_map: Molmo2's
 * video_token_id is image_patch_id) reads the field it names, as the
 * attribute does in Transformers; the merged section holds only fields. */
static vlm_status first_token_id(const model_parse *parse, const vlm_config_section *section,
                                 const char *const *keys, int64_t *out) {
  *out = -1;
  for (size_t i = 0; keys[i]; i++) {
    const char *key = keys[i];
    const vlm_json_value *target =
        section == &parse->root ? vlm_json_object_get(parse->root_class.attribute_map, key) : NULL;
    if (vlm_json_get_string(target)) key = vlm_json_get_string(target);
    if (vlm_config_get(section, key)) return vlm_config_read_token_id(section, key, out);
  }
  return VLM_OK;
}

static vlm_status read_token_ids(model_parse *parse, vlm_model_config *out) {
  const vlm_config_section *root = &parse->root;
  VLM_RETURN_IF_ERROR(first_token_id(
      parse, root, (const char *const[]){"image_token_index", "image_token_id", "image_patch_id", NULL},
      &out->image_token_id));
  if (out->image_token_id < 0 && parse->has_vision)
    VLM_RETURN_IF_ERROR(first_token_id(parse, &parse->vision, (const char *const[]){"image_token_id", NULL},
                                       &out->image_token_id));
  VLM_RETURN_IF_ERROR(first_token_id(parse, root, (const char *const[]){"video_token_id", NULL},
                                     &out->video_token_id));
  VLM_RETURN_IF_ERROR(first_token_id(parse, root, (const char *const[]){"audio_token_id", NULL},
                                     &out->audio_token_id));
  if (out->audio_token_id < 0 && parse->has_audio)
    VLM_RETURN_IF_ERROR(first_token_id(parse, &parse->audio, (const char *const[]){"audio_token_id", NULL},
                                       &out->audio_token_id));
  VLM_RETURN_IF_ERROR(first_token_id(
      parse, root, (const char *const[]){"vision_start_token_id", "image_start_token_id", NULL},
      &out->vision_start_token_id));
  VLM_RETURN_IF_ERROR(first_token_id(
      parse, root, (const char *const[]){"vision_end_token_id", "image_end_token_id", NULL},
      &out->vision_end_token_id));
  VLM_RETURN_IF_ERROR(first_token_id(parse, root, (const char *const[]){"boi_token_index", "boi_token_id", NULL},
                                     &out->boi_token_id));
  VLM_RETURN_IF_ERROR(first_token_id(parse, root, (const char *const[]){"eoi_token_index", "eoi_token_id", NULL},
                                     &out->eoi_token_id));
  VLM_RETURN_IF_ERROR(first_token_id(parse, root, (const char *const[]){"boa_token_id", NULL}, &out->boa_token_id));
  return first_token_id(parse, root, (const char *const[]){"eoa_token_id", NULL}, &out->eoa_token_id);
}

static vlm_status read_sequence_lengths(model_parse *parse, vlm_model_config *out) {
  const char *const image_keys[] = {"image_seq_length", "mm_tokens_per_image",
                                    "vision_soft_tokens_per_image", NULL};
  for (size_t i = 0; image_keys[i] && !out->image_seq_length; i++)
    VLM_RETURN_IF_ERROR(vlm_config_read_int_or(&parse->root, image_keys[i], 1, 1 << 20, 0,
                                               &out->image_seq_length));
  return vlm_config_read_int_or(&parse->root, "audio_soft_tokens_per_image", 1, 1 << 20, 0,
                                &out->audio_seq_length);
}

static vlm_status read_feature_layers(model_parse *parse, vlm_model_config *out) {
  if (parse->record->read_feature_layers) {
    vlm_config_parts parts = {
        .root = &parse->root,
        .text = &parse->text,
        .vision = parse->has_vision ? &parse->vision : NULL,
        .audio = parse->has_audio ? &parse->audio : NULL,
        .adapter = parse->has_adapter ? &parse->adapter : NULL,
        .used_legacy_vision_key = parse->used_legacy_vision_key,
    };
    return parse->record->read_feature_layers(&parts, out);
  }
  const int64_t bound = VLM_CONFIG_MAX_LAYERS;
  return vlm_config_read_index_list(&parse->root, "vision_feature_layer", -bound, bound, true,
                                    &out->vision_feature_layers, &out->vision_feature_layer_is_list);
}

static vlm_status read_projector(model_parse *parse, vlm_model_config *out) {
  VLM_RETURN_IF_ERROR(vlm_config_read_string_or(&parse->root, "vision_feature_select_strategy",
                                                NULL, &out->vision_feature_select_strategy));
  VLM_RETURN_IF_ERROR(vlm_config_read_string_or(&parse->root, "projector_hidden_act", NULL,
                                                &out->projector_hidden_act));
  return vlm_config_read_bool_or(&parse->root, "multimodal_projector_bias", false,
                                 &out->multimodal_projector_bias);
}

static vlm_status read_tie(model_parse *parse, vlm_model_config *out) {
  VLM_RETURN_IF_ERROR(vlm_config_read_bool_or(&parse->root, "tie_word_embeddings", false,
                                              &out->tie_word_embeddings));
  /* LlavaConfig / Qwen2VLConfig.__post_init__: a text config that ties
   * turns tying on for the whole model. */
  if (!parse->record->tie_from_text || out->tie_word_embeddings || parse->text.object == parse->root.object)
    return VLM_OK;
  return vlm_config_read_bool_or(&parse->text, "tie_word_embeddings", false,
                                 &out->tie_word_embeddings);
}

static vlm_status read_architecture(model_parse *parse, vlm_model_config *out) {
  const vlm_json_value *architectures = vlm_config_get(&parse->root, "architectures");
  if (!architectures) return VLM_OK;
  const vlm_json_value *first = vlm_json_array_get(architectures, 0);
  if (architectures->type != VLM_JSON_ARRAY || (first && !vlm_json_is_string(first)))
    return vlm_config_type_error(&parse->root, "architectures", "a list of class names",
                                 architectures);
  if (!first) return VLM_OK;
  if (first->as.string.length > VLM_CONFIG_MAX_STRING_LENGTH)
    return vlm_config_type_error(&parse->root, "architectures", "a list of short class names",
                                 architectures);
  out->architecture = first->as.string.chars;
  return VLM_OK;
}

static vlm_status read_parts(model_parse *parse, vlm_model_config *out) {
  VLM_RETURN_IF_ERROR(read_architecture(parse, out));
  VLM_RETURN_IF_ERROR(vlm_config_read_dtype(&parse->root, &out->dtype));
  VLM_RETURN_IF_ERROR(read_tie(parse, out));
  VLM_RETURN_IF_ERROR(
      vlm_text_config_read(&parse->text, &parse->text_class, out->tie_word_embeddings, &out->text));
  if (parse->has_vision)
    VLM_RETURN_IF_ERROR(vlm_vision_config_read(&parse->vision, &parse->vision_class, &out->vision));
  if (parse->has_audio)
    VLM_RETURN_IF_ERROR(vlm_audio_config_read(&parse->audio, &parse->audio_class, &out->audio));
  out->has_vision = parse->has_vision;
  out->has_audio = parse->has_audio;
  VLM_RETURN_IF_ERROR(read_token_ids(parse, out));
  VLM_RETURN_IF_ERROR(read_sequence_lengths(parse, out));
  VLM_RETURN_IF_ERROR(read_feature_layers(parse, out));
  return read_projector(parse, out);
}

/* ---------------------------------------------------------------------- */
/* Entry points                                                            */
/* ---------------------------------------------------------------------- */

static vlm_status read_model_type(model_parse *parse) {
  vlm_config_section file = {parse->file_root, parse->source_name, "", parse->storage};
  if (!parse->file_root || parse->file_root->type != VLM_JSON_OBJECT)
    return VLM_ERROR(INVALID_ARGUMENT, "%s: the top level must be a JSON object", parse->source_name);
  const char *model_type = NULL;
  VLM_RETURN_IF_ERROR(vlm_config_read_string_or(&file, "model_type", NULL, &model_type));
  char names[1024];
  if (!model_type)
    return VLM_ERROR(INVALID_ARGUMENT, "%s: model_type is missing (supported: %s)", parse->source_name,
                     vlm_config_record_names(vlm_config_record_is_model, names, sizeof(names)));
  parse->record = vlm_config_record_find(model_type);
  if (!parse->record || !vlm_config_record_is_model(parse->record))
    return VLM_ERROR(UNIMPLEMENTED, "%s: model_type \"%s\" is not supported (supported: %s)",
                     parse->source_name, model_type,
                     vlm_config_record_names(vlm_config_record_is_model, names, sizeof(names)));
  return vlm_config_class_load(parse->storage, model_type, &parse->root_class);
}

static vlm_status parse_into(model_parse *parse, const char *text, size_t length,
                             vlm_model_config *out) {
  VLM_RETURN_IF_ERROR(
      vlm_config_storage_parse(parse->storage, text, length, parse->source_name, &parse->file_root));
  VLM_RETURN_IF_ERROR(read_model_type(parse));
  VLM_RETURN_IF_ERROR(build_sections(parse));
  out->model_type = parse->root_class.model_type;
  VLM_RETURN_IF_ERROR(read_parts(parse, out));
  out->root_section = parse->root.object;
  out->text_section = parse->text.object;
  out->vision_section = parse->has_vision ? parse->vision.object : NULL;
  out->audio_section = parse->has_audio ? parse->audio.object : NULL;
  out->adapter_section = parse->has_adapter ? parse->adapter.object : NULL;
  return VLM_OK;
}

vlm_status vlm_model_config_parse(const char *text, size_t length, const char *source_name,
                                  const vlm_allocator *allocator, vlm_model_config *out) {
  memset(out, 0, sizeof(*out));
  model_parse parse = {.source_name = source_name ? source_name : "config.json"};
  VLM_RETURN_IF_ERROR(vlm_config_storage_create(allocator, &parse.storage));
  out->storage = parse.storage;
  /* Messages must outlive this call: keep the name in the storage. */
  parse.source_name = vlm_config_storage_copy_string(parse.storage, parse.source_name);
  vlm_status status = parse.source_name
                          ? parse_into(&parse, text, length, out)
                          : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory reading a config");
  if (status) vlm_model_config_release(out);
  return status;
}

vlm_status vlm_model_config_load(const char *model_dir, const vlm_allocator *allocator,
                                 vlm_model_config *out) {
  memset(out, 0, sizeof(*out));
  char *text = NULL, *path = NULL;
  size_t length = 0;
  vlm_status status = vlm_config_read_file(model_dir, "config.json", false, &text, &length, &path);
  if (!status) status = vlm_model_config_parse(text, length, path, allocator, out);
  free(text);
  free(path);
  return status;
}

void vlm_model_config_release(vlm_model_config *config) {
  if (!config) return;
  vlm_config_storage_release(config->storage);
  memset(config, 0, sizeof(*config));
}
