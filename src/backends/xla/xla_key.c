#include "backends/xla/xla_key.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "io/json.h"

#define SIDECAR_FORMAT "vlm-xla-artifact/1"
#define SIDECAR_MAX_BYTES (1u << 20)

uint64_t vlm_fnv1a64(const void *data, size_t length, uint64_t seed) {
  const unsigned char *bytes = data;
  uint64_t hash = seed;
  for (size_t i = 0; i < length; i++) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

static vlm_xla_key_field *find_field(vlm_xla_key *key, const char *name) {
  for (int i = 0; i < key->field_count; i++)
    if (strcmp(key->fields[i].name, name) == 0) return &key->fields[i];
  return NULL;
}

vlm_status vlm_xla_key_set(vlm_xla_key *key, const char *name, const char *format, ...) {
  if (strlen(name) >= VLM_XLA_KEY_NAME_LENGTH)
    return VLM_ERROR(INTERNAL, "compatibility key field name '%s' is too long", name);
  vlm_xla_key_field *field = find_field(key, name);
  if (!field) {
    if (key->field_count == VLM_XLA_KEY_MAX_FIELDS)
      return VLM_ERROR(INTERNAL, "compatibility key: too many fields (adding '%s')", name);
    field = &key->fields[key->field_count++];
    snprintf(field->name, sizeof(field->name), "%s", name);
  }
  va_list args;
  va_start(args, format);
  int length = vsnprintf(field->value, sizeof(field->value), format, args);
  va_end(args);
  if (length < 0 || (size_t)length >= sizeof(field->value))
    return VLM_ERROR(INVALID_ARGUMENT, "compatibility key field '%s' is longer than %d bytes", name,
                     VLM_XLA_KEY_VALUE_LENGTH - 1);
  return VLM_OK;
}

const char *vlm_xla_key_get(const vlm_xla_key *key, const char *name) {
  vlm_xla_key_field *field = find_field((vlm_xla_key *)key, name);
  return field ? field->value : NULL;
}

static int compare_field_names(const void *a, const void *b) {
  return strcmp(((const vlm_xla_key_field *)a)->name, ((const vlm_xla_key_field *)b)->name);
}

uint64_t vlm_xla_key_hash(const vlm_xla_key *key) {
  vlm_xla_key sorted = *key;
  qsort(sorted.fields, (size_t)sorted.field_count, sizeof(sorted.fields[0]), compare_field_names);
  uint64_t hash = VLM_FNV1A64_SEED;
  for (int i = 0; i < sorted.field_count; i++) {
    /* NUL separators: "ab"+"c" and "a"+"bc" hash differently. */
    hash = vlm_fnv1a64(sorted.fields[i].name, strlen(sorted.fields[i].name) + 1, hash);
    hash = vlm_fnv1a64(sorted.fields[i].value, strlen(sorted.fields[i].value) + 1, hash);
  }
  return hash;
}

void vlm_xla_key_hash_hex(const vlm_xla_key *key, char out[17]) {
  snprintf(out, 17, "%016llx", (unsigned long long)vlm_xla_key_hash(key));
}

vlm_status vlm_xla_key_check(const vlm_xla_key *expected, const vlm_xla_key *actual,
                             const char *what) {
  for (int i = 0; i < expected->field_count; i++) {
    const vlm_xla_key_field *field = &expected->fields[i];
    const char *stored = vlm_xla_key_get(actual, field->name);
    if (!stored)
      return VLM_ERROR(FAILED_PRECONDITION,
                       "%s: incompatible artifact: its compatibility key has no '%s' (expected "
                       "'%s'); recompile with `vlm compile`",
                       what, field->name, field->value);
    if (strcmp(stored, field->value) != 0)
      return VLM_ERROR(FAILED_PRECONDITION,
                       "%s: incompatible artifact: it was compiled for %s='%s', this model and "
                       "configuration need %s='%s'; recompile with `vlm compile`",
                       what, field->name, stored, field->name, field->value);
  }
  for (int i = 0; i < actual->field_count; i++)
    if (!vlm_xla_key_get(expected, actual->fields[i].name))
      return VLM_ERROR(FAILED_PRECONDITION,
                       "%s: incompatible artifact: its compatibility key has a field '%s' this "
                       "version of vlm does not know; recompile with `vlm compile`",
                       what, actual->fields[i].name);
  return VLM_OK;
}

vlm_status vlm_xla_key_write_json(const vlm_xla_key *key, const char *artifact_name,
                                  const char *path) {
  char hash[17];
  vlm_xla_key_hash_hex(key, hash);
  vlm_string_builder json = {0};
  vlm_sb_appendf(&json, "{\n  \"format\": \"%s\",\n  \"key_hash\": \"%s\",\n  \"artifact\": ",
                 SIDECAR_FORMAT, hash);
  vlm_sb_append_json_string(&json, artifact_name, strlen(artifact_name));
  vlm_sb_append_literal(&json, ",\n  \"key\": {");
  for (int i = 0; i < key->field_count; i++) {
    vlm_sb_appendf(&json, "%s", i ? ",\n    " : "\n    ");
    vlm_sb_append_json_string(&json, key->fields[i].name, strlen(key->fields[i].name));
    vlm_sb_append_literal(&json, ": ");
    vlm_sb_append_json_string(&json, key->fields[i].value, strlen(key->fields[i].value));
  }
  vlm_sb_append_literal(&json, "\n  }\n}\n");
  char *text = vlm_sb_finish(&json);
  if (!text) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory writing %s", path);
  FILE *file = fopen(path, "w");
  size_t length = strlen(text);
  bool written = file && fwrite(text, 1, length, file) == length;
  if (file && fclose(file) != 0) written = false;
  free(text);
  return written ? VLM_OK : VLM_ERROR(IO, "cannot write %s", path);
}

static vlm_status read_fields(const vlm_json_value *object, const char *path, vlm_xla_key *out_key) {
  if (!object || object->type != VLM_JSON_OBJECT)
    return VLM_ERROR(DATA_LOSS, "%s: \"key\" is missing or not an object", path);
  for (size_t i = 0; i < object->as.object.count; i++) {
    const vlm_json_member *member = &object->as.object.members[i];
    const char *value = vlm_json_get_string(&member->value);
    if (!value) return VLM_ERROR(DATA_LOSS, "%s: key field \"%s\" is not a string", path, member->key);
    VLM_RETURN_IF_ERROR(vlm_status_annotate(vlm_xla_key_set(out_key, member->key, "%s", value), "%s: ", path));
  }
  return VLM_OK;
}

vlm_status vlm_xla_key_read_json(const char *path, vlm_xla_key *out_key) {
  memset(out_key, 0, sizeof(*out_key));
  vlm_json_document document;
  VLM_RETURN_IF_ERROR(vlm_json_parse_file(path, SIDECAR_MAX_BYTES, NULL, &document));
  const vlm_json_value *root = document.root;
  vlm_status status = VLM_OK;
  if (!root || root->type != VLM_JSON_OBJECT ||
      !vlm_json_string_equals(vlm_json_object_get(root, "format"), SIDECAR_FORMAT))
    status = VLM_ERROR(DATA_LOSS, "%s: not a vlm xla artifact sidecar (format \"%s\" expected)", path,
                       SIDECAR_FORMAT);
  if (!status) status = read_fields(vlm_json_object_get(root, "key"), path, out_key);
  if (!status) {
    /* The stored hash must be the hash of the stored fields: a hand-edited
     * sidecar is refused rather than trusted. */
    char hash[17];
    vlm_xla_key_hash_hex(out_key, hash);
    if (!vlm_json_string_equals(vlm_json_object_get(root, "key_hash"), hash))
      status = VLM_ERROR(DATA_LOSS, "%s: key_hash does not match the key's fields", path);
  }
  vlm_json_document_release(&document);
  return status;
}
