/* The LLaVA vision path on the tiny checkpoint and its oracle goldens:
 * tower + projector from the golden pixel values, placeholder expansion and
 * its refusals, the proof that the vision side binds no decoder tensor, and
 * a whole one-image request through vlm_generate. */
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_encoder.h"
#include "engine/prompt.h"
#include "media/media_item.h"
#include "models/family.h"
#include "models/model.h"
#include "test.h"
#include "validate/golden.h"
#include "vlm/generate.h"
#include "vlm/tokenizer.h"

#define MODEL VLM_SOURCE_DIR "/tests/models/llava"
#define ONE_IMAGE VLM_SOURCE_DIR "/tests/goldens/llava/one_image"

static vlm_model *open_model(void) {
  vlm_model *model = NULL;
  CHECK_OK(vlm_model_open(MODEL, NULL, &model));
  return model;
}

/* Image `index` of the golden's pixel values as a media item of `height`
 * x `width` (the golden's own size when 0), with the family's placeholder
 * count. */
static vlm_media_item *golden_item(const vlm_model *model, const vlm_golden_case *golden, int index, int64_t height,
                                   int64_t width) {
  vlm_tensor pixels;
  CHECK_OK(vlm_golden_case_tensor(golden, "processor.pixel_values", &pixels));
  vlm_media_item *item = calloc(1, sizeof(*item));
  int64_t shape[3] = {pixels.shape[1], height ? height : pixels.shape[2], width ? width : pixels.shape[3]};
  int64_t values = pixels.shape[1] * pixels.shape[2] * pixels.shape[3];
  float *data = NULL;
  CHECK_OK(vlm_tensor_list_add(&item->tensors, "pixel_values", VLM_DTYPE_F32, 3, shape, (void **)&data));
  if (data && !height) memcpy(data, (const float *)pixels.data + index * values, (size_t)values * sizeof(float));
  item->kind = VLM_MEDIA_IMAGE;
  item->grid[0] = 1, item->grid[1] = shape[1], item->grid[2] = shape[2];
  CHECK_OK(model->family->image->token_count(&model->config, &model->processor, item->grid, &item->token_count));
  return item;
}

static void release_item(vlm_media_item *item) {
  vlm_media_item_release(item);
  free(item);
}

static void encoder_matches_golden_projector(void) {
  vlm_golden_case golden;
  CHECK_OK(vlm_golden_case_open(ONE_IMAGE, NULL, &golden));
  vlm_model *model = open_model();
  if (!model) return;
  vlm_cpu_encoder *encoder = NULL;
  CHECK_OK(vlm_cpu_encoder_open(model, VLM_MEDIA_IMAGE, NULL, &encoder));
  vlm_media_item *item = golden_item(model, &golden, 0, 0, 0);
  CHECK_INT_EQ(item->token_count, 576);
  float *features = malloc(576 * 128 * sizeof(float));
  CHECK_OK(vlm_cpu_encoder_encode(encoder, item, features));
  vlm_tensor expected;
  CHECK_OK(vlm_golden_case_tensor(&golden, "projector", &expected));
  double worst = 0;
  for (int64_t i = 0; i < 576 * 128; i++) {
    double difference = fabs(features[i] - ((const float *)expected.data)[i]);
    if (difference > worst) worst = difference;
  }
  CHECK(worst < 1e-4);
  /* Wrong image sizes are refused by name, before any compute. */
  vlm_media_item *small = golden_item(model, &golden, 0, 224, 224);
  CHECK_ERROR(vlm_cpu_encoder_encode(encoder, small, features), VLM_STATUS_INVALID_ARGUMENT,
              "the vision tower takes [3, 336, 336]");
  release_item(small);
  release_item(item);
  free(features);
  vlm_cpu_encoder_release(encoder);
  vlm_model_release(model);
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
  if (component != VLM_COMPONENT_VISION_TOWER && component != VLM_COMPONENT_PROJECTOR) {
    fprintf(stderr, "  vision side bound %s (%s)\n", name, vlm_component_name(component));
    log->outside_vision_side++;
  }
  if (strstr(name, "encoder.layers.1.")) log->last_layer++;
}

/* SPEC 2.4: the encoder reads tower and projector tensors only (the token
 * embeddings are merged in the decoder graph). Every tensor it binds goes
 * through the weight observer; the log is checked against the family's
 * own component table, and the per-component byte tally agrees. */
static void vision_side_binds_no_decoder_tensor(void) {
  vlm_golden_case golden;
  CHECK_OK(vlm_golden_case_open(ONE_IMAGE, NULL, &golden));
  vlm_model *model = open_model();
  if (!model) return;
  vlm_cpu_encoder *encoder = NULL;
  CHECK_OK(vlm_cpu_encoder_open(model, VLM_MEDIA_IMAGE, NULL, &encoder));
  binding_log log = {&model->manifest, 0, 0, 0};
  vlm_encoder_trace trace = {.weight_observer = record_binding, .weight_context = &log};
  vlm_cpu_encoder_set_trace(encoder, &trace);
  vlm_media_item *item = golden_item(model, &golden, 0, 0, 0);
  float *features = malloc(576 * 128 * sizeof(float));
  CHECK_OK(vlm_cpu_encoder_encode(encoder, item, features));
  CHECK(log.bound > 0);
  CHECK_INT_EQ(log.outside_vision_side, 0);
  /* vision_feature_layer -2: the last encoder layer is never run. */
  CHECK_INT_EQ(log.last_layer, 0);
  CHECK_INT_EQ(vlm_cpu_encoder_bound_bytes(encoder, VLM_COMPONENT_TEXT_DECODER), 0);
  CHECK_INT_EQ(vlm_cpu_encoder_bound_bytes(encoder, VLM_COMPONENT_EMBEDDINGS), 0);
  CHECK_INT_EQ(vlm_cpu_encoder_bound_bytes(encoder, VLM_COMPONENT_OTHER), 0);
  CHECK(vlm_cpu_encoder_bound_bytes(encoder, VLM_COMPONENT_VISION_TOWER) > 0);
  CHECK(vlm_cpu_encoder_bound_bytes(encoder, VLM_COMPONENT_PROJECTOR) > 0);
  fprintf(stderr, "  bound bytes: vision_tower %llu, projector %llu, embeddings %llu, text_decoder %llu\n",
          (unsigned long long)vlm_cpu_encoder_bound_bytes(encoder, VLM_COMPONENT_VISION_TOWER),
          (unsigned long long)vlm_cpu_encoder_bound_bytes(encoder, VLM_COMPONENT_PROJECTOR),
          (unsigned long long)vlm_cpu_encoder_bound_bytes(encoder, VLM_COMPONENT_EMBEDDINGS),
          (unsigned long long)vlm_cpu_encoder_bound_bytes(encoder, VLM_COMPONENT_TEXT_DECODER));
  free(features);
  release_item(item);
  vlm_cpu_encoder_release(encoder);
  vlm_model_release(model);
  vlm_golden_case_close(&golden);
}

/* The golden prompt holds one <image>; the processor's expansion gives 576
 * copies before tokenizing, i.e. the golden input_ids. Mismatches are
 * errors. */
static void placeholders_expand_to_golden_ids(void) {
  vlm_golden_case golden;
  CHECK_OK(vlm_golden_case_open(ONE_IMAGE, NULL, &golden));
  vlm_model *model = open_model();
  if (!model) return;
  vlm_tokenizer *tokenizer = NULL;
  CHECK_OK(vlm_tokenizer_create(MODEL, NULL, &tokenizer));
  const char *prompt = vlm_json_get_string(vlm_json_object_get(golden.manifest.root, "prompt"));
  vlm_media_item *items[2] = {golden_item(model, &golden, 0, 0, 0), golden_item(model, &golden, 0, 0, 0)};
  vlm_media_item both[2] = {*items[0], *items[1]};
  /* The golden prompt is the rendered chat: the processor flow adds BOS. */
  engine_prompt_source source = {.raw_prompt = prompt, .items = both, .item_count = 1,
                                 .raw_prompt_is_rendered_chat = true};
  engine_prompt built;
  CHECK_OK(engine_prompt_build(model, tokenizer, NULL, &source, &built));
  vlm_tensor golden_ids;
  CHECK_OK(vlm_golden_case_tensor(&golden, "input_ids", &golden_ids));
  CHECK_INT_EQ(built.count, golden_ids.shape[1]);
  CHECK_INT_EQ(built.feature_row_count, 576);
  CHECK_INT_EQ(built.media_tokens[VLM_MEDIA_IMAGE], 576);
  int differences = 0;
  for (int64_t i = 0; i < built.count && i < golden_ids.shape[1]; i++)
    differences += built.ids[i] != ((const int64_t *)golden_ids.data)[i];
  CHECK_INT_EQ(differences, 0);
  engine_prompt_release(&built);
  source.item_count = 2;
  CHECK_ERROR(engine_prompt_build(model, tokenizer, NULL, &source, &built), VLM_STATUS_INVALID_ARGUMENT,
              "the prompt has 1 image placeholder(s) (<image>) but the request has 2 image(s)");
  /* A placeholder the text spells out without an image is refused too. */
  source.item_count = 0;
  source.raw_prompt = "USER: <image>\n<image>\nHi";
  CHECK_OK(engine_prompt_build(model, tokenizer, NULL, &source, &built)); /* no images: plain tokens, as HF */
  engine_prompt_release(&built);
  source.item_count = 1;
  CHECK_ERROR(engine_prompt_build(model, tokenizer, NULL, &source, &built), VLM_STATUS_INVALID_ARGUMENT,
              "the prompt has 2 image placeholder(s) (<image>) but the request has 1 image(s)");
  release_item(items[0]);
  release_item(items[1]);
  vlm_tokenizer_release(tokenizer);
  vlm_model_release(model);
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
  vlm_model *model = open_model();
  if (!model) return;
  CHECK_OK(vlm_generator_open(model, &options, &generator));
  vlm_media_item *item = golden_item(model, &golden, 0, 0, 0);
  vlm_loaded_image images[1] = {{item, item->token_count, 0}};
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
  CHECK(images[0].item == NULL); /* taken over */
  /* A raw prompt with two placeholders and one image is refused. */
  request.raw_prompt = true;
  request.prompt = "USER: <image>\n<image>\nHi ASSISTANT:";
  item = golden_item(model, &golden, 0, 0, 0);
  images[0] = (vlm_loaded_image){item, item->token_count, 0};
  CHECK_ERROR(vlm_generate(generator, &request, &result), VLM_STATUS_INVALID_ARGUMENT,
              "2 image placeholder(s)");
  item = golden_item(model, &golden, 0, 0, 0);
  images[0] = (vlm_loaded_image){item, item->token_count, 0};
  request.audio_count = 1;
  CHECK_ERROR(vlm_generate(generator, &request, &result), VLM_STATUS_INVALID_ARGUMENT,
              "names 1 audio clip(s) but gives none");
  CHECK(images[0].item == NULL); /* freed even when refused */
  /* An audio clip for a family without an audio path: refused by name,
   * and the clip and the image are freed. */
  item = golden_item(model, &golden, 0, 0, 0);
  images[0] = (vlm_loaded_image){item, item->token_count, 0};
  vlm_media_item *clip = calloc(1, sizeof(*clip));
  clip->kind = VLM_MEDIA_AUDIO;
  clip->token_count = 1;
  vlm_loaded_audio audio[1] = {{clip, 1, 0}};
  request.audio = audio;
  CHECK_ERROR(vlm_generate(generator, &request, &result), VLM_STATUS_UNIMPLEMENTED,
              "model_type 'llava' takes no audio input");
  CHECK(images[0].item == NULL && audio[0].item == NULL);
  vlm_generator_release(generator);
  vlm_model_release(model);
  vlm_golden_case_close(&golden);
}

/* Families without a vision path refuse images by name. */
static void text_only_family_refuses_images(void) {
  vlm_generator *generator = NULL;
  vlm_generator_options options = {.thread_count = 1};
  vlm_model *model = NULL;
  CHECK_OK(vlm_model_open(VLM_SOURCE_DIR "/tests/models/llama", NULL, &model));
  if (model) CHECK_OK(vlm_generator_open(model, &options, &generator));
  vlm_model_release(model);
  if (!generator) return;
  vlm_media_item *item = calloc(1, sizeof(*item));
  item->kind = VLM_MEDIA_IMAGE;
  item->token_count = 1;
  vlm_loaded_image image = {item, 1, 0};
  vlm_generation_request request = {.prompt = "Hello", .max_tokens = 2, .images = &image, .image_count = 1,
                                     .sampling = vlm_generator_default_sampling(generator)};
  vlm_generation_result result;
  CHECK_ERROR(vlm_generate(generator, &request, &result), VLM_STATUS_UNIMPLEMENTED, "takes no image input");
  CHECK(image.item == NULL);
  vlm_generator_release(generator);
}

/* The ids of `messages` rendered by `chat_template` (unexpanded), or of
 * the rendered text `expected`, through the prompt builder. */
static int64_t prompt_ids(const vlm_model *model, const vlm_tokenizer *tokenizer,
                          const vlm_chat_template *chat_template, const char *messages, const char *expected,
                          int32_t *out, int64_t capacity) {
  engine_prompt_source source = {.messages_json = messages, .raw_prompt = expected,
                                 .raw_prompt_is_rendered_chat = true, .ids_only = true};
  engine_prompt built;
  CHECK_OK(engine_prompt_build(model, tokenizer, chat_template, &source, &built));
  if (TEST_CURRENT_FAILED()) return -1;
  int64_t count = built.count < capacity ? built.count : capacity;
  memcpy(out, built.ids, (size_t)count * sizeof(int32_t));
  engine_prompt_release(&built);
  return count;
}

/* A template that prints content as a string gets a message's image part
 * as the family's placeholder text before the text (vLLM's string content
 * format): the placeholder token's text by default (LLaVA's <image>), the
 * family's own where it declares one (Qwen-VL's vision_start, image_pad,
 * vision_end, as vLLM's get_placeholder_str; its ids through LLaVA's
 * tokenizer here, the tiny Qwen2-VL having only a patch against the
 * fixtures). */
static void string_templates_get_the_family_placeholder(void) {
  const char *text = "{% for m in messages %}{{ m['content'] }}{% endfor %}";
  vlm_chat_template *chat_template = NULL;
  CHECK_OK(vlm_chat_template_create(text, strlen(text), NULL, NULL, "t", &chat_template));
  vlm_tokenizer *tokenizer = NULL;
  CHECK_OK(vlm_tokenizer_create(MODEL, NULL, &tokenizer));
  vlm_model *llava = open_model(), *qwen = NULL;
  CHECK_OK(vlm_model_open(VLM_SOURCE_DIR "/tests/models/qwen2_vl", NULL, &qwen));
  if (TEST_CURRENT_FAILED()) goto done;
  const char *messages = "[{\"role\":\"user\",\"content\":[{\"type\":\"image\"},{\"type\":\"text\",\"text\":\"Hi\"}]}]";
  const struct {
    const vlm_model *model;
    const char *expected;
  } cases[] = {{llava, "<image>\nHi"}, {qwen, "<|vision_start|><|image_pad|><|vision_end|>\nHi"}};
  for (int c = 0; c < 2; c++) {
    int32_t got[64], want[64];
    int64_t got_count = prompt_ids(cases[c].model, tokenizer, chat_template, messages, NULL, got, 64);
    int64_t want_count = prompt_ids(cases[c].model, tokenizer, NULL, NULL, cases[c].expected, want, 64);
    CHECK_INT_EQ(got_count, want_count);
    CHECK(got_count > 0 && memcmp(got, want, (size_t)got_count * sizeof(int32_t)) == 0);
  }
done:
  vlm_model_release(qwen);
  vlm_model_release(llava);
  vlm_tokenizer_release(tokenizer);
  vlm_chat_template_release(chat_template);
}

TEST_MAIN(TEST(encoder_matches_golden_projector), TEST(vision_side_binds_no_decoder_tensor),
          TEST(placeholders_expand_to_golden_ids), TEST(generate_one_image_matches_golden),
          TEST(text_only_family_refuses_images), TEST(string_templates_get_the_family_placeholder))
