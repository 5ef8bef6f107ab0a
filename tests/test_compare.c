/* The comparison library on hand-made goldens: checkpoints written here,
 * digests computed here, then single values flipped to prove that each kind
 * of divergence is caught and named. The checked-in goldens from the oracle
 * harness are exercised end to end by tests/cli/compare.sh. */
#include <stdint.h>
#include <sys/stat.h>

#include "io/safetensors.h"
#include "test.h"
#include "validate/compare.h"
#include "core/sha256.h"
#include "backends/cpu/cpu_modules.h"
#include "models/model.h"

static void sha256_matches_known_digests(void) {
  vlm_sha256 hash;
  char hex[65];
  vlm_sha256_init(&hash);
  vlm_sha256_finish_hex(&hash, hex);
  CHECK_STR_EQ(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  vlm_sha256_init(&hash);
  vlm_sha256_update(&hash, "abc", 3);
  vlm_sha256_finish_hex(&hash, hex);
  CHECK_STR_EQ(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  /* 56 bytes: the padding spills into a second block. */
  const char *text = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  vlm_sha256_init(&hash);
  for (size_t i = 0; text[i]; i++) vlm_sha256_update(&hash, text + i, 1);
  vlm_sha256_finish_hex(&hash, hex);
  CHECK_STR_EQ(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/* A two-tensor "llama" checkpoint whose lm_head is tied to the embedding. */
static const char config_json[] =
    "{\"model_type\": \"llama\", \"vocab_size\": 4, \"hidden_size\": 2, \"intermediate_size\": 2,"
    " \"num_hidden_layers\": 1, \"num_attention_heads\": 1, \"num_key_value_heads\": 1,"
    " \"head_dim\": 2, \"tie_word_embeddings\": true}";
static const float embedding[8] = {0.5f, -1.25f, 3.0f, 0.0f, 1.0f / 3.0f, -2.0f, 7.5f, 1e-3f};
static const float norm[2] = {1.0f, 0.75f};

static void digest_of(const float *values, int count, char hex[65]) {
  vlm_sha256 hash;
  vlm_sha256_init(&hash);
  vlm_sha256_update(&hash, values, (size_t)count * sizeof(float));
  vlm_sha256_finish_hex(&hash, hex);
}

static char *make_model(const char *name) {
  char *dir = test_write_file(test_temp_dir(), name, "", 0);
  remove(dir);
  mkdir(dir, 0755);
  free(test_write_file(dir, "config.json", config_json, sizeof(config_json) - 1));
  char *weights = test_write_file(dir, "model.safetensors", "", 0);
  const int64_t embedding_shape[] = {4, 2}, norm_shape[] = {2};
  const vlm_safetensors_write_entry entries[] = {
      {"model.embed_tokens.weight", VLM_DTYPE_F32, 2, embedding_shape, embedding},
      {"model.norm.weight", VLM_DTYPE_F32, 1, norm_shape, norm},
  };
  CHECK_OK(vlm_safetensors_write(weights, entries, 2, "pt"));
  free(weights);
  return dir;
}

/* Writes a golden case naming `model_dir`: its checkpoint stage, then
 * `extra_stage` (JSON text starting with a comma, or NULL). `corrupt_digest`
 * flips one hex digit of the embedding's digest; `drop_norm` leaves a
 * checkpoint tensor out of the golden. */
static char *make_golden(const char *name, const char *model_dir, const char *extra_stage,
                         bool corrupt_digest, bool drop_norm) {
  char embedding_digest[65], norm_digest[65];
  digest_of(embedding, 8, embedding_digest);
  digest_of(norm, 2, norm_digest);
  if (corrupt_digest) embedding_digest[0] = embedding_digest[0] == '0' ? '1' : '0';
  char norm_entry[512] = "";
  if (!drop_norm)
    snprintf(norm_entry, sizeof(norm_entry),
             ",{\"name\": \"model.norm.weight\", \"shape\": [2], \"sha256\": \"%s\","
             " \"samples\": [[0, 1.0], [1, 0.75]]}",
             norm_digest);
  char manifest[4096];
  snprintf(manifest, sizeof(manifest),
           "{\"format\": \"vlm-golden/1\", \"case\": \"%s\", \"model\": \"%s\", \"dtype\": \"float32\","
           " \"stages\": [{\"name\": \"checkpoint\", \"parameters\": ["
           "{\"name\": \"lm_head.weight\", \"shape\": [4, 2], \"sha256\": \"%s\","
           " \"samples\": [[0, 0.5], [6, 7.5]]},"
           "{\"name\": \"model.embed_tokens.weight\", \"shape\": [4, 2], \"sha256\": \"%s\","
           " \"samples\": [[0, 0.5], [6, 7.5]]}%s]}%s]}",
           name, model_dir, embedding_digest, embedding_digest, norm_entry,
           extra_stage ? extra_stage : "");
  char *dir = test_write_file(test_temp_dir(), name, "", 0);
  remove(dir);
  mkdir(dir, 0755);
  free(test_write_file(dir, "manifest.json", manifest, strlen(manifest)));
  return dir;
}

static vlm_comparison_report *run(const char *golden_dir) {
  vlm_comparison_report *report = NULL;
  CHECK_OK(vlm_compare_run(golden_dir, NULL, &report));
  return report;
}

static void faithful_golden_matches(void) {
  char *model = make_model("model_ok");
  char *golden = make_golden("golden_ok", model, ",{\"name\": \"stage_from_the_future\"}", false, false);
  vlm_comparison_report *report = run(golden);
  if (report) {
    if (vlm_comparison_report_first_divergent(report))
      fputs(vlm_comparison_report_text(report, false), stderr);
    CHECK(vlm_comparison_report_first_divergent(report) == NULL);
    CHECK_INT_EQ(vlm_comparison_report_stage(report, 0)->outcome, VLM_STAGE_MATCH);
    CHECK_INT_EQ(vlm_comparison_report_stage(report, 0)->compared, 3);
    CHECK_INT_EQ(vlm_comparison_report_stage(report, 1)->outcome, VLM_STAGE_NOT_IMPLEMENTED);
    const char *text = vlm_comparison_report_text(report, false);
    CHECK(strstr(text, "not implemented yet") != NULL);
    CHECK(strstr(text, "all 1 stages match (1 not implemented yet)") != NULL);
    CHECK(strstr(vlm_comparison_report_text(report, true), "\"first_divergent_stage\":null") != NULL);
  }
  vlm_comparison_report_release(report);
  free(golden);
  free(model);
}

static void corrupted_digest_names_the_stage(void) {
  char *model = make_model("model_bad_digest");
  char *golden = make_golden("golden_bad_digest", model, NULL, true, false);
  vlm_comparison_report *report = run(golden);
  if (report) {
    const vlm_stage_result *divergent = vlm_comparison_report_first_divergent(report);
    CHECK(divergent != NULL);
    if (divergent) {
      CHECK_STR_EQ(divergent->name, "checkpoint");
      CHECK(strstr(divergent->detail, "lm_head.weight") != NULL);
    }
    CHECK(strstr(vlm_comparison_report_text(report, false), "first divergent stage: checkpoint") != NULL);
  }
  vlm_comparison_report_release(report);
  free(golden);
  free(model);
}

static void extra_checkpoint_tensor_diverges(void) {
  char *model = make_model("model_extra");
  char *golden = make_golden("golden_extra", model, NULL, false, true);
  vlm_comparison_report *report = run(golden);
  if (report) {
    const vlm_stage_result *divergent = vlm_comparison_report_first_divergent(report);
    CHECK(divergent && strstr(divergent->detail, "model.norm.weight") != NULL);
  }
  vlm_comparison_report_release(report);
  free(golden);
  free(model);
}

#define BAD_TOLERANCE "{\"format\": \"vlm-golden/1\", \"stages\": [{\"name\": \"x\", \"tolerance\": 3}]}"
#define NO_MODEL "{\"format\": \"vlm-golden/1\", \"stages\": [{\"name\": \"x\"}]}"

static void malformed_manifests_are_refused(void) {
  const char *dir = test_temp_dir();
  char *case_dir = test_write_file(dir, "bad_case", "", 0);
  remove(case_dir);
  mkdir(case_dir, 0755);
  vlm_comparison_report *report = NULL;
  free(test_write_file(case_dir, "manifest.json", "{\"format\": \"other\"}", 19));
  CHECK_ERROR(vlm_compare_run(case_dir, NULL, &report), VLM_STATUS_DATA_LOSS, "format");
  free(test_write_file(case_dir, "manifest.json",
                       BAD_TOLERANCE, strlen(BAD_TOLERANCE)));
  CHECK_ERROR(vlm_compare_run(case_dir, NULL, &report), VLM_STATUS_DATA_LOSS, "tolerance");
  free(test_write_file(case_dir, "manifest.json",
                       NO_MODEL, strlen(NO_MODEL)));
  CHECK_ERROR(vlm_compare_run(case_dir, NULL, &report), VLM_STATUS_INVALID_ARGUMENT, "names no model");
  CHECK(report == NULL);
  free(case_dir);
}

static void values_follow_allclose(void) {
  vlm_stage_result result = {.tolerance = {.max_abs = 0.1, .max_rel = 0.01}};
  const double expected[] = {1.0, 100.0, 0.0, -2.0};
  const double actual[] = {1.05, 100.9, 0.0, -2.5};
  vlm_compare_values(expected, actual, 4, "x", &result);
  CHECK_INT_EQ(result.compared, 4);
  CHECK_INT_EQ(result.mismatched, 1); /* only -2.5 vs -2.0 exceeds 0.1 + 0.02 */
  CHECK_NEAR(result.max_abs, 0.9, 1e-12);
  CHECK_NEAR(result.max_rel, 0.25, 1e-12);
  CHECK(strstr(result.detail, "x[3]") != NULL);
}

/* Where each kind of stage runs on a module backend: host stages keep the
 * cpu function, module boundaries get the backend's, stages inside a
 * compiled module none (flagged), unknown stages none (not flagged). */
static void stages_are_placed_per_backend(void) {
  vlm_compare_backend backend = {.name = "fake"};
  bool inside = true;
  CHECK(vlm_stage_function_find("checkpoint", &backend, &inside) == vlm_stage_function_find("checkpoint", NULL, NULL));
  CHECK(!inside);
  CHECK(vlm_stage_function_find("prefill_logits", &backend, &inside) != NULL);
  CHECK(vlm_stage_function_find("prefill_logits", &backend, NULL) !=
        vlm_stage_function_find("prefill_logits", NULL, NULL));
  CHECK(!inside);
  const char *const compiled[] = {"vision_encoder", "vision_features", "vision_embeddings", "audio_encoder",
                                  "input_embeddings"};
  for (size_t i = 0; i < sizeof(compiled) / sizeof(compiled[0]); i++) {
    CHECK(vlm_stage_function_find(compiled[i], &backend, &inside) == NULL);
    CHECK(inside);
    CHECK(vlm_stage_function_find(compiled[i], NULL, NULL) != NULL);
  }
  CHECK(vlm_stage_function_find("stage_from_the_future", &backend, &inside) == NULL);
  CHECK(!inside);
}

/* A backend whose modules are the cpu backend's own tables (as the engine
 * drives them): the module-boundary stages of a real golden match through
 * them; the cpu table shows no KV, so kv fails rather than falling back;
 * input_embeddings is reported inside a compiled module. */
static vlm_status open_cpu_decoder(void *user, vlm_model *model, int64_t capacity, int64_t prefill_chunk,
                                   vlm_text_decoder **out) {
  (void)user;
  vlm_text_model_options options = {.slot_count = 1, .capacity = capacity, .prefill_chunk = prefill_chunk};
  return vlm_text_decoder_open_cpu(model, &options, out);
}

static vlm_status no_encoder(void *user, vlm_model *model, int kind, vlm_media_encoder **out) {
  (void)user, (void)model, (void)kind;
  *out = NULL;
  return VLM_OK;
}

static const vlm_stage_result *stage_named(const vlm_comparison_report *report, const char *name) {
  for (size_t i = 0; i < vlm_comparison_report_stage_count(report); i++)
    if (strcmp(vlm_comparison_report_stage(report, i)->name, name) == 0) return vlm_comparison_report_stage(report, i);
  return NULL;
}

static void module_stages_run_through_the_backend(void) {
  vlm_compare_backend backend = {.name = "cpu-tables", .open_text_decoder = open_cpu_decoder,
                                 .open_media_encoder = no_encoder};
  vlm_compare_options options = {.backend = &backend, .thread_count = 1};
  vlm_comparison_report *report = NULL;
  CHECK_OK(vlm_compare_run(VLM_SOURCE_DIR "/tests/goldens/qwen2/chat", &options, &report));
  if (!report) return;
  const char *const matched[] = {"checkpoint", "input_ids", "prefill_logits", "greedy_tokens", "text"};
  for (size_t i = 0; i < sizeof(matched) / sizeof(matched[0]); i++) {
    const vlm_stage_result *stage = stage_named(report, matched[i]);
    CHECK(stage && stage->outcome == VLM_STAGE_MATCH);
  }
  CHECK(strstr(stage_named(report, "prefill_logits")->detail, "prefilled on cpu-tables") != NULL);
  CHECK(strstr(stage_named(report, "text")->detail, "from cpu-tables's tokens") != NULL);
  CHECK_INT_EQ(stage_named(report, "input_embeddings")->outcome, VLM_STAGE_NOT_ON_BACKEND);
  const vlm_stage_result *kv = stage_named(report, "kv");
  CHECK_INT_EQ(kv->outcome, VLM_STAGE_FAILED);
  CHECK(strstr(kv->detail, "cannot show its KV") != NULL);
  CHECK(vlm_comparison_report_first_divergent(report) == kv);
  CHECK(strstr(vlm_comparison_report_text(report, false), "backend cpu-tables") != NULL);
  CHECK(strstr(vlm_comparison_report_text(report, true), "\"not_on_backend\":1") != NULL);
  vlm_comparison_report_release(report);
}

/* A backend whose modules do not open fails each module stage with its
 * error (opened once), never computing it on the host instead. */
static vlm_status refuse_decoder(void *user, vlm_model *model, int64_t capacity, int64_t prefill_chunk,
                                 vlm_text_decoder **out) {
  (void)model, (void)capacity, (void)prefill_chunk;
  (*(int *)user)++;
  *out = NULL;
  return vlm_status_make(VLM_STATUS_UNIMPLEMENTED, "no decoder here");
}

static void unopened_modules_fail_their_stages(void) {
  int opens = 0;
  vlm_compare_backend backend = {.name = "none", .user = &opens, .open_text_decoder = refuse_decoder,
                                 .open_media_encoder = no_encoder};
  vlm_compare_options options = {.backend = &backend, .thread_count = 1};
  vlm_comparison_report *report = NULL;
  CHECK_OK(vlm_compare_run(VLM_SOURCE_DIR "/tests/goldens/qwen2/chat", &options, &report));
  if (!report) return;
  const char *const failed[] = {"prefill_logits", "kv", "greedy_tokens", "text"};
  for (size_t i = 0; i < sizeof(failed) / sizeof(failed[0]); i++) {
    const vlm_stage_result *stage = stage_named(report, failed[i]);
    CHECK(stage && stage->outcome == VLM_STAGE_FAILED && strstr(stage->detail, "no decoder here"));
  }
  CHECK_INT_EQ(opens, 1);
  CHECK_STR_EQ(vlm_comparison_report_first_divergent(report)->name, "prefill_logits");
  vlm_comparison_report_release(report);
}

/* A backend without an image encoder fails the encoder-output stages
 * instead of leaving the images to the host's cpu encoder. */
static void missing_encoder_fails_its_stages(void) {
  vlm_compare_backend backend = {.name = "cpu-tables", .open_text_decoder = open_cpu_decoder,
                                 .open_media_encoder = no_encoder};
  vlm_compare_options options = {.backend = &backend, .thread_count = 1};
  vlm_comparison_report *report = NULL;
  CHECK_OK(vlm_compare_run(VLM_SOURCE_DIR "/tests/goldens/llava/one_image", &options, &report));
  if (!report) return;
  const vlm_stage_result *projector = stage_named(report, "projector");
  CHECK(projector && projector->outcome == VLM_STAGE_FAILED);
  CHECK(projector && strstr(projector->detail, "has no image encoder") != NULL);
  CHECK_INT_EQ(stage_named(report, "vision_encoder")->outcome, VLM_STAGE_NOT_ON_BACKEND);
  CHECK_INT_EQ(stage_named(report, "greedy_tokens")->outcome, VLM_STAGE_MATCH);
  vlm_comparison_report_release(report);
}

TEST_MAIN(TEST(sha256_matches_known_digests), TEST(faithful_golden_matches),
          TEST(corrupted_digest_names_the_stage), TEST(extra_checkpoint_tensor_diverges),
          TEST(malformed_manifests_are_refused), TEST(values_follow_allclose),
          TEST(stages_are_placed_per_backend), TEST(module_stages_run_through_the_backend),
          TEST(unopened_modules_fail_their_stages), TEST(missing_encoder_fails_its_stages))
