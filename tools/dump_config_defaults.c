/* vlm-dump-config-defaults: prints vlm's tables of Transformers defaults
 * (src/io/config_defaults.c) as one JSON object, so that
 * tools/oracle/check_config_defaults.py can compare every field with the
 * pinned Transformers classes. A development tool, not part of `vlm`:
 *
 *   {"models": {"llama": {...}, ...}, "image_processors": {...},
 *    "processors": {...}, "generation": {...}} */
#include <stdio.h>

#include "io/config.h"

typedef const char *(*table_lookup)(const char *name);

static void print_tables(const char *key, const char *const *names, size_t count,
                         table_lookup lookup, bool last) {
  printf("  \"%s\": {", key);
  for (size_t i = 0; i < count; i++)
    printf("%s\n    \"%s\": %s", i ? "," : "", names[i], lookup(names[i]));
  printf("\n  }%s\n", last ? "" : ",");
}

int main(void) {
  const char *const *names = NULL;
  printf("{\n");
  size_t count = vlm_config_default_model_types(&names);
  print_tables("models", names, count, vlm_config_defaults_json, false);
  count = vlm_image_processor_default_classes(&names);
  print_tables("image_processors", names, count, vlm_image_processor_defaults_json, false);
  count = vlm_processor_default_classes(&names);
  print_tables("processors", names, count, vlm_processor_defaults_json, false);
  printf("  \"generation\": %s\n}\n", vlm_generation_defaults_json());
  return 0;
}
