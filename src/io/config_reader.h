/* Internal machinery shared by the config parsers (config.c, config_text.c,
 * config_encoders.c, generation_config.c, processor_config.c): the storage a
 * parsed config owns, the Transformers class descriptions of the config
 * records (io/config_record.h), the defaults-then-file merge, and typed
 * readers whose errors name the file and the key path. */
#ifndef VLM_IO_CONFIG_READER_H
#define VLM_IO_CONFIG_READER_H

#include "core/alloc.h"
#include "io/config.h"
#include "io/json.h"

/* The file plus the class tables a config needs, with room to spare. */
#define VLM_CONFIG_MAX_DOCUMENTS 16
/* Keys one section may have (real ones have well under 200). */
#define VLM_CONFIG_MAX_SECTION_KEYS 4096

struct vlm_config_storage {
  const vlm_allocator *allocator;
  vlm_arena arena; /* merged objects, per-layer arrays, copied strings */
  vlm_json_document documents[VLM_CONFIG_MAX_DOCUMENTS];
  size_t document_count;
};

vlm_status vlm_config_storage_create(const vlm_allocator *allocator,
                                     vlm_config_storage **out_storage);
void vlm_config_storage_release(vlm_config_storage *storage);
/* Parses JSON into a document the storage owns. */
vlm_status vlm_config_storage_parse(vlm_config_storage *storage, const char *text,
                                    size_t length, const char *source_name,
                                    const vlm_json_value **out_root);
/* Arena memory; NULL when out of memory. */
void *vlm_config_storage_allocate(vlm_config_storage *storage, size_t size, size_t alignment);
/* A copy of `text` in the storage, or NULL when out of memory. */
const char *vlm_config_storage_copy_string(vlm_config_storage *storage, const char *text);

/* One class's defaults table (io/config_record.h), parsed. */
typedef struct vlm_config_class {
  const char *class_name;
  const char *model_type;
  const vlm_json_value *fields;
  const vlm_json_value *attribute_map; /* may be NULL */
  const vlm_json_value *legacy_keys;   /* may be NULL */
  const vlm_json_value *sub_configs;   /* may be NULL */
  const vlm_json_value *default_theta; /* number, {"global","local"}, or NULL */
} vlm_config_class;

vlm_status vlm_config_class_parse(vlm_config_storage *storage, const char *table_json,
                                  vlm_config_class *out_class);
/* Looks the model type up in vlm_config_defaults_json. */
vlm_status vlm_config_class_load(vlm_config_storage *storage, const char *model_type,
                                 vlm_config_class *out_class);
/* True when the class declares `key` as a field. */
bool vlm_config_class_has_field(const vlm_config_class *config_class, const char *key);

/* A merged section and where its keys came from, for error messages. */
typedef struct vlm_config_section {
  const vlm_json_value *object;
  const char *source_name; /* "config.json" or a path */
  const char *key_prefix;  /* "text_config." or "" */
  vlm_config_storage *storage;
} vlm_config_section;

/* Builds a section: the class's fields, overlaid by `init_kwargs` (may be
 * NULL), overlaid by the file's object (may be NULL), key by key at the top
 * level. File keys named in attribute_map or legacy_keys set the field they
 * name, after the plain keys, as Transformers applies them after the
 * dataclass fields. */
vlm_status vlm_config_section_merge(vlm_config_storage *storage,
                                    const vlm_config_class *config_class,
                                    const vlm_json_value *init_kwargs,
                                    const vlm_json_value *file_object,
                                    const char *source_name, const char *key_prefix,
                                    vlm_config_section *out_section);
/* An object of the given members (shallow copies), for sections assembled
 * in code. */
vlm_status vlm_config_object_create(vlm_config_storage *storage,
                                    const vlm_json_member *members, size_t count,
                                    const vlm_json_value **out_object);
/* Replaces or appends one member of a section's object. */
vlm_status vlm_config_section_set(vlm_config_section *section, const char *key,
                                  const vlm_json_value *value);

/* The value at `key`, or NULL when absent or null. */
const vlm_json_value *vlm_config_get(const vlm_config_section *section, const char *key);
/* "<source>: <prefix><key> must be <expectation>, got <value>". */
vlm_status vlm_config_type_error(const vlm_config_section *section, const char *key,
                                 const char *expectation, const vlm_json_value *value);
/* "<source>: <prefix><key> <message>" with printf formatting. */
vlm_status vlm_config_error(const vlm_config_section *section, vlm_status_code code,
                            const char *key, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

/* Typed readers. The plain forms require a non-null value; the _or forms
 * return `fallback` for an absent or null one. */
vlm_status vlm_config_read_int(const vlm_config_section *section, const char *key,
                               int64_t minimum, int64_t maximum, int64_t *out);
vlm_status vlm_config_read_int_or(const vlm_config_section *section, const char *key,
                                  int64_t minimum, int64_t maximum, int64_t fallback,
                                  int64_t *out);
vlm_status vlm_config_read_double(const vlm_config_section *section, const char *key,
                                  double minimum, double maximum, double *out);
vlm_status vlm_config_read_double_or(const vlm_config_section *section, const char *key,
                                     double minimum, double maximum, double fallback,
                                     double *out);
vlm_status vlm_config_read_bool_or(const vlm_config_section *section, const char *key,
                                   bool fallback, bool *out);
/* Strings are refused past VLM_CONFIG_MAX_STRING_LENGTH or with a NUL. */
vlm_status vlm_config_read_string_or(const vlm_config_section *section, const char *key,
                                     const char *fallback, const char **out);
/* A token id: a non-negative integer below 2^31; absent, null or -1 give -1. */
vlm_status vlm_config_read_token_id(const vlm_config_section *section, const char *key,
                                    int64_t *out);
/* An int or a list of ints (eos_token_id); absent or null give an empty list. */
vlm_status vlm_config_read_token_ids(const vlm_config_section *section, const char *key,
                                     vlm_token_id_list *out);
/* A list of integers in [minimum, maximum]; a bare integer is accepted as a
 * one-element list when `accept_scalar`. Absent or null give an empty list. */
vlm_status vlm_config_read_index_list(const vlm_config_section *section, const char *key,
                                      int64_t minimum, int64_t maximum, bool accept_scalar,
                                      vlm_index_list *out, bool *out_was_list);
/* dtype, or the legacy torch_dtype when dtype is absent. */
vlm_status vlm_config_read_dtype(const vlm_config_section *section, vlm_dtype *out);

/* Reads a whole file into a malloc'd buffer; *out_text is NULL when the
 * file does not exist (and `optional`). */
vlm_status vlm_config_read_file(const char *model_dir, const char *file_name, bool optional,
                                char **out_text, size_t *out_length, char **out_path);

#endif
