/* tokenizer.json and tokenizer_config.json into the structs of
 * tokenizer_internal.h. Every malformed or unsupported piece is an error that
 * names the JSON path, e.g. "pre_tokenizer.pretokenizers[1]: unknown type
 * 'Foo'". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "io/config_record.h"
#include "text/tokenizer_internal.h"

/* Token ids must fit comfortably in int32 and in an id-indexed array. */
#define MAX_TOKEN_ID (1 << 24)

static char *copy_string(vlm_tokenizer *tokenizer, const vlm_json_value *value) {
  return vlm_arena_strndup(&tokenizer->arena, value->as.string.chars, value->as.string.length);
}

static vlm_status out_of_memory(void) {
  return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory loading the tokenizer");
}

static void *arena_array(vlm_tokenizer *tokenizer, size_t count, size_t size) {
  size_t bytes;
  if (!vlm_size_multiply(count ? count : 1, size, &bytes)) return NULL;
  void *memory = vlm_arena_allocate(&tokenizer->arena, bytes, 16);
  if (memory) memset(memory, 0, bytes);
  return memory;
}

static const char *type_of(const vlm_json_value *object) {
  return vlm_json_get_string(vlm_json_object_get(object, "type"));
}

static bool get_bool_or(const vlm_json_value *object, const char *key, bool fallback) {
  bool value;
  return vlm_json_get_bool(vlm_json_object_get(object, key), &value) ? value : fallback;
}

/* A string field holding exactly one character (Metaspace replacement). */
static vlm_status get_char(const vlm_json_value *object, const char *key, const char *path,
                           char *out, size_t *out_length) {
  const vlm_json_value *value = vlm_json_object_get(object, key);
  if (!vlm_json_is_string(value))
    return VLM_ERROR(INVALID_ARGUMENT, "%s.%s: expected a one-character string", path, key);
  size_t length = value->as.string.length, invalid;
  if (length == 0 || length > 4 ||
      utf8_valid_sequence((const unsigned char *)value->as.string.chars, length, &invalid) !=
          length)
    return VLM_ERROR(INVALID_ARGUMENT, "%s.%s: expected a one-character string", path, key);
  memcpy(out, value->as.string.chars, length);
  out[length] = '\0';
  *out_length = length;
  return VLM_OK;
}

vlm_status text_pattern_from_json(vlm_tokenizer *tokenizer, const vlm_json_value *value,
                                  text_pattern *out) {
  memset(out, 0, sizeof(*out));
  const vlm_json_value *literal = vlm_json_object_get(value, "String");
  const vlm_json_value *regex = vlm_json_object_get(value, "Regex");
  if (vlm_json_is_string(literal)) {
    out->literal = copy_string(tokenizer, literal);
    out->literal_length = literal->as.string.length;
    return out->literal ? VLM_OK : out_of_memory();
  }
  if (vlm_json_is_string(regex))
    return tokenizer_regex_compile(regex->as.string.chars, regex->as.string.length, &out->regex);
  return VLM_ERROR(INVALID_ARGUMENT, "pattern: expected {\"String\": ...} or {\"Regex\": ...}");
}

void text_pattern_release(text_pattern *pattern) {
  tokenizer_regex_release(pattern->regex);
  pattern->regex = NULL;
}

/* ---- Normalizers --------------------------------------------------------- */

void normalizer_release(tokenizer_normalizer *normalizer) {
  if (!normalizer) return;
  for (size_t i = 0; i < normalizer->child_count; i++) normalizer_release(&normalizer->children[i]);
  text_pattern_release(&normalizer->pattern);
}

static vlm_status normalizer_from_json(vlm_tokenizer *tokenizer, const vlm_json_value *json,
                                       const char *path, tokenizer_normalizer *out) {
  memset(out, 0, sizeof(*out));
  const char *type = type_of(json);
  if (!type) return VLM_ERROR(INVALID_ARGUMENT, "%s: missing \"type\"", path);
  if (strcmp(type, "Sequence") == 0) {
    out->kind = NORMALIZER_SEQUENCE;
    const vlm_json_value *list = vlm_json_object_get(json, "normalizers");
    if (!list || list->type != VLM_JSON_ARRAY)
      return VLM_ERROR(INVALID_ARGUMENT, "%s.normalizers: expected an array", path);
    out->children = arena_array(tokenizer, list->as.array.count, sizeof(*out->children));
    if (!out->children) return out_of_memory();
    for (size_t i = 0; i < list->as.array.count; i++) {
      char child_path[256];
      snprintf(child_path, sizeof(child_path), "%s.normalizers[%zu]", path, i);
      out->child_count = i + 1;
      VLM_RETURN_IF_ERROR(
          normalizer_from_json(tokenizer, &list->as.array.items[i], child_path, &out->children[i]));
    }
    return VLM_OK;
  }
  static const struct {
    const char *name;
    normalizer_kind kind;
  } simple[] = {{"NFC", NORMALIZER_NFC},
                {"NFD", NORMALIZER_NFD},
                {"NFKC", NORMALIZER_NFKC},
                {"NFKD", NORMALIZER_NFKD},
                {"Lowercase", NORMALIZER_LOWERCASE},
                {"StripAccents", NORMALIZER_STRIP_ACCENTS}};
  for (size_t i = 0; i < sizeof(simple) / sizeof(simple[0]); i++) {
    if (strcmp(type, simple[i].name) == 0) {
      out->kind = simple[i].kind;
      return VLM_OK;
    }
  }
  if (strcmp(type, "Prepend") == 0 || strcmp(type, "Replace") == 0) {
    bool prepend = strcmp(type, "Prepend") == 0;
    out->kind = prepend ? NORMALIZER_PREPEND : NORMALIZER_REPLACE;
    const char *key = prepend ? "prepend" : "content";
    const vlm_json_value *content = vlm_json_object_get(json, key);
    if (!vlm_json_is_string(content))
      return VLM_ERROR(INVALID_ARGUMENT, "%s.%s: expected a string", path, key);
    out->content = copy_string(tokenizer, content);
    out->content_length = content->as.string.length;
    if (!out->content) return out_of_memory();
    if (prepend) return VLM_OK;
    return vlm_status_annotate(
        text_pattern_from_json(tokenizer, vlm_json_object_get(json, "pattern"), &out->pattern),
        "%s", path);
  }
  if (strcmp(type, "Strip") == 0) {
    out->kind = NORMALIZER_STRIP;
    out->strip_left = get_bool_or(json, "strip_left", true);
    out->strip_right = get_bool_or(json, "strip_right", true);
    return VLM_OK;
  }
  return VLM_ERROR(UNIMPLEMENTED, "%s: unsupported normalizer type '%s'", path, type);
}

/* ---- Pre-tokenizers ------------------------------------------------------ */

/* GPT-2's pattern, used by ByteLevel with use_regex = true. */
static const char byte_level_pattern[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

void pre_tokenizer_release(tokenizer_pre_tokenizer *pre_tokenizer) {
  if (!pre_tokenizer) return;
  for (size_t i = 0; i < pre_tokenizer->child_count; i++)
    pre_tokenizer_release(&pre_tokenizer->children[i]);
  text_pattern_release(&pre_tokenizer->pattern);
}

static vlm_status parse_behavior(const vlm_json_value *json, const char *path,
                                 split_behavior *out) {
  static const struct {
    const char *name;
    split_behavior behavior;
  } names[] = {{"Removed", SPLIT_REMOVED},
               {"Isolated", SPLIT_ISOLATED},
               {"MergedWithPrevious", SPLIT_MERGED_WITH_PREVIOUS},
               {"MergedWithNext", SPLIT_MERGED_WITH_NEXT},
               {"Contiguous", SPLIT_CONTIGUOUS}};
  const char *name = vlm_json_get_string(vlm_json_object_get(json, "behavior"));
  for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++) {
    if (strcmp(name, names[i].name) == 0) {
      *out = names[i].behavior;
      return VLM_OK;
    }
  }
  return VLM_ERROR(INVALID_ARGUMENT, "%s.behavior: expected one of Removed, Isolated, "
                   "MergedWithPrevious, MergedWithNext, Contiguous", path);
}

static vlm_status parse_prepend_scheme(const vlm_json_value *json, const char *path,
                                       prepend_scheme *out) {
  const char *scheme = vlm_json_get_string(vlm_json_object_get(json, "prepend_scheme"));
  if (!scheme) {
    /* Files from before prepend_scheme existed say add_prefix_space. */
    *out = get_bool_or(json, "add_prefix_space", true) ? PREPEND_ALWAYS : PREPEND_NEVER;
    return VLM_OK;
  }
  if (strcmp(scheme, "always") == 0) *out = PREPEND_ALWAYS;
  else if (strcmp(scheme, "first") == 0) *out = PREPEND_FIRST;
  else if (strcmp(scheme, "never") == 0) *out = PREPEND_NEVER;
  else return VLM_ERROR(INVALID_ARGUMENT, "%s.prepend_scheme: expected always, first or never", path);
  return VLM_OK;
}

static vlm_status pre_tokenizer_from_json(vlm_tokenizer *tokenizer, const vlm_json_value *json,
                                          const char *path, tokenizer_pre_tokenizer *out) {
  memset(out, 0, sizeof(*out));
  const char *type = type_of(json);
  if (!type) return VLM_ERROR(INVALID_ARGUMENT, "%s: missing \"type\"", path);
  if (strcmp(type, "Sequence") == 0) {
    out->kind = PRE_TOKENIZER_SEQUENCE;
    const vlm_json_value *list = vlm_json_object_get(json, "pretokenizers");
    if (!list || list->type != VLM_JSON_ARRAY)
      return VLM_ERROR(INVALID_ARGUMENT, "%s.pretokenizers: expected an array", path);
    out->children = arena_array(tokenizer, list->as.array.count, sizeof(*out->children));
    if (!out->children) return out_of_memory();
    for (size_t i = 0; i < list->as.array.count; i++) {
      char child_path[256];
      snprintf(child_path, sizeof(child_path), "%s.pretokenizers[%zu]", path, i);
      out->child_count = i + 1;
      VLM_RETURN_IF_ERROR(pre_tokenizer_from_json(tokenizer, &list->as.array.items[i],
                                                  child_path, &out->children[i]));
    }
    return VLM_OK;
  }
  if (strcmp(type, "Split") == 0) {
    out->kind = PRE_TOKENIZER_SPLIT;
    out->invert = get_bool_or(json, "invert", false);
    VLM_RETURN_IF_ERROR(parse_behavior(json, path, &out->behavior));
    return vlm_status_annotate(
        text_pattern_from_json(tokenizer, vlm_json_object_get(json, "pattern"), &out->pattern),
        "%s", path);
  }
  if (strcmp(type, "ByteLevel") == 0) {
    out->kind = PRE_TOKENIZER_BYTE_LEVEL;
    out->add_prefix_space = get_bool_or(json, "add_prefix_space", true);
    out->use_regex = get_bool_or(json, "use_regex", true);
    if (!out->use_regex) return VLM_OK;
    return tokenizer_regex_compile(byte_level_pattern, sizeof(byte_level_pattern) - 1,
                                   &out->pattern.regex);
  }
  if (strcmp(type, "Metaspace") == 0) {
    out->kind = PRE_TOKENIZER_METASPACE;
    out->split = get_bool_or(json, "split", true);
    VLM_RETURN_IF_ERROR(
        get_char(json, "replacement", path, out->replacement, &out->replacement_length));
    return parse_prepend_scheme(json, path, &out->prepend);
  }
  if (strcmp(type, "Digits") == 0) {
    out->kind = PRE_TOKENIZER_DIGITS;
    out->individual_digits = get_bool_or(json, "individual_digits", false);
    return VLM_OK;
  }
  if (strcmp(type, "Whitespace") == 0) {
    out->kind = PRE_TOKENIZER_WHITESPACE;
    static const char pattern[] = "\\w+|[^\\w\\s]+";
    return tokenizer_regex_compile(pattern, sizeof(pattern) - 1, &out->pattern.regex);
  }
  if (strcmp(type, "WhitespaceSplit") == 0) {
    out->kind = PRE_TOKENIZER_WHITESPACE_SPLIT;
    return VLM_OK;
  }
  return VLM_ERROR(UNIMPLEMENTED, "%s: unsupported pre-tokenizer type '%s'", path, type);
}

/* ---- Decoders ------------------------------------------------------------ */

void decoder_release(tokenizer_decoder *decoder) {
  if (!decoder) return;
  for (size_t i = 0; i < decoder->child_count; i++) decoder_release(&decoder->children[i]);
  text_pattern_release(&decoder->pattern);
}

static bool get_size(const vlm_json_value *object, const char *key, size_t *out) {
  int64_t value;
  if (!vlm_json_get_int(vlm_json_object_get(object, key), &value) || value < 0 ||
      value > 1000000)
    return false;
  *out = (size_t)value;
  return true;
}

static vlm_status decoder_from_json(vlm_tokenizer *tokenizer, const vlm_json_value *json,
                                    const char *path, tokenizer_decoder *out) {
  memset(out, 0, sizeof(*out));
  const char *type = type_of(json);
  if (!type) return VLM_ERROR(INVALID_ARGUMENT, "%s: missing \"type\"", path);
  if (strcmp(type, "Sequence") == 0) {
    out->kind = DECODER_SEQUENCE;
    const vlm_json_value *list = vlm_json_object_get(json, "decoders");
    if (!list || list->type != VLM_JSON_ARRAY)
      return VLM_ERROR(INVALID_ARGUMENT, "%s.decoders: expected an array", path);
    out->children = arena_array(tokenizer, list->as.array.count, sizeof(*out->children));
    if (!out->children) return out_of_memory();
    for (size_t i = 0; i < list->as.array.count; i++) {
      char child_path[256];
      snprintf(child_path, sizeof(child_path), "%s.decoders[%zu]", path, i);
      out->child_count = i + 1;
      VLM_RETURN_IF_ERROR(
          decoder_from_json(tokenizer, &list->as.array.items[i], child_path, &out->children[i]));
    }
    return VLM_OK;
  }
  if (strcmp(type, "ByteLevel") == 0) { out->kind = DECODER_BYTE_LEVEL; return VLM_OK; }
  if (strcmp(type, "ByteFallback") == 0) { out->kind = DECODER_BYTE_FALLBACK; return VLM_OK; }
  if (strcmp(type, "Fuse") == 0) { out->kind = DECODER_FUSE; return VLM_OK; }
  if (strcmp(type, "Metaspace") == 0) {
    out->kind = DECODER_METASPACE;
    VLM_RETURN_IF_ERROR(
        get_char(json, "replacement", path, out->replacement, &out->replacement_length));
    return parse_prepend_scheme(json, path, &out->prepend);
  }
  if (strcmp(type, "Strip") == 0) {
    out->kind = DECODER_STRIP;
    char content[5];
    size_t length;
    VLM_RETURN_IF_ERROR(get_char(json, "content", path, content, &length));
    utf8_decode(content, length, &out->strip_char);
    if (!get_size(json, "start", &out->strip_start) || !get_size(json, "stop", &out->strip_stop))
      return VLM_ERROR(INVALID_ARGUMENT, "%s: start and stop must be small whole numbers", path);
    return VLM_OK;
  }
  if (strcmp(type, "Replace") == 0) {
    out->kind = DECODER_REPLACE;
    const vlm_json_value *content = vlm_json_object_get(json, "content");
    if (!vlm_json_is_string(content))
      return VLM_ERROR(INVALID_ARGUMENT, "%s.content: expected a string", path);
    out->content = copy_string(tokenizer, content);
    out->content_length = content->as.string.length;
    if (!out->content) return out_of_memory();
    return vlm_status_annotate(
        text_pattern_from_json(tokenizer, vlm_json_object_get(json, "pattern"), &out->pattern),
        "%s", path);
  }
  if (strcmp(type, "WordPiece") == 0) {
    out->kind = DECODER_WORDPIECE;
    const vlm_json_value *prefix = vlm_json_object_get(json, "prefix");
    out->content = vlm_json_is_string(prefix) ? copy_string(tokenizer, prefix) : "##";
    out->content_length = vlm_json_is_string(prefix) ? prefix->as.string.length : 2;
    if (!out->content) return out_of_memory();
    out->cleanup = get_bool_or(json, "cleanup", true);
    return VLM_OK;
  }
  return VLM_ERROR(UNIMPLEMENTED, "%s: unsupported decoder type '%s'", path, type);
}

/* ---- Model --------------------------------------------------------------- */

static vlm_status load_vocabulary(vlm_tokenizer *tokenizer, const vlm_json_value *vocab) {
  if (!vocab || vocab->type != VLM_JSON_OBJECT)
    return VLM_ERROR(INVALID_ARGUMENT, "model.vocab: expected an object of token -> id");
  tokenizer_model *model = &tokenizer->model;
  VLM_RETURN_IF_ERROR(string_table_init(&model->vocabulary, vocab->as.object.count));
  for (size_t i = 0; i < vocab->as.object.count; i++) {
    const vlm_json_member *member = &vocab->as.object.members[i];
    int64_t id;
    if (!vlm_json_get_int(&member->value, &id) || id < 0 || id >= MAX_TOKEN_ID)
      return VLM_ERROR(INVALID_ARGUMENT, "model.vocab[\"%.60s\"]: id must be a whole number "
                       "from 0 to %d", member->key, MAX_TOKEN_ID - 1);
    char *token = vlm_arena_strndup(&tokenizer->arena, member->key, member->key_length);
    if (!token) return out_of_memory();
    VLM_RETURN_IF_ERROR(string_table_put(&model->vocabulary, token, member->key_length, (int32_t)id));
  }
  return VLM_OK;
}

/* A merge is "left right" (split at the first space) or ["left", "right"]. */
static vlm_status merge_parts(const vlm_json_value *merge, size_t index, const char **left,
                              size_t *left_length, const char **right, size_t *right_length) {
  if (vlm_json_is_string(merge)) {
    const char *text = merge->as.string.chars;
    const char *space = memchr(text, ' ', merge->as.string.length);
    if (!space)
      return VLM_ERROR(INVALID_ARGUMENT, "model.merges[%zu]: expected \"left right\"", index);
    *left = text;
    *left_length = (size_t)(space - text);
    *right = space + 1;
    *right_length = merge->as.string.length - *left_length - 1;
    return VLM_OK;
  }
  if (merge->type == VLM_JSON_ARRAY && merge->as.array.count == 2 &&
      vlm_json_is_string(&merge->as.array.items[0]) &&
      vlm_json_is_string(&merge->as.array.items[1])) {
    *left = merge->as.array.items[0].as.string.chars;
    *left_length = merge->as.array.items[0].as.string.length;
    *right = merge->as.array.items[1].as.string.chars;
    *right_length = merge->as.array.items[1].as.string.length;
    return VLM_OK;
  }
  return VLM_ERROR(INVALID_ARGUMENT, "model.merges[%zu]: expected \"left right\" or [left, right]",
                   index);
}

static vlm_status load_merges(vlm_tokenizer *tokenizer, const vlm_json_value *merges) {
  tokenizer_model *model = &tokenizer->model;
  size_t count = merges && merges->type == VLM_JSON_ARRAY ? merges->as.array.count : 0;
  if (merges && merges->type != VLM_JSON_ARRAY)
    return VLM_ERROR(INVALID_ARGUMENT, "model.merges: expected an array");
  VLM_RETURN_IF_ERROR(pair_table_init(&model->merges, count));
  byte_buffer joined = {0};
  vlm_status status = VLM_OK;
  for (size_t i = 0; i < count && !status; i++) {
    const char *left = NULL, *right = NULL;
    size_t left_length = 0, right_length = 0;
    status = merge_parts(&merges->as.array.items[i], i, &left, &left_length, &right, &right_length);
    if (status) break;
    int32_t left_id = string_table_get(&model->vocabulary, left, left_length);
    int32_t right_id = string_table_get(&model->vocabulary, right, right_length);
    /* The merged token drops the right part's continuing-subword prefix. */
    size_t skip = model->continuing_prefix_length;
    if (right_length < skip || memcmp(right, model->continuing_prefix, skip) != 0) skip = 0;
    joined.length = 0;
    if (!byte_buffer_append(&joined, left, left_length) ||
        !byte_buffer_append(&joined, right + skip, right_length - skip)) {
      status = out_of_memory();
      break;
    }
    int32_t new_id = string_table_get(&model->vocabulary, joined.data, joined.length);
    if (left_id < 0 || right_id < 0 || new_id < 0) {
      status = VLM_ERROR(INVALID_ARGUMENT, "model.merges[%zu]: \"%.*s\" + \"%.*s\": token not "
                         "in the vocabulary", i, (int)(left_length > 60 ? 60 : left_length), left,
                         (int)(right_length > 60 ? 60 : right_length), right);
      break;
    }
    status = pair_table_put(&model->merges, ((uint64_t)left_id << 32) | (uint32_t)right_id,
                            (uint32_t)i, (uint32_t)new_id);
  }
  byte_buffer_release(&joined);
  return status;
}

static vlm_status optional_string(vlm_tokenizer *tokenizer, const vlm_json_value *object,
                                  const char *key, const char **out, size_t *out_length) {
  const vlm_json_value *value = vlm_json_object_get(object, key);
  *out = "";
  *out_length = 0;
  if (!value || value->type == VLM_JSON_NULL) return VLM_OK;
  if (!vlm_json_is_string(value))
    return VLM_ERROR(INVALID_ARGUMENT, "model.%s: expected a string or null", key);
  *out = copy_string(tokenizer, value);
  *out_length = value->as.string.length;
  return *out ? VLM_OK : out_of_memory();
}

static vlm_status load_model(vlm_tokenizer *tokenizer, const vlm_json_value *json) {
  tokenizer_model *model = &tokenizer->model;
  if (!json || json->type != VLM_JSON_OBJECT)
    return VLM_ERROR(INVALID_ARGUMENT, "model: expected an object");
  const char *type = type_of(json);
  if (!type) type = vlm_json_object_get(json, "merges") ? "BPE" : "?";
  if (strcmp(type, "BPE") == 0) model->kind = MODEL_BPE;
  else if (strcmp(type, "WordPiece") == 0) model->kind = MODEL_WORDPIECE;
  else return VLM_ERROR(UNIMPLEMENTED, "model: unsupported model type '%s'", type);
  VLM_RETURN_IF_ERROR(load_vocabulary(tokenizer, vlm_json_object_get(json, "vocab")));
  const vlm_json_value *dropout = vlm_json_object_get(json, "dropout");
  double dropout_value = 0;
  if (dropout && dropout->type != VLM_JSON_NULL &&
      (!vlm_json_get_double(dropout, &dropout_value) || dropout_value != 0))
    return VLM_ERROR(UNIMPLEMENTED, "model.dropout: BPE dropout is not supported");
  model->fuse_unknown = get_bool_or(json, "fuse_unk", false);
  model->byte_fallback = get_bool_or(json, "byte_fallback", false);
  model->ignore_merges = get_bool_or(json, "ignore_merges", false);
  model->unknown_id = -1;
  const vlm_json_value *unknown = vlm_json_object_get(json, "unk_token");
  if (vlm_json_is_string(unknown)) {
    model->unknown_id = string_table_get(&model->vocabulary, unknown->as.string.chars,
                                         unknown->as.string.length);
    if (model->unknown_id < 0)
      return VLM_ERROR(INVALID_ARGUMENT, "model.unk_token '%.60s' is not in the vocabulary",
                       unknown->as.string.chars);
  }
  if (model->kind == MODEL_WORDPIECE) {
    const vlm_json_value *prefix = vlm_json_object_get(json, "continuing_subword_prefix");
    model->continuing_prefix = vlm_json_is_string(prefix) ? copy_string(tokenizer, prefix) : "##";
    model->continuing_prefix_length = vlm_json_is_string(prefix) ? prefix->as.string.length : 2;
    if (!model->continuing_prefix) return out_of_memory();
    if (!get_size(json, "max_input_chars_per_word", &model->max_input_chars_per_word))
      model->max_input_chars_per_word = 100;
    return VLM_OK;
  }
  VLM_RETURN_IF_ERROR(optional_string(tokenizer, json, "continuing_subword_prefix",
                                      &model->continuing_prefix, &model->continuing_prefix_length));
  VLM_RETURN_IF_ERROR(optional_string(tokenizer, json, "end_of_word_suffix",
                                      &model->end_of_word_suffix,
                                      &model->end_of_word_suffix_length));
  for (int byte = 0; byte < 256; byte++) {
    char name[8];
    snprintf(name, sizeof(name), "<0x%02X>", byte);
    model->byte_fallback_ids[byte] = string_table_get(&model->vocabulary, name, 6);
  }
  return load_merges(tokenizer, vlm_json_object_get(json, "merges"));
}

/* ---- Added tokens -------------------------------------------------------- */

static vlm_status load_added_tokens(vlm_tokenizer *tokenizer, const vlm_json_value *list) {
  if (!list || list->type == VLM_JSON_NULL) return VLM_OK;
  if (list->type != VLM_JSON_ARRAY)
    return VLM_ERROR(INVALID_ARGUMENT, "added_tokens: expected an array");
  tokenizer->added = arena_array(tokenizer, list->as.array.count, sizeof(*tokenizer->added));
  if (!tokenizer->added) return out_of_memory();
  for (size_t i = 0; i < list->as.array.count; i++) {
    const vlm_json_value *item = &list->as.array.items[i];
    const vlm_json_value *content = vlm_json_object_get(item, "content");
    int64_t id;
    if (!vlm_json_is_string(content) || !vlm_json_get_int(vlm_json_object_get(item, "id"), &id) ||
        id < 0 || id >= MAX_TOKEN_ID)
      return VLM_ERROR(INVALID_ARGUMENT, "added_tokens[%zu]: expected an id (0 to %d) and a "
                       "content string", i, MAX_TOKEN_ID - 1);
    added_token *token = &tokenizer->added[tokenizer->added_count++];
    token->content = copy_string(tokenizer, content);
    if (!token->content) return out_of_memory();
    token->length = content->as.string.length;
    token->id = (int32_t)id;
    token->single_word = get_bool_or(item, "single_word", false);
    token->lstrip = get_bool_or(item, "lstrip", false);
    token->rstrip = get_bool_or(item, "rstrip", false);
    token->special = get_bool_or(item, "special", false);
    /* Hugging Face's default: special tokens are not normalized. */
    token->normalized = get_bool_or(item, "normalized", !token->special);
  }
  return VLM_OK;
}

/* ---- Post-processor ------------------------------------------------------ */

static vlm_status template_special(vlm_tokenizer *tokenizer, const vlm_json_value *special_tokens,
                                   const char *name, template_item *out) {
  const vlm_json_value *entry = vlm_json_object_get(special_tokens, name);
  const vlm_json_value *ids = vlm_json_object_get(entry, "ids");
  if (!ids || ids->type != VLM_JSON_ARRAY)
    return VLM_ERROR(INVALID_ARGUMENT, "post_processor: special token '%.60s' has no ids", name);
  int32_t *values = arena_array(tokenizer, ids->as.array.count, sizeof(int32_t));
  if (!values) return out_of_memory();
  for (size_t i = 0; i < ids->as.array.count; i++) {
    int64_t id;
    if (!vlm_json_get_int(&ids->as.array.items[i], &id) || id < 0 || id >= MAX_TOKEN_ID)
      return VLM_ERROR(INVALID_ARGUMENT, "post_processor: special token '%.60s': bad id", name);
    values[i] = (int32_t)id;
  }
  out->ids = values;
  out->count = ids->as.array.count;
  return VLM_OK;
}

static vlm_status load_template(vlm_tokenizer *tokenizer, const vlm_json_value *json) {
  const vlm_json_value *single = vlm_json_object_get(json, "single");
  const vlm_json_value *special_tokens = vlm_json_object_get(json, "special_tokens");
  if (!single || single->type != VLM_JSON_ARRAY)
    return VLM_ERROR(INVALID_ARGUMENT, "post_processor.single: expected an array");
  tokenizer->template_items = arena_array(tokenizer, single->as.array.count, sizeof(template_item));
  if (!tokenizer->template_items) return out_of_memory();
  for (size_t i = 0; i < single->as.array.count; i++) {
    const vlm_json_value *item = &single->as.array.items[i];
    const vlm_json_value *special = vlm_json_object_get(item, "SpecialToken");
    template_item *out = &tokenizer->template_items[tokenizer->template_count++];
    if (special) {
      const char *name = vlm_json_get_string(vlm_json_object_get(special, "id"));
      if (!name) return VLM_ERROR(INVALID_ARGUMENT, "post_processor.single[%zu]: no id", i);
      VLM_RETURN_IF_ERROR(template_special(tokenizer, special_tokens, name, out));
    } else if (!vlm_json_object_get(item, "Sequence")) {
      return VLM_ERROR(INVALID_ARGUMENT, "post_processor.single[%zu]: expected SpecialToken or "
                       "Sequence", i);
    }
  }
  tokenizer->has_template = true;
  return VLM_OK;
}

/* Bert/Roberta processors: [cls] A [sep] with {"cls": [token, id]}. */
static vlm_status load_cls_sep(vlm_tokenizer *tokenizer, const vlm_json_value *json) {
  int32_t *ids = arena_array(tokenizer, 2, sizeof(int32_t));
  tokenizer->template_items = arena_array(tokenizer, 3, sizeof(template_item));
  if (!ids || !tokenizer->template_items) return out_of_memory();
  const char *keys[2] = {"cls", "sep"};
  for (int i = 0; i < 2; i++) {
    int64_t id;
    const vlm_json_value *pair = vlm_json_object_get(json, keys[i]);
    if (!vlm_json_get_int(vlm_json_array_get(pair, 1), &id) || id < 0 || id >= MAX_TOKEN_ID)
      return VLM_ERROR(INVALID_ARGUMENT, "post_processor.%s: expected [token, id]", keys[i]);
    ids[i] = (int32_t)id;
  }
  tokenizer->template_items[0] = (template_item){&ids[0], 1};
  tokenizer->template_items[1] = (template_item){NULL, 0};
  tokenizer->template_items[2] = (template_item){&ids[1], 1};
  tokenizer->template_count = 3;
  tokenizer->has_template = true;
  return VLM_OK;
}

static vlm_status load_post_processor(vlm_tokenizer *tokenizer, const vlm_json_value *json,
                                      const char *path) {
  if (!json || json->type == VLM_JSON_NULL) return VLM_OK;
  const char *type = type_of(json);
  if (!type) return VLM_ERROR(INVALID_ARGUMENT, "%s: missing \"type\"", path);
  if (strcmp(type, "ByteLevel") == 0) return VLM_OK; /* offsets only */
  if (strcmp(type, "TemplateProcessing") == 0) return load_template(tokenizer, json);
  if (strcmp(type, "BertProcessing") == 0 || strcmp(type, "RobertaProcessing") == 0)
    return load_cls_sep(tokenizer, json);
  if (strcmp(type, "Sequence") == 0) {
    const vlm_json_value *list = vlm_json_object_get(json, "processors");
    for (size_t i = 0; list && list->type == VLM_JSON_ARRAY && i < list->as.array.count; i++)
      VLM_RETURN_IF_ERROR(load_post_processor(tokenizer, &list->as.array.items[i], path));
    return VLM_OK;
  }
  return VLM_ERROR(UNIMPLEMENTED, "%s: unsupported post-processor type '%s'", path, type);
}

/* ---- Tables built from everything above ---------------------------------- */

static vlm_status build_id_table(vlm_tokenizer *tokenizer) {
  const string_table *vocabulary = &tokenizer->model.vocabulary;
  size_t count = 0;
  for (size_t i = 0; i < vocabulary->slot_count; i++)
    if (vocabulary->strings[i] && (size_t)vocabulary->ids[i] + 1 > count)
      count = (size_t)vocabulary->ids[i] + 1;
  for (size_t i = 0; i < tokenizer->added_count; i++)
    if ((size_t)tokenizer->added[i].id + 1 > count) count = (size_t)tokenizer->added[i].id + 1;
  tokenizer->id_count = count;
  tokenizer->id_strings = arena_array(tokenizer, count, sizeof(*tokenizer->id_strings));
  tokenizer->id_lengths = arena_array(tokenizer, count, sizeof(*tokenizer->id_lengths));
  tokenizer->id_special = arena_array(tokenizer, count, sizeof(*tokenizer->id_special));
  if (!tokenizer->id_strings || !tokenizer->id_lengths || !tokenizer->id_special)
    return out_of_memory();
  for (size_t i = 0; i < vocabulary->slot_count; i++) {
    if (!vocabulary->strings[i]) continue;
    tokenizer->id_strings[vocabulary->ids[i]] = vocabulary->strings[i];
    tokenizer->id_lengths[vocabulary->ids[i]] = vocabulary->lengths[i];
  }
  VLM_RETURN_IF_ERROR(string_table_init(&tokenizer->added_by_content, tokenizer->added_count));
  for (size_t i = 0; i < tokenizer->added_count; i++) {
    const added_token *token = &tokenizer->added[i];
    tokenizer->id_strings[token->id] = token->content;
    tokenizer->id_lengths[token->id] = (uint32_t)token->length;
    tokenizer->id_special[token->id] = token->special;
    VLM_RETURN_IF_ERROR(
        string_table_put(&tokenizer->added_by_content, token->content, token->length, token->id));
  }
  return VLM_OK;
}

static vlm_status build_tries(vlm_tokenizer *tokenizer) {
  VLM_RETURN_IF_ERROR(token_trie_init(&tokenizer->raw_trie));
  tokenizer->has_raw_trie = true;
  VLM_RETURN_IF_ERROR(token_trie_init(&tokenizer->normalized_trie));
  tokenizer->has_normalized_trie = true;
  byte_buffer normalized = {0};
  vlm_status status = VLM_OK;
  for (size_t i = 0; i < tokenizer->added_count && !status; i++) {
    const added_token *token = &tokenizer->added[i];
    if (!token->normalized || !tokenizer->normalizer) {
      token_trie *trie = token->normalized ? &tokenizer->normalized_trie : &tokenizer->raw_trie;
      status = token_trie_insert(trie, token->content, token->length, (int32_t)i);
      continue;
    }
    /* Normalized tokens are matched in normalized text, so their pattern is
     * their normalized content -- which is also the string `tokenizers`
     * gives back for the id (id_to_token, decode): with Llama-2's Prepend
     * normalizer a normalized "[N]" decodes as " [N]". */
    status = normalizer_apply(tokenizer->normalizer, token->content, token->length, &normalized,
                              NULL);
    if (!status)
      status = token_trie_insert(&tokenizer->normalized_trie, normalized.data, normalized.length,
                                 (int32_t)i);
    char *as_normalized = status ? NULL
                                 : vlm_arena_strndup(&tokenizer->arena, normalized.data ? normalized.data : "",
                                                     normalized.length);
    if (!status && !as_normalized) status = out_of_memory();
    if (!status) {
      tokenizer->id_strings[token->id] = as_normalized;
      tokenizer->id_lengths[token->id] = (uint32_t)normalized.length;
      /* decode(skip_special_tokens) skips an id whose string is a special
       * token's content: a normalized special token whose string changed
       * is no longer one (tokenizers 0.23, through Transformers too). */
      int32_t same = string_table_get(&tokenizer->added_by_content, as_normalized, normalized.length);
      tokenizer->id_special[token->id] = same >= 0 && tokenizer->id_special[same];
    }
  }
  byte_buffer_release(&normalized);
  return status;
}

/* ---- tokenizer_config.json ------------------------------------------------ */

/* bos_token and friends are a string or {"content": ...}. */
static const vlm_json_value *config_token(const vlm_json_value *config, const char *key) {
  const vlm_json_value *value = vlm_json_object_get(config, key);
  if (value && value->type == VLM_JSON_OBJECT) value = vlm_json_object_get(value, "content");
  return vlm_json_is_string(value) ? value : NULL;
}

static int32_t config_token_id(const vlm_tokenizer *tokenizer, const vlm_json_value *config,
                               const char *key) {
  const vlm_json_value *value = config_token(config, key);
  return value ? vlm_tokenizer_token_to_id(tokenizer, value->as.string.chars,
                                           value->as.string.length)
               : -1;
}

static bool is_byte_level(const vlm_tokenizer *tokenizer) {
  const tokenizer_pre_tokenizer *pre = tokenizer->pre_tokenizer;
  if (pre && pre->kind == PRE_TOKENIZER_BYTE_LEVEL) return true;
  for (size_t i = 0; pre && i < pre->child_count; i++)
    if (pre->children[i].kind == PRE_TOKENIZER_BYTE_LEVEL) return true;
  return tokenizer->decoder && tokenizer->decoder->kind == DECODER_BYTE_LEVEL;
}

/* Transformers 5 rebuilds a LlamaTokenizer's pipeline in code instead of
 * taking tokenizer.json's (tokenization_llama.py): no normalizer, a
 * Metaspace pre-tokenizer, no unk token, and a matching decoder. */
static vlm_status apply_llama_class(vlm_tokenizer *tokenizer, const vlm_json_value *config) {
  bool add_prefix_space = get_bool_or(config, "add_prefix_space", true);
  bool legacy = get_bool_or(config, "legacy", false);
  normalizer_release(tokenizer->normalizer);
  tokenizer->normalizer = NULL;
  pre_tokenizer_release(tokenizer->pre_tokenizer);
  decoder_release(tokenizer->decoder);
  tokenizer_pre_tokenizer *pre = arena_array(tokenizer, 1, sizeof(*pre));
  tokenizer_decoder *decoder = arena_array(tokenizer, 1, sizeof(*decoder));
  tokenizer_decoder *steps = arena_array(tokenizer, 4, sizeof(*steps));
  if (!pre || !decoder || !steps) return out_of_memory();
  pre->kind = PRE_TOKENIZER_METASPACE;
  memcpy(pre->replacement, "\xE2\x96\x81", 4);
  pre->replacement_length = 3;
  pre->prepend = !add_prefix_space ? PREPEND_NEVER : legacy ? PREPEND_ALWAYS : PREPEND_FIRST;
  pre->split = false;
  tokenizer->pre_tokenizer = pre;
  steps[0].kind = DECODER_REPLACE;
  steps[0].pattern.literal = "\xE2\x96\x81";
  steps[0].pattern.literal_length = 3;
  steps[0].content = " ";
  steps[0].content_length = 1;
  steps[1].kind = DECODER_BYTE_FALLBACK;
  steps[2].kind = DECODER_FUSE;
  steps[3].kind = DECODER_STRIP;
  steps[3].strip_char = ' ';
  steps[3].strip_start = 1;
  decoder->kind = DECODER_SEQUENCE;
  decoder->children = steps;
  decoder->child_count = add_prefix_space ? 4 : 3;
  tokenizer->decoder = decoder;
  /* BPE(fuse_unk=True, byte_fallback=True), no unk_token. */
  tokenizer->model.unknown_id = -1;
  tokenizer->model.fuse_unknown = true;
  tokenizer->model.byte_fallback = true;
  return VLM_OK;
}

static vlm_status load_component(vlm_tokenizer *tokenizer, const vlm_json_value *root,
                                 const char *key);

/* Replaces the normalizer, pre-tokenizer and decoder by those a class builds,
 * written as a tokenizer.json fragment. */
static vlm_status replace_pipeline(vlm_tokenizer *tokenizer, const char *fragment) {
  vlm_json_document document;
  VLM_RETURN_IF_ERROR(vlm_json_parse(fragment, strlen(fragment), NULL, tokenizer->allocator,
                                     "class pipeline", &document));
  normalizer_release(tokenizer->normalizer);
  pre_tokenizer_release(tokenizer->pre_tokenizer);
  decoder_release(tokenizer->decoder);
  tokenizer->normalizer = NULL;
  tokenizer->pre_tokenizer = NULL;
  tokenizer->decoder = NULL;
  vlm_status status = load_component(tokenizer, document.root, "normalizer");
  if (!status) status = load_component(tokenizer, document.root, "pre_tokenizer");
  if (!status) status = load_component(tokenizer, document.root, "decoder");
  vlm_json_document_release(&document);
  return status;
}

/* Qwen2Tokenizer (tokenization_qwen2.py) builds its pipeline in code too:
 * NFC, the Qwen2 split regex, ByteLevel without regex (add_prefix_space from
 * the config, default false), a ByteLevel decoder; BPE without unk, fuse or
 * byte fallback. */
static vlm_status apply_qwen2_class(vlm_tokenizer *tokenizer, const vlm_json_value *config) {
  bool add_prefix_space = get_bool_or(config, "add_prefix_space", false);
  char fragment[1024];
  snprintf(fragment, sizeof(fragment),
           "{\"normalizer\": {\"type\": \"NFC\"}, \"pre_tokenizer\": {\"type\": \"Sequence\", "
           "\"pretokenizers\": [{\"type\": \"Split\", \"pattern\": {\"Regex\": "
           "\"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}| "
           "?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+\"}, "
           "\"behavior\": \"Isolated\", \"invert\": false}, {\"type\": \"ByteLevel\", "
           "\"add_prefix_space\": %s, \"trim_offsets\": true, \"use_regex\": false}]}, "
           "\"decoder\": {\"type\": \"ByteLevel\", \"add_prefix_space\": true, \"trim_offsets\": true, "
           "\"use_regex\": true}}",
           add_prefix_space ? "true" : "false");
  VLM_RETURN_IF_ERROR(replace_pipeline(tokenizer, fragment));
  tokenizer->model.unknown_id = -1;
  tokenizer->model.fuse_unknown = false;
  tokenizer->model.byte_fallback = false;
  return VLM_OK;
}

/* GemmaTokenizer (tokenization_gemma.py): spaces become ▁ in a Replace
 * normalizer, split after each space, BPE with byte fallback and fused
 * unknowns (unk_token from the config, default <unk>), and a decoder that
 * turns ▁ back into spaces. */
static vlm_status apply_gemma_class(vlm_tokenizer *tokenizer, const vlm_json_value *config) {
  VLM_RETURN_IF_ERROR(replace_pipeline(
      tokenizer,
      "{\"normalizer\": {\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"\xE2\x96\x81\"}, "
      "\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"String\": \" \"}, "
      "\"behavior\": \"MergedWithPrevious\", \"invert\": false}, "
      "\"decoder\": {\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Replace\", \"pattern\": "
      "{\"String\": \"\xE2\x96\x81\"}, \"content\": \" \"}, {\"type\": \"ByteFallback\"}, {\"type\": \"Fuse\"}]}}"));
  const vlm_json_value *unknown = config_token(config, "unk_token");
  tokenizer->model.unknown_id =
      unknown ? string_table_get(&tokenizer->model.vocabulary, unknown->as.string.chars, unknown->as.string.length)
              : string_table_get(&tokenizer->model.vocabulary, "<unk>", 5);
  tokenizer->model.fuse_unknown = true;
  tokenizer->model.byte_fallback = true;
  return VLM_OK;
}

static void mark_config_specials(vlm_tokenizer *tokenizer, const vlm_json_value *config) {
  static const char *keys[] = {"bos_token", "eos_token", "unk_token", "pad_token",
                               "mask_token", "sep_token", "cls_token"};
  for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
    int32_t id = config_token_id(tokenizer, config, keys[i]);
    if (id >= 0 && (size_t)id < tokenizer->id_count) tokenizer->id_special[id] = true;
  }
  const vlm_json_value *extra = vlm_json_object_get(config, "additional_special_tokens");
  for (size_t i = 0; extra && extra->type == VLM_JSON_ARRAY && i < extra->as.array.count; i++) {
    const vlm_json_value *item = &extra->as.array.items[i];
    if (item->type == VLM_JSON_OBJECT) item = vlm_json_object_get(item, "content");
    if (!vlm_json_is_string(item)) continue;
    int32_t id = vlm_tokenizer_token_to_id(tokenizer, item->as.string.chars, item->as.string.length);
    if (id >= 0 && (size_t)id < tokenizer->id_count) tokenizer->id_special[id] = true;
  }
}

/* AutoTokenizer.from_pretrained's class choice for a model directory
 * (transformers 5.23 models/auto/tokenization_auto.py): the class a
 * model_type registers (TOKENIZER_MAPPING_NAMES) and whether the model_type
 * is in MODELS_WITH_INCORRECT_HUB_TOKENIZER_CLASS are in its config record
 * (io/config_record.h). A model_type that registers nothing leaves the
 * hub's class. */
static bool is_generic_class(const char *name) {
  return !strcmp(name, "TokenizersBackend") || !strcmp(name, "PythonBackend") ||
         !strcmp(name, "PreTrainedTokenizerFast") || !strcmp(name, "MistralCommonBackend");
}

/* Equal ignoring a "Fast" suffix, as AutoTokenizer compares them. */
static bool same_class(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la >= 4 && !strcmp(a + la - 4, "Fast")) la -= 4;
  if (lb >= 4 && !strcmp(b + lb - 4, "Fast")) lb -= 4;
  return la == lb && !memcmp(a, b, la);
}

/* The class AutoTokenizer instantiates: the hub's (tokenizer_config.json's
 * tokenizer_class, else config.json's) unless the model_type registers a
 * different one; then the generic TokenizersBackend when the registered class
 * is generic, else the registered class for model types whose hub class is
 * known to be wrong and the hub's for the others. NULL: no class named. */
static const char *auto_tokenizer_class(const char *hub_class, const char *model_type,
                                        bool *out_hub_class_incorrect) {
  *out_hub_class_incorrect = false;
  const vlm_config_record *record = vlm_config_record_find(model_type);
  if (!record || !record->tokenizer_class) return hub_class;
  const char *registered = record->tokenizer_class;
  *out_hub_class_incorrect = record->hub_tokenizer_class_incorrect;
  if (!hub_class) return registered; /* type(config) in TOKENIZER_MAPPING */
  if (same_class(registered, hub_class)) return hub_class;
  if (is_generic_class(registered)) return "TokenizersBackend";
  return *out_hub_class_incorrect ? registered : hub_class;
}

static vlm_status apply_config(vlm_tokenizer *tokenizer, const vlm_json_value *config,
                               const vlm_tokenizer_options *options) {
  bool transformers_semantics = !options->tokenizers_library_semantics;
  tokenizer->special_ids.bos = config_token_id(tokenizer, config, "bos_token");
  tokenizer->special_ids.eos = config_token_id(tokenizer, config, "eos_token");
  tokenizer->special_ids.pad = config_token_id(tokenizer, config, "pad_token");
  tokenizer->special_ids.unk = config_token_id(tokenizer, config, "unk_token");
  const vlm_json_value *bos = config_token(config, "bos_token");
  if (bos && bos->as.string.length) {
    tokenizer->bos_token = vlm_arena_strndup(&tokenizer->arena, bos->as.string.chars,
                                             bos->as.string.length);
    if (!tokenizer->bos_token) return out_of_memory();
    tokenizer->bos_token_length = bos->as.string.length;
  }
  if (!transformers_semantics || !config) return VLM_OK;
  const char *hub_class = vlm_json_get_string(vlm_json_object_get(config, "tokenizer_class"));
  if (!hub_class) hub_class = options->model_tokenizer_class;
  bool hub_class_incorrect = false;
  const char *class_name = auto_tokenizer_class(hub_class, options->model_type, &hub_class_incorrect);
  bool llama = class_name && same_class(class_name, "LlamaTokenizer");
  /* A Llama class over a byte-level tokenizer.json falls back to the generic
   * TokenizersBackend, which keeps the file's pipeline and post-processor
   * (not for model types with a known-wrong hub class). */
  bool generic = !class_name || is_generic_class(class_name) ||
                 (llama && !hub_class_incorrect && is_byte_level(tokenizer));
  if (llama && !generic && tokenizer->model.kind == MODEL_BPE)
    VLM_RETURN_IF_ERROR(apply_llama_class(tokenizer, config));
  if (class_name && same_class(class_name, "Qwen2Tokenizer") && tokenizer->model.kind == MODEL_BPE)
    VLM_RETURN_IF_ERROR(apply_qwen2_class(tokenizer, config));
  if (class_name && same_class(class_name, "GemmaTokenizer") && tokenizer->model.kind == MODEL_BPE)
    VLM_RETURN_IF_ERROR(apply_gemma_class(tokenizer, config));
  /* add_bos_token / add_eos_token in tokenizer_config.json change nothing
   * in Transformers 5.23: the tokenizer.json post-processor decides (a file
   * without one adds no BOS even when the config asks for it). Checked
   * against AutoTokenizer with the flags on and off, with and without a
   * post-processor (tests/goldens/llama/plain is such a case). */
  mark_config_specials(tokenizer, config);
  /* GemmaTokenizer's constructor defaults mask_token to "<mask>". */
  if (class_name && strncmp(class_name, "GemmaTokenizer", 14) == 0) {
    int32_t id = vlm_tokenizer_token_to_id(tokenizer, "<mask>", 6);
    if (id >= 0 && (size_t)id < tokenizer->id_count) tokenizer->id_special[id] = true;
  }
  return VLM_OK;
}

/* ---- Entry point --------------------------------------------------------- */

static vlm_status load_component(vlm_tokenizer *tokenizer, const vlm_json_value *root,
                                 const char *key) {
  const vlm_json_value *json = vlm_json_object_get(root, key);
  if (!json || json->type == VLM_JSON_NULL) return VLM_OK;
  if (json->type != VLM_JSON_OBJECT) return VLM_ERROR(INVALID_ARGUMENT, "%s: expected an object", key);
  if (strcmp(key, "normalizer") == 0) {
    tokenizer_normalizer *normalizer = arena_array(tokenizer, 1, sizeof(*normalizer));
    if (!normalizer) return out_of_memory();
    tokenizer->normalizer = normalizer;
    return normalizer_from_json(tokenizer, json, key, normalizer);
  }
  if (strcmp(key, "pre_tokenizer") == 0) {
    tokenizer_pre_tokenizer *pre = arena_array(tokenizer, 1, sizeof(*pre));
    if (!pre) return out_of_memory();
    tokenizer->pre_tokenizer = pre;
    return pre_tokenizer_from_json(tokenizer, json, key, pre);
  }
  tokenizer_decoder *decoder = arena_array(tokenizer, 1, sizeof(*decoder));
  if (!decoder) return out_of_memory();
  tokenizer->decoder = decoder;
  return decoder_from_json(tokenizer, json, key, decoder);
}

vlm_status tokenizer_load(vlm_tokenizer *tokenizer, const vlm_json_value *root,
                          const vlm_json_value *config, const vlm_tokenizer_options *options) {
  if (!root || root->type != VLM_JSON_OBJECT)
    return VLM_ERROR(INVALID_ARGUMENT, "expected a JSON object at the top level");
  if (config && config->type != VLM_JSON_OBJECT) config = NULL;
  const vlm_json_value *truncation = vlm_json_object_get(root, "truncation");
  if (truncation && truncation->type != VLM_JSON_NULL)
    return VLM_ERROR(UNIMPLEMENTED, "truncation: only null is supported");
  VLM_RETURN_IF_ERROR(load_model(tokenizer, vlm_json_object_get(root, "model")));
  VLM_RETURN_IF_ERROR(load_component(tokenizer, root, "normalizer"));
  VLM_RETURN_IF_ERROR(load_component(tokenizer, root, "pre_tokenizer"));
  VLM_RETURN_IF_ERROR(load_component(tokenizer, root, "decoder"));
  VLM_RETURN_IF_ERROR(load_post_processor(tokenizer, vlm_json_object_get(root, "post_processor"),
                                          "post_processor"));
  VLM_RETURN_IF_ERROR(load_added_tokens(tokenizer, vlm_json_object_get(root, "added_tokens")));
  VLM_RETURN_IF_ERROR(build_id_table(tokenizer));
  VLM_RETURN_IF_ERROR(apply_config(tokenizer, config, options));
  /* After apply_config: a class override may have replaced the normalizer. */
  return build_tries(tokenizer);
}
