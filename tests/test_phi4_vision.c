/* Phi-4-multimodal's image path outside the goldens: the processor's
 * layouts (HD image size, crop count, num_img_tokens) against what
 * Transformers 5.23's Phi4MultimodalImageProcessor returned for each size
 * (at the class defaults, 448 px crops of 14 px patches and dynamic_hd 36,
 * and at the tiny model's 64 / 2 / 6), its refusal of extreme aspect
 * ratios, and `vlm inspect` declaring every image_embed tensor of the
 * checkpoint (none left "unexpected"). */
#include <stdlib.h>
#include <string.h>

#include "io/config.h"
#include "media/image_processor_phi4.h"
#include "test.h"
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

TEST_MAIN(TEST(default_layouts_match_transformers), TEST(tiny_layouts_match_transformers),
          TEST(extreme_aspect_ratios_are_refused), TEST(inspect_knows_the_vision_tensors))
