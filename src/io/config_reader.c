#include "io/config_reader.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "io/file.h"

/* ---------------------------------------------------------------------- */
/* Storage                                                                 */
/* ---------------------------------------------------------------------- */

static vlm_status out_of_memory(void) {
  return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory while reading a config");
}

vlm_status vlm_config_storage_create(const vlm_allocator *allocator,
                                     vlm_config_storage **out_storage) {
  *out_storage = NULL;
  vlm_config_storage *storage =
      vlm_allocate_zeroed(allocator, sizeof(*storage), _Alignof(vlm_config_storage));
  if (!storage) return out_of_memory();
  storage->allocator = allocator;
  vlm_arena_init(&storage->arena, allocator, 16 * 1024);
  *out_storage = storage;
  return VLM_OK;
}

void vlm_config_storage_release(vlm_config_storage *storage) {
  if (!storage) return;
  for (size_t i = 0; i < storage->document_count; i++)
    vlm_json_document_release(&storage->documents[i]);
  vlm_arena_reset(&storage->arena);
  vlm_release(storage->allocator, storage);
}

vlm_status vlm_config_storage_parse(vlm_config_storage *storage, const char *text,
                                    size_t length, const char *source_name,
                                    const vlm_json_value **out_root) {
  if (storage->document_count == VLM_CONFIG_MAX_DOCUMENTS)
    return VLM_ERROR(INTERNAL, "%s: too many JSON documents for one config", source_name);
  vlm_json_limits limits = {.max_depth = 64, .max_input_bytes = VLM_CONFIG_MAX_FILE_BYTES};
  vlm_json_document *document = &storage->documents[storage->document_count];
  VLM_RETURN_IF_ERROR(
      vlm_json_parse(text, length, &limits, storage->allocator, source_name, document));
  storage->document_count++;
  *out_root = document->root;
  return VLM_OK;
}

void *vlm_config_storage_allocate(vlm_config_storage *storage, size_t size, size_t alignment) {
  return vlm_arena_allocate(&storage->arena, size ? size : 1, alignment);
}

const char *vlm_config_storage_copy_string(vlm_config_storage *storage, const char *text) {
  return vlm_arena_strdup(&storage->arena, text);
}

/* ---------------------------------------------------------------------- */
/* Class tables                                                            */
/* ---------------------------------------------------------------------- */

static const vlm_json_value *optional_object(const vlm_json_value *table, const char *key) {
  const vlm_json_value *value = vlm_json_object_get(table, key);
  return value && value->type == VLM_JSON_OBJECT ? value : NULL;
}

vlm_status vlm_config_class_parse(vlm_config_storage *storage, const char *table_json,
                                  vlm_config_class *out_class) {
  memset(out_class, 0, sizeof(*out_class));
  const vlm_json_value *table = NULL;
  VLM_RETURN_IF_ERROR(vlm_config_storage_parse(storage, table_json, strlen(table_json),
                                               "defaults table", &table));
  out_class->class_name = vlm_json_get_string(vlm_json_object_get(table, "class"));
  out_class->model_type = vlm_json_get_string(vlm_json_object_get(table, "model_type"));
  out_class->fields = optional_object(table, "fields");
  out_class->attribute_map = optional_object(table, "attribute_map");
  out_class->legacy_keys = optional_object(table, "legacy_keys");
  out_class->sub_configs = optional_object(table, "sub_configs");
  out_class->default_theta = vlm_json_object_get(table, "default_theta");
  if (!out_class->class_name || !out_class->fields)
    return VLM_ERROR(INTERNAL, "defaults table without class or fields");
  return VLM_OK;
}

vlm_status vlm_config_class_load(vlm_config_storage *storage, const char *model_type,
                                 vlm_config_class *out_class) {
  const char *table = vlm_config_defaults_json(model_type);
  if (!table) return VLM_ERROR(INTERNAL, "no defaults table for model_type \"%s\"", model_type);
  return vlm_config_class_parse(storage, table, out_class);
}

bool vlm_config_class_has_field(const vlm_config_class *config_class, const char *key) {
  return vlm_json_object_get(config_class->fields, key) != NULL;
}

/* ---------------------------------------------------------------------- */
/* Merging                                                                 */
/* ---------------------------------------------------------------------- */

/* Members being assembled; capacity is fixed up front from the inputs. */
typedef struct member_list {
  vlm_json_member *members;
  size_t count, capacity;
} member_list;

static size_t object_size(const vlm_json_value *object) {
  return object && object->type == VLM_JSON_OBJECT ? object->as.object.count : 0;
}

static void member_list_set(member_list *list, const char *key, size_t key_length,
                            const vlm_json_value *value) {
  for (size_t i = 0; i < list->count; i++) {
    vlm_json_member *member = &list->members[i];
    if (member->key_length == key_length && memcmp(member->key, key, key_length) == 0) {
      member->value = *value;
      return;
    }
  }
  /* Capacity covers every input member, so this cannot overflow. */
  list->members[list->count++] = (vlm_json_member){key, key_length, *value};
}

/* The field an aliased key sets, or NULL for a plain key. */
static const char *alias_target(const vlm_config_class *config_class, const char *key) {
  const char *target = vlm_json_get_string(vlm_json_object_get(config_class->attribute_map, key));
  if (!target) target = vlm_json_get_string(vlm_json_object_get(config_class->legacy_keys, key));
  return target;
}

static void overlay(member_list *list, const vlm_config_class *config_class,
                    const vlm_json_value *object, bool aliases) {
  for (size_t i = 0; i < object_size(object); i++) {
    const vlm_json_member *member = &object->as.object.members[i];
    const char *target = config_class ? alias_target(config_class, member->key) : NULL;
    if (aliases && target) member_list_set(list, target, strlen(target), &member->value);
    if (!aliases && !target) member_list_set(list, member->key, member->key_length, &member->value);
  }
}

static vlm_status member_list_create(vlm_config_storage *storage, size_t capacity,
                                     member_list *out_list) {
  out_list->count = 0;
  out_list->capacity = capacity;
  out_list->members = vlm_config_storage_allocate(
      storage, capacity * sizeof(vlm_json_member), _Alignof(vlm_json_member));
  return out_list->members ? VLM_OK : out_of_memory();
}

static vlm_status member_list_finish(vlm_config_storage *storage, const member_list *list,
                                     const vlm_json_value **out_object) {
  vlm_json_value *object =
      vlm_config_storage_allocate(storage, sizeof(*object), _Alignof(vlm_json_value));
  if (!object) return out_of_memory();
  object->type = VLM_JSON_OBJECT;
  object->as.object.members = list->members;
  object->as.object.count = list->count;
  *out_object = object;
  return VLM_OK;
}

/* Merging is quadratic in the key count (small real sections), so an
 * untrusted section with a huge number of keys is refused instead. */
static vlm_status check_key_count(const char *source_name, const char *key_prefix, size_t count) {
  if (count <= VLM_CONFIG_MAX_SECTION_KEYS) return VLM_OK;
  /* The prefix ends in '.'; name the section without it. */
  int name_length = key_prefix[0] ? (int)strlen(key_prefix) - 1 : 13;
  return VLM_ERROR(OUT_OF_RANGE, "%s: %.*s has %zu keys, more than the %d a config section may have",
                   source_name, name_length, key_prefix[0] ? key_prefix : "the top level",
                   count, VLM_CONFIG_MAX_SECTION_KEYS);
}

vlm_status vlm_config_section_merge(vlm_config_storage *storage,
                                    const vlm_config_class *config_class,
                                    const vlm_json_value *init_kwargs,
                                    const vlm_json_value *file_object,
                                    const char *source_name, const char *key_prefix,
                                    vlm_config_section *out_section) {
  *out_section = (vlm_config_section){NULL, source_name, key_prefix, storage};
  VLM_RETURN_IF_ERROR(check_key_count(source_name, key_prefix, object_size(file_object)));
  member_list list;
  VLM_RETURN_IF_ERROR(member_list_create(
      storage,
      object_size(config_class->fields) + object_size(init_kwargs) + object_size(file_object),
      &list));
  overlay(&list, NULL, config_class->fields, false);
  overlay(&list, NULL, init_kwargs, false);
  overlay(&list, config_class, file_object, false);
  overlay(&list, config_class, file_object, true);
  return member_list_finish(storage, &list, &out_section->object);
}

vlm_status vlm_config_object_create(vlm_config_storage *storage,
                                    const vlm_json_member *members, size_t count,
                                    const vlm_json_value **out_object) {
  VLM_RETURN_IF_ERROR(check_key_count("config", "", count));
  member_list list;
  VLM_RETURN_IF_ERROR(member_list_create(storage, count, &list));
  for (size_t i = 0; i < count; i++)
    member_list_set(&list, members[i].key, members[i].key_length, &members[i].value);
  return member_list_finish(storage, &list, out_object);
}

vlm_status vlm_config_section_set(vlm_config_section *section, const char *key,
                                  const vlm_json_value *value) {
  const vlm_json_value *old = section->object;
  member_list list;
  VLM_RETURN_IF_ERROR(member_list_create(section->storage, object_size(old) + 1, &list));
  overlay(&list, NULL, old, false);
  const char *copied_key = vlm_config_storage_copy_string(section->storage, key);
  if (!copied_key) return out_of_memory();
  member_list_set(&list, copied_key, strlen(copied_key), value);
  return member_list_finish(section->storage, &list, &section->object);
}

/* ---------------------------------------------------------------------- */
/* Errors                                                                  */
/* ---------------------------------------------------------------------- */

const vlm_json_value *vlm_config_get(const vlm_config_section *section, const char *key) {
  const vlm_json_value *value = vlm_json_object_get(section->object, key);
  return value && value->type != VLM_JSON_NULL ? value : NULL;
}

/* A short rendering of an offending value: long strings and containers are
 * cut so one bad key cannot flood a log line. */
static void describe_value(const vlm_json_value *value, char *buffer, size_t size) {
  if (!value) {
    snprintf(buffer, size, "nothing (the key is missing)");
    return;
  }
  vlm_string_builder builder = {0};
  vlm_sb_append_json_value(&builder, value);
  char *text = vlm_sb_finish(&builder);
  if (!text) {
    snprintf(buffer, size, "a %s", vlm_json_type_name(value->type));
    return;
  }
  if (strlen(text) > 60)
    snprintf(buffer, size, "%.60s...", text);
  else
    snprintf(buffer, size, "%s", text);
  free(text);
}

vlm_status vlm_config_type_error(const vlm_config_section *section, const char *key,
                                 const char *expectation, const vlm_json_value *value) {
  char described[80];
  describe_value(value, described, sizeof(described));
  return VLM_ERROR(INVALID_ARGUMENT, "%s: %s%s must be %s, got %s", section->source_name,
                   section->key_prefix, key, expectation, described);
}

vlm_status vlm_config_error(const vlm_config_section *section, vlm_status_code code,
                            const char *key, const char *format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  /* "layer_types[3] is ..." reads better without a space before the index. */
  const char *separator = message[0] == '[' ? "" : " ";
  return vlm_status_make(code, "%s: %s%s%s%s", section->source_name, section->key_prefix, key,
                         separator, message);
}

/* ---------------------------------------------------------------------- */
/* Typed readers                                                           */
/* ---------------------------------------------------------------------- */

static void integer_expectation(int64_t minimum, int64_t maximum, char *buffer, size_t size) {
  if (minimum == 1)
    snprintf(buffer, size, "a positive integer");
  else if (minimum == 0)
    snprintf(buffer, size, "a non-negative integer");
  else
    snprintf(buffer, size, "an integer in [%lld, %lld]", (long long)minimum,
             (long long)maximum);
}

static vlm_status convert_int(const vlm_config_section *section, const char *key,
                              const vlm_json_value *value, int64_t minimum, int64_t maximum,
                              int64_t *out) {
  char expectation[96];
  integer_expectation(minimum, maximum, expectation, sizeof(expectation));
  int64_t integer = 0;
  /* JSON true/false are not numbers here, unlike Python's bool-is-int. */
  if (!vlm_json_get_int(value, &integer) || integer < minimum)
    return vlm_config_type_error(section, key, expectation, value);
  if (integer > maximum) {
    size_t length = strlen(expectation);
    snprintf(expectation + length, sizeof(expectation) - length, " no larger than %lld",
             (long long)maximum);
    return vlm_config_type_error(section, key, expectation, value);
  }
  *out = integer;
  return VLM_OK;
}

vlm_status vlm_config_read_int(const vlm_config_section *section, const char *key,
                               int64_t minimum, int64_t maximum, int64_t *out) {
  const vlm_json_value *value = vlm_json_object_get(section->object, key);
  return convert_int(section, key, value, minimum, maximum, out);
}

vlm_status vlm_config_read_int_or(const vlm_config_section *section, const char *key,
                                  int64_t minimum, int64_t maximum, int64_t fallback,
                                  int64_t *out) {
  const vlm_json_value *value = vlm_config_get(section, key);
  if (!value) {
    *out = fallback;
    return VLM_OK;
  }
  return convert_int(section, key, value, minimum, maximum, out);
}

static vlm_status convert_double(const vlm_config_section *section, const char *key,
                                 const vlm_json_value *value, double minimum, double maximum,
                                 double *out) {
  double number = 0;
  if (!vlm_json_get_double(value, &number) || !isfinite(number) || number < minimum ||
      number > maximum) {
    char expectation[96];
    snprintf(expectation, sizeof(expectation), "a number in [%g, %g]", minimum, maximum);
    return vlm_config_type_error(section, key, expectation, value);
  }
  *out = number;
  return VLM_OK;
}

vlm_status vlm_config_read_double(const vlm_config_section *section, const char *key,
                                  double minimum, double maximum, double *out) {
  const vlm_json_value *value = vlm_json_object_get(section->object, key);
  return convert_double(section, key, value, minimum, maximum, out);
}

vlm_status vlm_config_read_double_or(const vlm_config_section *section, const char *key,
                                     double minimum, double maximum, double fallback,
                                     double *out) {
  const vlm_json_value *value = vlm_config_get(section, key);
  if (!value) {
    *out = fallback;
    return VLM_OK;
  }
  return convert_double(section, key, value, minimum, maximum, out);
}

vlm_status vlm_config_read_bool_or(const vlm_config_section *section, const char *key,
                                   bool fallback, bool *out) {
  const vlm_json_value *value = vlm_config_get(section, key);
  if (!value) {
    *out = fallback;
    return VLM_OK;
  }
  if (!vlm_json_get_bool(value, out))
    return vlm_config_type_error(section, key, "true or false", value);
  return VLM_OK;
}

vlm_status vlm_config_read_string_or(const vlm_config_section *section, const char *key,
                                     const char *fallback, const char **out) {
  const vlm_json_value *value = vlm_config_get(section, key);
  if (!value) {
    *out = fallback;
    return VLM_OK;
  }
  if (value->type != VLM_JSON_STRING || value->as.string.length > VLM_CONFIG_MAX_STRING_LENGTH ||
      strlen(value->as.string.chars) != value->as.string.length) {
    char expectation[64];
    snprintf(expectation, sizeof(expectation), "a string of at most %d bytes",
             VLM_CONFIG_MAX_STRING_LENGTH);
    return vlm_config_type_error(section, key, expectation, value);
  }
  *out = value->as.string.chars;
  return VLM_OK;
}

static const int64_t max_token_id = INT64_C(2147483647);

vlm_status vlm_config_read_token_id(const vlm_config_section *section, const char *key,
                                    int64_t *out) {
  /* -1 is how some configs spell "no pad token"; it means the same as null. */
  return vlm_config_read_int_or(section, key, -1, max_token_id, -1, out);
}

vlm_status vlm_config_read_token_ids(const vlm_config_section *section, const char *key,
                                     vlm_token_id_list *out) {
  memset(out, 0, sizeof(*out));
  const vlm_json_value *value = vlm_config_get(section, key);
  if (!value) return VLM_OK;
  if (value->type != VLM_JSON_ARRAY) {
    VLM_RETURN_IF_ERROR(convert_int(section, key, value, 0, max_token_id, &out->ids[0]));
    out->count = 1;
    return VLM_OK;
  }
  if (value->as.array.count > VLM_CONFIG_MAX_TOKEN_IDS)
    return vlm_config_error(section, VLM_STATUS_OUT_OF_RANGE, key,
                            "lists %zu token ids, more than the %d supported",
                            value->as.array.count, VLM_CONFIG_MAX_TOKEN_IDS);
  for (size_t i = 0; i < value->as.array.count; i++) {
    int64_t id = 0;
    if (!vlm_json_get_int(&value->as.array.items[i], &id) || id < 0 || id > max_token_id)
      return vlm_config_type_error(section, key, "a token id or a list of token ids", value);
    out->ids[out->count++] = id;
  }
  return VLM_OK;
}

vlm_status vlm_config_read_index_list(const vlm_config_section *section, const char *key,
                                      int64_t minimum, int64_t maximum, bool accept_scalar,
                                      vlm_index_list *out, bool *out_was_list) {
  memset(out, 0, sizeof(*out));
  if (out_was_list) *out_was_list = false;
  const vlm_json_value *value = vlm_config_get(section, key);
  if (!value) return VLM_OK;
  if (value->type != VLM_JSON_ARRAY && accept_scalar) {
    VLM_RETURN_IF_ERROR(convert_int(section, key, value, minimum, maximum, &out->values[0]));
    out->count = 1;
    return VLM_OK;
  }
  if (value->type != VLM_JSON_ARRAY)
    return vlm_config_type_error(section, key, "a list of integers", value);
  if (value->as.array.count > VLM_CONFIG_MAX_INDEXES)
    return vlm_config_error(section, VLM_STATUS_OUT_OF_RANGE, key,
                            "lists %zu entries, more than the %d supported",
                            value->as.array.count, VLM_CONFIG_MAX_INDEXES);
  for (size_t i = 0; i < value->as.array.count; i++) {
    int64_t entry = 0;
    if (!vlm_json_get_int(&value->as.array.items[i], &entry) || entry < minimum ||
        entry > maximum) {
      char expectation[96];
      snprintf(expectation, sizeof(expectation), "a list of integers in [%lld, %lld]",
               (long long)minimum, (long long)maximum);
      return vlm_config_type_error(section, key, expectation, value);
    }
    out->values[out->count++] = entry;
  }
  if (out_was_list) *out_was_list = true;
  return VLM_OK;
}

vlm_status vlm_config_read_dtype(const vlm_config_section *section, vlm_dtype *out) {
  /* PreTrainedConfig.__post_init__: a legacy torch_dtype only fills an unset
   * dtype. */
  const char *key = vlm_config_get(section, "dtype") ? "dtype" : "torch_dtype";
  const char *name = NULL;
  VLM_RETURN_IF_ERROR(vlm_config_read_string_or(section, key, NULL, &name));
  *out = VLM_DTYPE_INVALID;
  if (!name) return VLM_OK;
  *out = vlm_dtype_from_torch_name(name);
  if (*out == VLM_DTYPE_INVALID)
    return vlm_config_type_error(section, key, "a torch dtype name such as \"bfloat16\"",
                                 vlm_config_get(section, key));
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* Files                                                                   */
/* ---------------------------------------------------------------------- */

vlm_status vlm_config_read_file(const char *model_dir, const char *file_name, bool optional,
                                char **out_text, size_t *out_length, char **out_path) {
  *out_text = NULL;
  *out_length = 0;
  *out_path = vlm_path_join(model_dir, file_name);
  if (!*out_path) return out_of_memory();
  vlm_status status =
      vlm_file_read_all(*out_path, VLM_CONFIG_MAX_FILE_BYTES, out_text, out_length);
  if (status && optional && vlm_status_code_of(status) == VLM_STATUS_NOT_FOUND) {
    vlm_status_free(status);
    return VLM_OK;
  }
  return status;
}
