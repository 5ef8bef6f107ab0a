/* Tensor manifests against the state_dict names and shapes Transformers
 * builds for the same tiny configs (tests/goldens/families, written by
 * tools/oracle/family_names.py), for families that have no model goldens
 * yet: every declared tensor exists with that shape, and every Transformers
 * parameter is declared. And every family in the registry has oracle
 * goldens (tests/goldens/<name>/<case>, whose model's config.json names the
 * family's model_type), bar the reasoned exceptions below. */
#include <dirent.h>

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

/* Registered families without goldens of their own, each with its reason
 * (none today; the list ends at the NULL entry). */
static const struct {
  const char *model_type, *reason;
} without_goldens[] = {
    {NULL, NULL},
};

/* model_type of the model a golden case names (manifest "model", relative to
 * the case), or NULL. Returns a malloc'd string. */
static char *case_model_type(const char *case_dir) {
  char path[8192];
  snprintf(path, sizeof(path), "%s/manifest.json", case_dir);
  vlm_json_document manifest;
  vlm_status status = vlm_json_parse_file(path, 64 << 20, NULL, &manifest);
  if (status) {
    vlm_status_free(status);
    return NULL;
  }
  const char *format = vlm_json_get_string(vlm_json_object_get(manifest.root, "format"));
  const char *model = vlm_json_get_string(vlm_json_object_get(manifest.root, "model"));
  char *model_type = NULL;
  if (format && !strcmp(format, "vlm-golden/1") && model) {
    snprintf(path, sizeof(path), "%s/%s/config.json", case_dir, model);
    vlm_json_document config;
    status = vlm_json_parse_file(path, 1 << 20, NULL, &config);
    const char *type = status ? NULL : vlm_json_get_string(vlm_json_object_get(config.root, "model_type"));
    if (type) model_type = strdup(type);
    if (!status) vlm_json_document_release(&config);
    vlm_status_free(status);
  }
  vlm_json_document_release(&manifest);
  return model_type;
}

static void every_registered_family_has_goldens(void) {
  size_t count = vlm_family_count();
  int *cases = calloc(count, sizeof(int));
  const char *root = VLM_SOURCE_DIR "/tests/goldens";
  DIR *families = opendir(root);
  CHECK(families != NULL);
  for (struct dirent *family; families && (family = readdir(families));) {
    if (family->d_name[0] == '.') continue;
    char family_dir[1024];
    snprintf(family_dir, sizeof(family_dir), "%s/%s", root, family->d_name);
    DIR *case_dirs = opendir(family_dir);
    for (struct dirent *entry; case_dirs && (entry = readdir(case_dirs));) {
      if (entry->d_name[0] == '.') continue;
      char case_dir[3072];
      snprintf(case_dir, sizeof(case_dir), "%s/%s", family_dir, entry->d_name);
      char *model_type = case_model_type(case_dir);
      for (size_t i = 0; model_type && i < count; i++)
        if (!strcmp(vlm_family_at(i)->model_type, model_type)) cases[i]++;
      free(model_type);
    }
    if (case_dirs) closedir(case_dirs);
  }
  if (families) closedir(families);
  for (size_t i = 0; i < count; i++) {
    const char *model_type = vlm_family_at(i)->model_type, *excused = NULL;
    for (size_t j = 0; without_goldens[j].model_type; j++)
      if (!strcmp(without_goldens[j].model_type, model_type)) excused = without_goldens[j].reason;
    printf("  %-12s %d golden case(s)%s%s\n", model_type, cases[i], excused ? "; excused: " : "",
           excused ? excused : "");
    if (excused) {
      /* An exception outlives its reason once goldens exist: drop it. */
      CHECK_INT_EQ(cases[i], 0);
    } else if (cases[i] == 0) {
      fprintf(stderr, "  %s is registered (src/models/family.c) but no golden case in tests/goldens "
              "uses a model of that model_type: add an oracle family (tools/oracle/families.py)\n",
              model_type);
      test_failures++;
    }
  }
  free(cases);
}

/* Every checkpoint layout a family claims (vlm families, the README's
 * table) names a golden directory whose cases all use a model of the
 * family's model_type, and there is at least one. */
static void every_claimed_layout_has_its_goldens(void) {
  for (size_t i = 0; i < vlm_family_count(); i++) {
    const vlm_family *family = vlm_family_at(i);
    if (vlm_family_runs(family) && family->layout_count < 1) {
      fprintf(stderr, "  %s claims no checkpoint layout (vlm_family.layouts)\n", family->model_type);
      test_failures++;
    }
    for (int k = 0; k < family->layout_count; k++) {
      const vlm_family_layout *layout = &family->layouts[k];
      char family_dir[1024];
      snprintf(family_dir, sizeof(family_dir), "%s/tests/goldens/%s", VLM_SOURCE_DIR, layout->goldens);
      DIR *case_dirs = opendir(family_dir);
      int cases = 0, others = 0;
      for (struct dirent *entry; case_dirs && (entry = readdir(case_dirs));) {
        if (entry->d_name[0] == '.') continue;
        char case_dir[2048];
        snprintf(case_dir, sizeof(case_dir), "%s/%s", family_dir, entry->d_name);
        char *model_type = case_model_type(case_dir);
        if (model_type && !strcmp(model_type, family->model_type)) cases++;
        else others++;
        free(model_type);
      }
      if (case_dirs) closedir(case_dirs);
      printf("  %-12s %-26s tests/goldens/%s: %d case(s)\n", family->model_type, layout->name, layout->goldens, cases);
      if (cases == 0 || others != 0) {
        fprintf(stderr, "  %s claims layout '%s' by tests/goldens/%s, which has %d case(s) of that model_type "
                "and %d other entries\n", family->model_type, layout->name, layout->goldens, cases, others);
        test_failures++;
      }
    }
  }
}

TEST_MAIN(TEST(manifests_use_transformers_names), TEST(every_registered_family_has_goldens),
          TEST(every_claimed_layout_has_its_goldens))
