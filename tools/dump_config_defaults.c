/* vlm-dump-config-defaults: prints vlm's tables of Transformers defaults
 * (the config records of src/io/configs) as one JSON object, so that
 * tools/oracle/check_config_defaults.py can compare every field with the
 * pinned Transformers classes. A development tool, not part of `vlm`:
 *
 *   {"models": {"llama": {...}, ...}, "image_processors": {...},
 *    "processors": {...}, "generation": {...},
 *    "tokenizers": {"qwen2": {"class": "Qwen2Tokenizer",
 *                             "hub_class_incorrect": true}, ...}}
 * where "tokenizers" holds every record's tokenizer registration (class
 * null when it registers none). */
#include <stdio.h>

#include "io/config.h"
#include "io/config_record.h"

static void print_classes(const char *key, vlm_class_kind kind) {
  printf("  \"%s\": {", key);
  for (size_t i = 0; i < vlm_class_defaults_count(kind); i++) {
    const vlm_class_defaults *entry = vlm_class_defaults_at(kind, i);
    printf("%s\n    \"%s\": %s", i ? "," : "", entry->class_name, entry->defaults);
  }
  printf("\n  },\n");
}

int main(void) {
  printf("{\n  \"models\": {");
  for (size_t i = 0; i < vlm_config_record_count(); i++) {
    const vlm_config_record *record = vlm_config_record_at(i);
    printf("%s\n    \"%s\": %s", i ? "," : "", record->model_type, record->defaults);
  }
  printf("\n  },\n");
  print_classes("image_processors", VLM_CLASS_IMAGE_PROCESSOR);
  print_classes("processors", VLM_CLASS_PROCESSOR);
  printf("  \"generation\": %s,\n  \"tokenizers\": {", vlm_generation_defaults_json());
  for (size_t i = 0; i < vlm_config_record_count(); i++) {
    const vlm_config_record *record = vlm_config_record_at(i);
    printf("%s\n    \"%s\": {\"class\": ", i ? "," : "", record->model_type);
    printf(record->tokenizer_class ? "\"%s\"" : "%snull", record->tokenizer_class ? record->tokenizer_class : "");
    printf(", \"hub_class_incorrect\": %s}", record->hub_tokenizer_class_incorrect ? "true" : "false");
  }
  printf("\n  }\n}\n");
  return 0;
}
