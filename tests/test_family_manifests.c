/* Tensor manifests against the state_dict names and shapes Transformers
 * builds for the same tiny configs (tests/goldens/families, written by
 * tools/oracle/family_names.py), for families that have no model goldens
 * yet: every declared tensor exists with that shape, and every Transformers
 * parameter is declared. */
#include "io/config.h"
#include "io/json.h"
#include "models/family.h"
#include "test.h"

static void check_family(const vlm_json_value *entry, const char *family_name) {
  vlm_string_builder builder = {0};
  vlm_sb_append_json_value(&builder, vlm_json_object_get(entry, "config"));
  char *config_text = vlm_sb_finish(&builder);
  vlm_model_config config;
  CHECK_OK(vlm_model_config_parse(config_text, strlen(config_text), family_name, NULL, &config));
  free(config_text);
  const vlm_family *family = vlm_family_find(config.model_type);
  CHECK(family != NULL);
  if (!family) return;
  vlm_tensor_manifest manifest;
  vlm_manifest_init(&manifest);
  CHECK_OK(family->declare_tensors(&config, &manifest));
  const vlm_json_value *tensors = vlm_json_object_get(entry, "tensors");
  for (size_t i = 0; i < tensors->as.object.count; i++) {
    const vlm_json_member *member = &tensors->as.object.members[i];
    const vlm_expected_tensor *expected = vlm_manifest_find(&manifest, member->key);
    if (!expected) {
      fprintf(stderr, "  %s: Transformers has '%s', the manifest does not\n", family_name, member->key);
      test_failures++;
      continue;
    }
    const vlm_json_value *shape = &member->value;
    bool same = (size_t)expected->rank == shape->as.array.count;
    for (int d = 0; same && d < expected->rank; d++) {
      int64_t extent = -1;
      vlm_json_get_int(&shape->as.array.items[d], &extent);
      same = extent == expected->shape[d];
    }
    if (!same) {
      fprintf(stderr, "  %s: '%s' has another shape in the manifest\n", family_name, member->key);
      test_failures++;
    }
  }
  for (size_t i = 0; i < manifest.count; i++)
    if (!manifest.tensors[i].optional && !vlm_json_object_get(tensors, manifest.tensors[i].name)) {
      fprintf(stderr, "  %s: the manifest declares '%s', Transformers has no such parameter\n",
              family_name, manifest.tensors[i].name);
      test_failures++;
    }
  vlm_manifest_release(&manifest);
  vlm_model_config_release(&config);
}

static void manifests_use_transformers_names(void) {
  vlm_json_document document;
  CHECK_OK(vlm_json_parse_file(VLM_SOURCE_DIR "/tests/goldens/families/state_dict_names.json",
                               1 << 20, NULL, &document));
  if (!document.root) return;
  int families = 0;
  for (size_t i = 0; i < document.root->as.object.count; i++, families++)
    check_family(&document.root->as.object.members[i].value, document.root->as.object.members[i].key);
  CHECK(families >= 2);
  vlm_json_document_release(&document);
}

TEST_MAIN(TEST(manifests_use_transformers_names))
