/* Phi-4-multimodal's image path outside the goldens: the processor's
 * layouts (HD image size, crop count, num_img_tokens) against what
 * Transformers 5.23's Phi4MultimodalImageProcessor returned for each size
 * (at the class defaults, 448 px crops of 14 px patches and dynamic_hd 36,
 * and at the tiny model's 64 / 2 / 6), its refusal of extreme aspect
 * ratios, and `vlm inspect` declaring every image_embed tensor of the
 * checkpoint (none left "unexpected"), and that a request's padding
 * decides the tower's mode (causal without any: Transformers' sdpa) for
 * every image of it, its digest included. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_encoder.h"
#include "io/config.h"
#include "io/json.h"
#include "media/image_processor_phi4.h"
#include "media/media_item.h"
#include "models/model.h"
#include "test.h"
#include "validate/compare.h"
#include "validate/golden.h"
#include "validate/golden_media.h"
#include "vlm.h"

#define MODEL_DIR VLM_SOURCE_DIR "/tests/models/phi4_multimodal"

typedef struct layout_case {
  int64_t width, height;
  int64_t hd_height, hd_width, tokens, images; /* image_sizes, num_img_tokens, 1 + crops */
} layout_case;

static void check_layouts(const char *processor_json, const layout_case *cases, size_t count) {
  vlm_processor_config config;
  CHECK_OK(vlm_processor_config_parse(processor_json, strlen(processor_json), NULL, 0, NULL, &config));
  if (TEST_CURRENT_FAILED()) return;
  for (size_t i = 0; i < count; i++) {
    vlm_phi4_image_layout layout;
    CHECK_OK(vlm_phi4_image_layout_for(&config, cases[i].width, cases[i].height, &layout));
    CHECK_INT_EQ(layout.target_h, cases[i].hd_height);
    CHECK_INT_EQ(layout.target_w, cases[i].hd_width);
    CHECK_INT_EQ(layout.token_count, cases[i].tokens);
    CHECK_INT_EQ(1 + layout.crops_w * layout.crops_h, cases[i].images);
    int64_t grid[3] = {0};
    CHECK_OK(vlm_phi4_image_grid(&config, cases[i].width, cases[i].height, grid));
    CHECK_INT_EQ(grid[0], cases[i].images);
  }
  vlm_processor_config_release(&config);
}

/* Transformers 5.23 on zero images of each size (the layout depends on the
 * size alone). */
static void default_layouts_match_transformers(void) {
  static const layout_case cases[] = {
      {451, 300, 448, 896, 689, 3},      {1000, 872, 896, 1344, 1489, 7}, {4000, 20, 448, 4032, 418, 10},
      {20, 3000, 3136, 448, 497, 8},     {448, 448, 448, 448, 545, 2},    {449, 448, 448, 896, 561, 3},
      {1280, 720, 896, 1344, 1596, 7},   {100, 5000, 5376, 448, 1233, 13}, {5000, 300, 448, 5376, 2589, 13},
      /* 81 crops wanted: the aspect-ratio search over 36 */
      {3900, 3600, 2688, 2688, 8906, 37},
  };
  check_layouts("{\"image_processor_type\": \"Phi4MultimodalImageProcessor\"}", cases,
                sizeof(cases) / sizeof(cases[0]));
}

static const char tiny_processor[] =
    "{\"image_processor_type\": \"Phi4MultimodalImageProcessor\", \"size\": {\"height\": 64, \"width\": 64}, "
    "\"patch_size\": 2, \"dynamic_hd\": 6}";

/* The tiny model's processor on the fixture images' sizes. */
static void tiny_layouts_match_transformers(void) {
  static const layout_case cases[] = {
      {14, 25, 64, 64, 433, 2},    /* no_time_for_that_tiny.gif: 14 padded columns */
      {400, 328, 128, 128, 1131, 5}, /* horse.png: 42 crops wanted, 2x2 chosen */
      {451, 300, 128, 192, 1841, 7}, /* chelsea.png */
      {10, 10, 64, 64, 545, 2},    /* palette_color.png */
  };
  check_layouts(tiny_processor, cases, sizeof(cases) / sizeof(cases[0]));
}

/* tall_20x3000.png at 64 px crops: Transformers raises "the aspect ratio
 * is very extreme (2, 384)". */
static void extreme_aspect_ratios_are_refused(void) {
  vlm_processor_config config;
  CHECK_OK(vlm_processor_config_parse(tiny_processor, strlen(tiny_processor), NULL, 0, NULL, &config));
  if (TEST_CURRENT_FAILED()) return;
  vlm_phi4_image_layout layout;
  CHECK_ERROR(vlm_phi4_image_layout_for(&config, 20, 3000, &layout), VLM_STATUS_INVALID_ARGUMENT, "very extreme");
  vlm_processor_config_release(&config);
}

/* Every model.embed_tokens_extend.image_embed tensor is declared (the tower,
 * its unused pooling head and post_layernorm, the separators, the
 * projector), so inspect reports none of them unexpected. */
static void inspect_knows_the_vision_tensors(void) {
  vlm_model_report *report = NULL;
  CHECK_OK(vlm_model_inspect(MODEL_DIR, NULL, &report));
  if (!report) return;
  const char *json = vlm_model_report_text(report, true);
  const char *unexpected = json ? strstr(json, "\"unexpected\"") : NULL;
  CHECK(unexpected != NULL);
  /* The list runs to its matching bracket (shapes nest inside it). */
  const char *start = unexpected ? strchr(unexpected, '[') : NULL, *end = start;
  for (int depth = 0; end && *end; end++) {
    depth += *end == '[' ? 1 : *end == ']' ? -1 : 0;
    if (depth == 0) break;
  }
  CHECK(start && end && *end == ']');
  const char *found = start ? strstr(start, "image_embed") : NULL;
  CHECK(!found || found > end); /* no image_embed name in the unexpected list */
  vlm_model_report_release(report);
}

/* palette_color.png alone (no padded patch: Transformers' sdpa runs the
 * tower causally) and beside a padded GIF (bidirectional): the item's
 * request_traits, and so its digest (the encoder cache's key), differ, and
 * each encodes to its own golden's projector rows. */
static void open_case_items(vlm_model *model, const char *name, vlm_golden_case *golden, vlm_media_item **items,
                            int *count) {
  char case_dir[512];
  snprintf(case_dir, sizeof(case_dir), "%s/tests/goldens/phi4_multimodal/%s", VLM_SOURCE_DIR, name);
  CHECK_OK(vlm_golden_case_open(case_dir, NULL, golden));
  vlm_compare_context context = {.model_directory = MODEL_DIR, .model = model, .golden = golden, .thread_count = 1};
  CHECK_OK(vlm_golden_media_items(&context, items, count));
  for (int i = 0; i < *count; i++) vlm_media_item_digest(&(*items)[i], (*items)[i].content_digest);
}

/* The manifest's images[index], or "". */
static const char *json_string_at(const vlm_golden_case *golden, size_t index) {
  const vlm_json_value *images = golden->manifest.root ? vlm_json_object_get(golden->manifest.root, "images") : NULL;
  const char *name = images && images->type == VLM_JSON_ARRAY && index < images->as.array.count
                         ? vlm_json_get_string(&images->as.array.items[index])
                         : NULL;
  return name ? name : "";
}

/* The first `tokens` rows of the cpu encode of `item` against the golden's
 * projector rows from `offset`: max |a - b| / (1e-4 + 1e-4 |b|). */
static double encode_error(vlm_cpu_encoder *cpu, const vlm_media_item *item, vlm_golden_case *golden,
                           int64_t offset) {
  vlm_tensor expected;
  CHECK_OK(vlm_golden_case_tensor(golden, "projector", &expected));
  int64_t width = vlm_cpu_encoder_output_width(cpu), values = item->token_count * width;
  float *got = malloc((size_t)values * sizeof(float));
  double worst = INFINITY;
  if (got && !TEST_CURRENT_FAILED()) {
    CHECK_OK(vlm_cpu_encoder_encode(cpu, item, got));
    worst = 0;
    const float *want = (const float *)expected.data + offset * width;
    for (int64_t i = 0; i < values; i++) {
      double ratio = fabs((double)got[i] - want[i]) / (1e-4 + 1e-4 * fabs((double)want[i]));
      if (!(ratio <= worst)) worst = ratio;
    }
  }
  free(got);
  return worst;
}

static void a_requests_padding_decides_the_towers_mode(void) {
  vlm_model *model = NULL;
  CHECK_OK(vlm_model_open(MODEL_DIR, NULL, &model));
  if (!model) return;
  vlm_golden_case alone_case, pair_case;
  vlm_media_item *alone = NULL, *pair = NULL;
  int alone_count = 0, pair_count = 0;
  open_case_items(model, "unpadded_image", &alone_case, &alone, &alone_count);
  open_case_items(model, "two_images", &pair_case, &pair, &pair_count);
  vlm_cpu_encoder *cpu = NULL;
  CHECK_OK(vlm_cpu_encoder_open(model, VLM_MEDIA_IMAGE, NULL, &cpu));
  if (alone_count == 1 && pair_count == 2 && cpu && !TEST_CURRENT_FAILED()) {
    /* The same processed image (palette_color.png) in both requests. */
    CHECK_STR_EQ(json_string_at(&alone_case, 0), "palette_color.png");
    CHECK_STR_EQ(json_string_at(&pair_case, 0), "palette_color.png");
    CHECK_INT_EQ(alone[0].request_traits, 0);
    CHECK(pair[0].request_traits != 0 && pair[0].request_traits == pair[1].request_traits);
    CHECK(memcmp(alone[0].content_digest, pair[0].content_digest, 32) != 0);
    double causal = encode_error(cpu, &alone[0], &alone_case, 0);
    double bidirectional = encode_error(cpu, &pair[0], &pair_case, 0);
    printf("  palette_color.png alone %.3g, beside a padded image %.3g of the tolerance\n", causal, bidirectional);
    CHECK(causal <= 1.0);
    CHECK(bidirectional <= 1.0);
    /* Encoded as the other request would, each misses its golden. */
    alone[0].request_traits = pair[0].request_traits;
    CHECK(encode_error(cpu, &alone[0], &alone_case, 0) > 1.0);
  }
  vlm_cpu_encoder_release(cpu);
  vlm_golden_media_items_release(alone, alone_count);
  vlm_golden_media_items_release(pair, pair_count);
  vlm_golden_case_close(&alone_case);
  vlm_golden_case_close(&pair_case);
  vlm_model_release(model);
}

TEST_MAIN(TEST(default_layouts_match_transformers), TEST(tiny_layouts_match_transformers),
          TEST(extreme_aspect_ratios_are_refused), TEST(inspect_knows_the_vision_tensors),
          TEST(a_requests_padding_decides_the_towers_mode))
