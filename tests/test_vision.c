/* The LLaVA vision path on the tiny checkpoint and its oracle goldens:
 * tower + projector from the golden pixel values, placeholder expansion and
 * its refusals, the proof that the vision side binds no decoder tensor, and
 * a whole one-image request through vlm_generate. */
#include <stdlib.h>
#include <string.h>

#include "engine/vision_model.h"
#include "models/family.h"
#include "test.h"
#include "validate/golden.h"
#include "vlm/generate.h"
#include "vlm/tokenizer.h"

#define MODEL VLM_SOURCE_DIR "/tests/models/llava"
#define ONE_IMAGE VLM_SOURCE_DIR "/tests/goldens/llava/one_image"

static vlm_vision_model *open_vision(void) {
  vlm_vision_model *model = NULL;
  CHECK_OK(vlm_vision_model_open(MODEL, NULL, &model));
  return model;
}

/* The golden's pixel values as one vlm_pixel_values per image. */
static int golden_images(const vlm_golden_case *golden, vlm_pixel_values *out, int capacity) {
  vlm_tensor pixels;
  CHECK_OK(vlm_golden_case_tensor(golden, "processor.pixel_values", &pixels));
  int count = (int)pixels.shape[0];
  int64_t per_image = pixels.shape[1] * pixels.shape[2] * pixels.shape[3];
  for (int i = 0; i < count && i < capacity; i++)
    out[i] = (vlm_pixel_values){(const float *)pixels.data + i * per_image, pixels.shape[1],
                                pixels.shape[2], pixels.shape[3]};
  return count;
}

static void encoder_matches_golden_projector(void) {
  vlm_golden_case golden;
  CHECK_OK(vlm_golden_case_open(ONE_IMAGE, NULL, &golden));
  vlm_vision_model *model = open_vision();
  vlm_pixel_values images[1];
  CHECK_INT_EQ(golden_images(&golden, images, 1), 1);
  CHECK_INT_EQ(vlm_vision_model_tokens_per_image(model), 576);
  float *features = malloc(576 * 128 * sizeof(float));
  CHECK_OK(vlm_vision_model_encode(model, images, 1, features));
  vlm_tensor expected;
  CHECK_OK(vlm_golden_case_tensor(&golden, "projector", &expected));
  double worst = 0;
  for (int64_t i = 0; i < 576 * 128; i++) {
    double difference = fabs(features[i] - ((const float *)expected.data)[i]);
    if (difference > worst) worst = difference;
  }
  CHECK(worst < 1e-4);
  /* Wrong image sizes are refused by name, before any compute. */
  vlm_pixel_values small = {images[0].values, 3, 224, 224};
  CHECK_ERROR(vlm_vision_model_encode(model, &small, 1, features), VLM_STATUS_INVALID_ARGUMENT,
              "the vision tower takes [3, 336, 336]");
  free(features);
  vlm_vision_model_release(model);
  vlm_golden_case_close(&golden);
}

typedef struct binding_log {
  const vlm_tensor_manifest *manifest;
  int bound, outside_vision_side, last_layer;
} binding_log;

static void record_binding(void *context, const char *name, const vlm_tensor *view) {
  binding_log *log = context;
  (void)view;
  const vlm_expected_tensor *declared = vlm_manifest_find(log->manifest, name);
  vlm_component component = declared ? declared->component : VLM_COMPONENT_OTHER;
  log->bound++;
  if (component != VLM_COMPONENT_VISION_TOWER && component != VLM_COMPONENT_PROJECTOR &&
      component != VLM_COMPONENT_EMBEDDINGS) {
    fprintf(stderr, "  vision side bound %s (%s)\n", name, vlm_component_name(component));
    log->outside_vision_side++;
  }
  if (strstr(name, "encoder.layers.1.")) log->last_layer++;
}

/* SPEC 2.4: the vision side reads tower, projector and token embeddings
 * only. Every tensor it binds goes through the weight observer (graph
 * weights and the embedding lookup alike); the log is checked against the
 * family's own component table, and the per-component byte tally agrees. */
static void vision_side_binds_no_decoder_tensor(void) {
  vlm_golden_case golden;
  CHECK_OK(vlm_golden_case_open(ONE_IMAGE, NULL, &golden));
  vlm_vision_model *model = open_vision();
  vlm_model_config config;
  CHECK_OK(vlm_model_config_load(MODEL, NULL, &config));
  vlm_tensor_manifest manifest;
  vlm_manifest_init(&manifest);
  CHECK_OK(vlm_family_find("llava")->declare_tensors(&config, &manifest));
  binding_log log = {&manifest, 0, 0, 0};
  vlm_vision_trace trace = {.weight_observer = record_binding, .weight_context = &log};
  vlm_vision_model_set_trace(model, &trace);
  vlm_pixel_values images[1];
  golden_images(&golden, images, 1);
  vlm_tensor ids_tensor;
  CHECK_OK(vlm_golden_case_tensor(&golden, "input_ids", &ids_tensor));
  int64_t count = ids_tensor.shape[1];
  int32_t *ids = malloc((size_t)count * sizeof(int32_t));
  for (int64_t i = 0; i < count; i++) ids[i] = (int32_t)((const int64_t *)ids_tensor.data)[i];
  float *features = malloc(576 * 128 * sizeof(float)), *merged = malloc((size_t)count * 128 * sizeof(float));
  CHECK_OK(vlm_vision_model_encode(model, images, 1, features));
  CHECK_OK(vlm_vision_model_merge(model, ids, count, features, 576, merged));
  CHECK(log.bound > 0);
  CHECK_INT_EQ(log.outside_vision_side, 0);
  /* vision_feature_layer -2: the last encoder layer is never run. */
  CHECK_INT_EQ(log.last_layer, 0);
  CHECK_INT_EQ(vlm_vision_model_bound_bytes(model, VLM_COMPONENT_TEXT_DECODER), 0);
  CHECK_INT_EQ(vlm_vision_model_bound_bytes(model, VLM_COMPONENT_OTHER), 0);
  CHECK(vlm_vision_model_bound_bytes(model, VLM_COMPONENT_VISION_TOWER) > 0);
  CHECK(vlm_vision_model_bound_bytes(model, VLM_COMPONENT_PROJECTOR) > 0);
  CHECK_INT_EQ(vlm_vision_model_bound_bytes(model, VLM_COMPONENT_EMBEDDINGS), 384 * 128 * 4);
  fprintf(stderr, "  bound bytes: vision_tower %llu, projector %llu, embeddings %llu, text_decoder %llu\n",
          (unsigned long long)vlm_vision_model_bound_bytes(model, VLM_COMPONENT_VISION_TOWER),
          (unsigned long long)vlm_vision_model_bound_bytes(model, VLM_COMPONENT_PROJECTOR),
          (unsigned long long)vlm_vision_model_bound_bytes(model, VLM_COMPONENT_EMBEDDINGS),
          (unsigned long long)vlm_vision_model_bound_bytes(model, VLM_COMPONENT_TEXT_DECODER));
  free(ids);
  free(features);
  free(merged);
  vlm_manifest_release(&manifest);
  vlm_model_config_release(&config);
  vlm_vision_model_release(model);
  vlm_golden_case_close(&golden);
}

/* The golden prompt tokenizes to one <image> token; expansion gives the
 * processor's 576 copies, i.e. the golden input_ids. Mismatches are errors. */
static void placeholders_expand_to_golden_ids(void) {
  vlm_golden_case golden;
  CHECK_OK(vlm_golden_case_open(ONE_IMAGE, NULL, &golden));
  vlm_vision_model *model = open_vision();
  vlm_tokenizer *tokenizer = NULL;
  CHECK_OK(vlm_tokenizer_create(MODEL, NULL, &tokenizer));
  const char *prompt = vlm_json_get_string(vlm_json_object_get(golden.manifest.root, "prompt"));
  vlm_token_ids ids = {0};
  CHECK_OK(vlm_tokenizer_encode(tokenizer, prompt, strlen(prompt), true, &ids));
  CHECK_INT_EQ(vlm_vision_model_count_placeholders(model, ids.ids, (int64_t)ids.count), 1);
  int32_t *expanded = NULL;
  int64_t count = 0;
  CHECK_OK(vlm_vision_model_expand_placeholders(model, ids.ids, (int64_t)ids.count, 1, &expanded, &count));
  vlm_tensor golden_ids;
  CHECK_OK(vlm_golden_case_tensor(&golden, "input_ids", &golden_ids));
  CHECK_INT_EQ(count, golden_ids.shape[1]);
  int differences = 0;
  for (int64_t i = 0; expanded && i < count && i < golden_ids.shape[1]; i++)
    differences += expanded[i] != ((const int64_t *)golden_ids.data)[i];
  CHECK_INT_EQ(differences, 0);
  int32_t *unused = NULL;
  CHECK_ERROR(vlm_vision_model_expand_placeholders(model, ids.ids, (int64_t)ids.count, 2, &unused, &count),
              VLM_STATUS_INVALID_ARGUMENT, "1 image placeholder(s) (token 382) but the request has 2 image(s)");
  float features[128], merged[8 * 128];
  CHECK_ERROR(vlm_vision_model_merge(model, ids.ids, 8, features, 0, merged), VLM_STATUS_INVALID_ARGUMENT,
              "1 placeholder tokens, 0 feature rows");
  free(expanded);
  vlm_token_ids_release(&ids);
  vlm_tokenizer_release(tokenizer);
  vlm_vision_model_release(model);
  vlm_golden_case_close(&golden);
}

static int64_t golden_greedy_tokens(const vlm_golden_case *golden, int32_t *out, int64_t capacity) {
  for (size_t s = 0; s < golden->stage_count; s++) {
    if (strcmp(golden->stages[s].name, "greedy_tokens") != 0) continue;
    const vlm_json_value *tokens = vlm_json_object_get(golden->stages[s].spec, "tokens");
    int64_t count = 0;
    for (size_t i = 0; i < tokens->as.array.count && count < capacity; i++) {
      int64_t value = 0;
      vlm_json_get_int(&tokens->as.array.items[i], &value);
      out[count++] = (int32_t)value;
    }
    return count;
  }
  return 0;
}

/* A whole request: chat template with an image part, expansion, tower,
 * projector, merge, embeddings_prefill, greedy decode. */
static void generate_one_image_matches_golden(void) {
  vlm_golden_case golden;
  CHECK_OK(vlm_golden_case_open(ONE_IMAGE, NULL, &golden));
  int32_t expected[64];
  int64_t expected_count = golden_greedy_tokens(&golden, expected, 64);
  CHECK_INT_EQ(expected_count, 20);
  vlm_generator_options options = {.thread_count = 2};
  vlm_generator *generator = NULL;
  CHECK_OK(vlm_generator_open(MODEL, &options, &generator));
  vlm_pixel_values images[1];
  golden_images(&golden, images, 1);
  vlm_generation_request request = {.prompt = "What is in this picture?", .max_tokens = expected_count,
                                     .sampling = vlm_generator_default_sampling(generator),
                                     .images = images, .image_count = 1};
  request.sampling.temperature = 0;
  vlm_generation_result result;
  CHECK_OK(vlm_generate(generator, &request, &result));
  CHECK_INT_EQ(result.prompt_tokens, 607);
  CHECK_INT_EQ(result.completion_tokens, expected_count);
  int differences = 0;
  for (int64_t i = 0; i < result.completion_tokens && i < expected_count; i++)
    differences += result.tokens[i] != expected[i];
  CHECK_INT_EQ(differences, 0);
  vlm_generation_result_release(&result);
  /* A raw prompt with two placeholders and one image is refused. */
  request.raw_prompt = true;
  request.prompt = "USER: <image>\n<image>\nHi ASSISTANT:";
  CHECK_ERROR(vlm_generate(generator, &request, &result), VLM_STATUS_INVALID_ARGUMENT,
              "2 image placeholder(s)");
  request.audio_count = 1;
  CHECK_ERROR(vlm_generate(generator, &request, &result), VLM_STATUS_UNIMPLEMENTED, "audio");
  vlm_generator_release(generator);
  vlm_golden_case_close(&golden);
}

/* Families without a vision path refuse images by name. */
static void text_only_family_refuses_images(void) {
  vlm_generator *generator = NULL;
  vlm_generator_options options = {.thread_count = 1};
  CHECK_OK(vlm_generator_open(VLM_SOURCE_DIR "/tests/models/llama", &options, &generator));
  if (!generator) return;
  float pixels[3] = {0};
  vlm_pixel_values image = {pixels, 3, 1, 1};
  vlm_generation_request request = {.prompt = "Hello", .max_tokens = 2, .images = &image, .image_count = 1,
                                     .sampling = vlm_generator_default_sampling(generator)};
  vlm_generation_result result;
  CHECK_ERROR(vlm_generate(generator, &request, &result), VLM_STATUS_UNIMPLEMENTED, "takes no image input");
  vlm_generator_release(generator);
}

TEST_MAIN(TEST(encoder_matches_golden_projector), TEST(vision_side_binds_no_decoder_tensor),
          TEST(placeholders_expand_to_golden_ids), TEST(generate_one_image_matches_golden),
          TEST(text_only_family_refuses_images))
