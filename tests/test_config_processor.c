/* generation_config.json, preprocessor_config.json and processor_config.json,
 * with the Transformers 5.23.0 defaults for what the files leave out. */
#include <sys/stat.h>

#include "io/config.h"
#include "test.h"

/* ---------------------------------------------------------------------- */
/* generation_config.json                                                  */
/* ---------------------------------------------------------------------- */

static vlm_status parse_generation(const char *text, vlm_generation_config *config) {
  return vlm_generation_config_parse(text, text ? strlen(text) : 0, "generation_config.json",
                                     NULL, config);
}

/* Qwen/Qwen2-VL-2B-Instruct/generation_config.json. */
static void generation_config_reads_an_eos_list(void) {
  vlm_generation_config config;
  CHECK_OK(parse_generation(
      "{\"bos_token_id\": 151643, \"pad_token_id\": 151643, \"do_sample\": true,"
      " \"eos_token_id\": [151645, 151643], \"repetition_penalty\": 1.05, \"temperature\": 0.1,"
      " \"top_p\": 0.001, \"top_k\": 1, \"transformers_version\": \"4.37.0\"}",
      &config));
  CHECK(config.file_present);
  CHECK_INT_EQ(config.bos_token_id, 151643);
  CHECK_INT_EQ(config.pad_token_id, 151643);
  CHECK_INT_EQ(config.eos_token_ids.count, 2);
  CHECK_INT_EQ(config.eos_token_ids.ids[0], 151645);
  CHECK_INT_EQ(config.eos_token_ids.ids[1], 151643);
  CHECK(config.do_sample);
  CHECK_NEAR(config.temperature, 0.1, 0);
  CHECK_NEAR(config.top_p, 0.001, 0);
  CHECK_INT_EQ(config.top_k, 1);
  CHECK_NEAR(config.repetition_penalty, 1.05, 0);
  /* Unset in the file: generate()'s fallbacks. */
  CHECK_INT_EQ(config.max_length, 20);
  CHECK_INT_EQ(config.max_new_tokens, 0);
  CHECK_NEAR(config.min_p, 0, 0);
  vlm_generation_config_release(&config);
}

/* GenerationConfig._get_default_generation_params for an absent file, and
 * for nulls (which Transformers treats as unset). */
static void generation_config_defaults(void) {
  static const char *const inputs[] = {NULL, "{}",
                                       "{\"temperature\": null, \"top_k\": null, \"max_length\": null,"
                                       " \"eos_token_id\": null}"};
  for (size_t i = 0; i < 3; i++) {
    vlm_generation_config config;
    CHECK_OK(parse_generation(inputs[i], &config));
    CHECK(config.file_present == (inputs[i] != NULL));
    CHECK(!config.do_sample);
    CHECK_NEAR(config.temperature, 1.0, 0);
    CHECK_INT_EQ(config.top_k, 50);
    CHECK_NEAR(config.top_p, 1.0, 0);
    CHECK_NEAR(config.min_p, 0, 0);
    CHECK_NEAR(config.repetition_penalty, 1.0, 0);
    CHECK_INT_EQ(config.max_length, 20);
    CHECK_INT_EQ(config.max_new_tokens, 0);
    CHECK_INT_EQ(config.bos_token_id, -1);
    CHECK_INT_EQ(config.pad_token_id, -1);
    CHECK_INT_EQ(config.eos_token_ids.count, 0);
    vlm_generation_config_release(&config);
  }
}

static void generation_config_refuses_bad_values(void) {
  vlm_generation_config config;
  CHECK_ERROR(parse_generation("{\"top_p\": 1.5}", &config), VLM_STATUS_INVALID_ARGUMENT,
              "generation_config.json: top_p must be a number in [0, 1], got 1.5");
  CHECK_ERROR(parse_generation("{\"max_new_tokens\": 0}", &config), VLM_STATUS_INVALID_ARGUMENT,
              "max_new_tokens must be a positive integer, got 0");
  CHECK_ERROR(parse_generation("{\"temperature\": \"hot\"}", &config),
              VLM_STATUS_INVALID_ARGUMENT, "temperature must be a number");
  CHECK_ERROR(parse_generation("{\"eos_token_id\": -5}", &config), VLM_STATUS_INVALID_ARGUMENT,
              "eos_token_id must be a non-negative integer, got -5");
  CHECK_ERROR(parse_generation("{\"do_sample\": 1}", &config), VLM_STATUS_INVALID_ARGUMENT,
              "do_sample must be true or false, got 1");
  CHECK_ERROR(parse_generation("[]", &config), VLM_STATUS_INVALID_ARGUMENT,
              "top level must be a JSON object");
  CHECK_ERROR(parse_generation("{\"top_k\": 4", &config), VLM_STATUS_DATA_LOSS, "invalid JSON");
}

static void generation_config_loads_from_a_directory(void) {
  char directory[512];
  snprintf(directory, sizeof(directory), "%s/generation", test_temp_dir());
  mkdir(directory, 0700);
  vlm_generation_config config;
  CHECK_OK(vlm_generation_config_load(directory, NULL, &config));
  CHECK(!config.file_present);
  CHECK_INT_EQ(config.top_k, 50);
  vlm_generation_config_release(&config);
  const char text[] = "{\"eos_token_id\": [1, 106], \"max_new_tokens\": 64}";
  free(test_write_file(directory, "generation_config.json", text, strlen(text)));
  CHECK_OK(vlm_generation_config_load(directory, NULL, &config));
  CHECK(config.file_present);
  CHECK_INT_EQ(config.eos_token_ids.ids[1], 106);
  CHECK_INT_EQ(config.max_new_tokens, 64);
  vlm_generation_config_release(&config);
}

/* ---------------------------------------------------------------------- */
/* Processor configs                                                       */
/* ---------------------------------------------------------------------- */

static vlm_status parse_processor(const char *preprocessor, const char *processor,
                                  vlm_processor_config *config) {
  return vlm_processor_config_parse(preprocessor, preprocessor ? strlen(preprocessor) : 0,
                                    processor, processor ? strlen(processor) : 0, NULL, config);
}

/* llava-hf/llava-1.5-7b-hf: preprocessor_config.json and processor_config.json. */
static const char llava_preprocessor[] =
    "{\"crop_size\": {\"height\": 336, \"width\": 336}, \"do_center_crop\": true,"
    " \"do_convert_rgb\": true, \"do_normalize\": true, \"do_rescale\": true, \"do_resize\": true,"
    " \"image_mean\": [0.48145466, 0.4578275, 0.40821073], \"image_processor_type\":"
    " \"CLIPImageProcessor\", \"image_std\": [0.26862954, 0.26130258, 0.27577711],"
    " \"processor_class\": \"LlavaProcessor\", \"resample\": 3,"
    " \"rescale_factor\": 0.00392156862745098, \"size\": {\"shortest_edge\": 336}}";
static const char llava_processor[] =
    "{\"image_token\": \"<image>\", \"num_additional_image_tokens\": 1, \"patch_size\": 14,"
    " \"processor_class\": \"LlavaProcessor\", \"vision_feature_select_strategy\": \"default\"}";

static void clip_processor_for_llava(void) {
  vlm_processor_config config;
  CHECK_OK(parse_processor(llava_preprocessor, llava_processor, &config));
  CHECK_STR_EQ(config.image_processor_type, "CLIPImageProcessor");
  CHECK_STR_EQ(config.processor_class, "LlavaProcessor");
  CHECK(config.do_resize);
  CHECK_INT_EQ(config.size.kind, VLM_IMAGE_SIZE_SHORTEST_EDGE);
  CHECK_INT_EQ(config.size.shortest_edge, 336);
  CHECK_INT_EQ(config.resample, 3);
  CHECK(config.do_center_crop);
  CHECK_INT_EQ(config.crop_size.kind, VLM_IMAGE_SIZE_HEIGHT_WIDTH);
  CHECK_INT_EQ(config.crop_size.height, 336);
  CHECK(config.do_rescale);
  CHECK_NEAR(config.rescale_factor, 1.0 / 255.0, 1e-17);
  CHECK(config.do_normalize);
  CHECK_NEAR(config.image_mean[0], 0.48145466, 0);
  CHECK_NEAR(config.image_std[2], 0.27577711, 0);
  CHECK(config.do_convert_rgb);
  CHECK_INT_EQ(config.num_additional_image_tokens, 1);
  CHECK_INT_EQ(config.processor_patch_size, 14);
  CHECK_STR_EQ(config.vision_feature_select_strategy, "default");
  CHECK(config.processor_section != NULL);
  vlm_processor_config_release(&config);
  /* Without processor_config.json: LlavaProcessor's __init__ defaults. */
  CHECK_OK(parse_processor(llava_preprocessor, NULL, &config));
  CHECK_INT_EQ(config.num_additional_image_tokens, 0);
  CHECK_INT_EQ(config.processor_patch_size, 0);
  CHECK(config.vision_feature_select_strategy == NULL);
  CHECK(config.processor_section == NULL);
  vlm_processor_config_release(&config);
}

/* An empty CLIP file gets CLIPImageProcessor's class attributes. */
static void clip_class_defaults(void) {
  vlm_processor_config config;
  CHECK_OK(parse_processor("{\"image_processor_type\": \"CLIPImageProcessorFast\"}", NULL, &config));
  CHECK_STR_EQ(config.image_processor_type, "CLIPImageProcessor");
  CHECK_INT_EQ(config.size.shortest_edge, 224);
  CHECK_INT_EQ(config.crop_size.width, 224);
  CHECK(config.do_center_crop && config.do_convert_rgb);
  CHECK_NEAR(config.image_mean[1], 0.4578275, 0);
  vlm_processor_config_release(&config);
  /* A bare int size is the shortest edge for CLIP (default_to_square false),
   * and a legacy feature extractor name maps to the image processor. */
  CHECK_OK(parse_processor("{\"feature_extractor_type\": \"CLIPFeatureExtractor\", \"size\": 256,"
                           " \"crop_size\": 256}",
                           NULL, &config));
  CHECK_STR_EQ(config.image_processor_type, "CLIPImageProcessor");
  CHECK_INT_EQ(config.size.kind, VLM_IMAGE_SIZE_SHORTEST_EDGE);
  CHECK_INT_EQ(config.size.shortest_edge, 256);
  CHECK_INT_EQ(config.crop_size.kind, VLM_IMAGE_SIZE_HEIGHT_WIDTH);
  CHECK_INT_EQ(config.crop_size.height, 256);
  vlm_processor_config_release(&config);
}

/* Qwen/Qwen2-VL-2B-Instruct/preprocessor_config.json. */
static void qwen2_vl_min_max_pixels_become_the_size(void) {
  vlm_processor_config config;
  CHECK_OK(parse_processor(
      "{\"min_pixels\": 3136, \"max_pixels\": 12845056, \"patch_size\": 14,"
      " \"temporal_patch_size\": 2, \"merge_size\": 2,"
      " \"image_mean\": [0.48145466, 0.4578275, 0.40821073],"
      " \"image_std\": [0.26862954, 0.26130258, 0.27577711],"
      " \"image_processor_type\": \"Qwen2VLImageProcessor\", \"processor_class\": \"Qwen2VLProcessor\"}",
      NULL, &config));
  CHECK_STR_EQ(config.image_processor_type, "Qwen2VLImageProcessor");
  CHECK_STR_EQ(config.processor_class, "Qwen2VLProcessor");
  CHECK_INT_EQ(config.size.kind, VLM_IMAGE_SIZE_SHORTEST_LONGEST_EDGE);
  CHECK_INT_EQ(config.size.shortest_edge, 3136);
  CHECK_INT_EQ(config.size.longest_edge, 12845056);
  CHECK_INT_EQ(config.min_pixels, 3136);
  CHECK_INT_EQ(config.max_pixels, 12845056);
  CHECK_INT_EQ(config.patch_size, 14);
  CHECK_INT_EQ(config.temporal_patch_size, 2);
  CHECK_INT_EQ(config.merge_size, 2);
  CHECK_INT_EQ(config.resample, 3);
  CHECK(!config.do_center_crop);
  CHECK(config.do_convert_rgb && config.do_rescale && config.do_normalize);
  vlm_processor_config_release(&config);
  /* Class defaults: size {shortest_edge: 56*56, longest_edge: 28*28*1280}. */
  CHECK_OK(parse_processor("{\"image_processor_type\": \"Qwen2VLImageProcessorFast\"}", NULL,
                           &config));
  CHECK_INT_EQ(config.min_pixels, 3136);
  CHECK_INT_EQ(config.max_pixels, 1003520);
  vlm_processor_config_release(&config);
  /* A Qwen3-VL style file: size given directly. */
  CHECK_OK(parse_processor("{\"image_processor_type\": \"Qwen2VLImageProcessorFast\","
                           " \"patch_size\": 16, \"image_mean\": [0.5, 0.5, 0.5],"
                           " \"size\": {\"longest_edge\": 16777216, \"shortest_edge\": 65536}}",
                           NULL, &config));
  CHECK_INT_EQ(config.min_pixels, 65536);
  CHECK_INT_EQ(config.max_pixels, 16777216);
  CHECK_INT_EQ(config.patch_size, 16);
  CHECK_NEAR(config.image_mean[0], 0.5, 0);
  vlm_processor_config_release(&config);
}

/* Qwen2VLImageProcessor.__init__'s size handling in 5.23 (checked against
 * it with tools/oracle: the comments say what Transformers does). */
static void qwen2_vl_size_as_transformers_reads_it(void) {
  vlm_processor_config config;
  /* Loads; the processor refuses the first image (resize's ValueError). */
  CHECK_OK(parse_processor("{\"image_processor_type\": \"Qwen2VLImageProcessor\","
                           " \"size\": {\"height\": 224, \"width\": 224}}", NULL, &config));
  CHECK_INT_EQ(config.size.kind, VLM_IMAGE_SIZE_HEIGHT_WIDTH);
  CHECK_INT_EQ(config.min_pixels, 0);
  CHECK_INT_EQ(config.max_pixels, 0);
  vlm_processor_config_release(&config);
  /* A legacy size {min_pixels, max_pixels} alone replaces the class size
   * whole: loads, and the first image fails. */
  CHECK_OK(parse_processor("{\"image_processor_type\": \"Qwen2VLImageProcessor\","
                           " \"size\": {\"min_pixels\": 3136, \"max_pixels\": 12845056}}", NULL,
                           &config));
  CHECK_INT_EQ(config.size.kind, VLM_IMAGE_SIZE_MIN_MAX_PIXELS);
  CHECK_INT_EQ(config.min_pixels, 0);
  vlm_processor_config_release(&config);
  /* ... with the top-level keys too (4.4x saves): they become the size. */
  CHECK_OK(parse_processor("{\"image_processor_type\": \"Qwen2VLImageProcessor\","
                           " \"size\": {\"min_pixels\": 3136, \"max_pixels\": 12845056},"
                           " \"min_pixels\": 3136, \"max_pixels\": 12845056}", NULL, &config));
  CHECK_INT_EQ(config.size.kind, VLM_IMAGE_SIZE_SHORTEST_LONGEST_EDGE);
  CHECK_INT_EQ(config.min_pixels, 3136);
  CHECK_INT_EQ(config.max_pixels, 12845056);
  vlm_processor_config_release(&config);
  /* A top-level max_pixels overrides size.longest_edge. */
  CHECK_OK(parse_processor("{\"image_processor_type\": \"Qwen2VLImageProcessor\","
                           " \"size\": {\"shortest_edge\": 100, \"longest_edge\": 200000},"
                           " \"max_pixels\": 50000}", NULL, &config));
  CHECK_INT_EQ(config.min_pixels, 100);
  CHECK_INT_EQ(config.max_pixels, 50000);
  vlm_processor_config_release(&config);
  /* min_pixels above max_pixels is accepted (smart_resize decides). */
  CHECK_OK(parse_processor("{\"image_processor_type\": \"Qwen2VLImageProcessor\","
                           " \"min_pixels\": 100000, \"max_pixels\": 5000}", NULL, &config));
  CHECK_INT_EQ(config.min_pixels, 100000);
  CHECK_INT_EQ(config.max_pixels, 5000);
  vlm_processor_config_release(&config);
  /* size {min_pixels, max_pixels} with only min_pixels: the keys left,
   * {shortest_edge, max_pixels}, are no valid size dict (ValueError). */
  CHECK_ERROR(parse_processor("{\"image_processor_type\": \"Qwen2VLImageProcessor\","
                              " \"size\": {\"min_pixels\": 3136, \"max_pixels\": 12845056},"
                              " \"min_pixels\": 4000}", NULL, &config),
              VLM_STATUS_INVALID_ARGUMENT, "size must be one of the size key sets");
  /* An int size with min/max pixels: size["longest_edge"] = ... (TypeError). */
  CHECK_ERROR(parse_processor("{\"image_processor_type\": \"Qwen2VLImageProcessor\","
                              " \"size\": 224, \"max_pixels\": 5000}", NULL, &config),
              VLM_STATUS_INVALID_ARGUMENT, "size must be a dict when min_pixels or max_pixels");
}

/* google/gemma-3-4b-it: preprocessor_config.json (with nulls, meaning "the
 * class default") and processor_config.json. */
static const char gemma3_preprocessor[] =
    "{\"do_convert_rgb\": null, \"do_normalize\": true, \"do_pan_and_scan\": null,"
    " \"do_rescale\": true, \"do_resize\": true, \"image_mean\": [0.5, 0.5, 0.5],"
    " \"image_processor_type\": \"Gemma3ImageProcessor\", \"image_seq_length\": 256,"
    " \"image_std\": [0.5, 0.5, 0.5], \"pan_and_scan_max_num_crops\": null,"
    " \"pan_and_scan_min_crop_size\": null, \"pan_and_scan_min_ratio_to_activate\": null,"
    " \"processor_class\": \"Gemma3Processor\", \"resample\": 2,"
    " \"rescale_factor\": 0.00392156862745098, \"size\": {\"height\": 896, \"width\": 896}}";

static void gemma3_processor(void) {
  vlm_processor_config config;
  CHECK_OK(parse_processor(gemma3_preprocessor,
                           "{\"image_seq_length\": 256, \"processor_class\": \"Gemma3Processor\"}",
                           &config));
  CHECK_STR_EQ(config.image_processor_type, "Gemma3ImageProcessor");
  CHECK(config.do_convert_rgb); /* null -> Gemma3ImageProcessor.do_convert_rgb */
  CHECK_INT_EQ(config.size.kind, VLM_IMAGE_SIZE_HEIGHT_WIDTH);
  CHECK_INT_EQ(config.size.height, 896);
  CHECK_INT_EQ(config.size.width, 896);
  CHECK_INT_EQ(config.resample, 2);
  CHECK(!config.do_center_crop);
  CHECK_INT_EQ(config.crop_size.kind, VLM_IMAGE_SIZE_NONE);
  CHECK_NEAR(config.image_std[1], 0.5, 0);
  CHECK_INT_EQ(config.image_seq_length, 256);
  vlm_processor_config_release(&config);
  /* Without processor_config.json: Gemma3Processor(image_seq_length=256). */
  CHECK_OK(parse_processor(gemma3_preprocessor, NULL, &config));
  CHECK_INT_EQ(config.image_seq_length, 256);
  vlm_processor_config_release(&config);
  /* An int size is a square for Gemma 3 (default_to_square true). */
  CHECK_OK(parse_processor("{\"image_processor_type\": \"Gemma3ImageProcessor\", \"size\": 448}",
                           NULL, &config));
  CHECK_INT_EQ(config.size.kind, VLM_IMAGE_SIZE_HEIGHT_WIDTH);
  CHECK_INT_EQ(config.size.width, 448);
  vlm_processor_config_release(&config);
}

/* Transformers 5 reads processor_config.json's nested "image_processor"
 * instead of preprocessor_config.json when it has one. */
static void nested_image_processor_replaces_the_preprocessor_file(void) {
  vlm_processor_config config;
  CHECK_OK(parse_processor(llava_preprocessor,
                           "{\"processor_class\": \"LlavaProcessor\", \"patch_size\": 14,"
                           " \"image_processor\": {\"image_processor_type\": \"SiglipImageProcessor\","
                           " \"size\": {\"height\": 384, \"width\": 384}}}",
                           &config));
  CHECK_STR_EQ(config.image_processor_type, "SiglipImageProcessor");
  CHECK_INT_EQ(config.size.height, 384);
  CHECK(!config.do_center_crop); /* nothing taken from preprocessor_config.json */
  CHECK_NEAR(config.image_mean[0], 0.5, 0);
  CHECK_INT_EQ(config.resample, 3);
  CHECK_INT_EQ(config.processor_patch_size, 14);
  vlm_processor_config_release(&config);
}

static void processor_config_refusals(void) {
  vlm_processor_config config;
  CHECK_ERROR(parse_processor(NULL, NULL, &config), VLM_STATUS_NOT_FOUND, "no image processor");
  CHECK_ERROR(parse_processor(NULL, "{\"processor_class\": \"LlavaProcessor\"}", &config),
              VLM_STATUS_NOT_FOUND, "no image processor");
  CHECK_ERROR(parse_processor("{\"image_processor_type\": \"DonutImageProcessor\"}", NULL, &config),
              VLM_STATUS_UNIMPLEMENTED,
              "preprocessor_config.json: image_processor_type \"DonutImageProcessor\" is not "
              "supported (supported: CLIPImageProcessor");
  CHECK_ERROR(parse_processor("{\"size\": 224}", NULL, &config), VLM_STATUS_INVALID_ARGUMENT,
              "image_processor_type is missing");
  CHECK_ERROR(parse_processor("{\"image_processor_type\": \"CLIPImageProcessor\","
                              " \"size\": {\"height\": 224}}",
                              NULL, &config),
              VLM_STATUS_INVALID_ARGUMENT, "size must be one of the size key sets");
  CHECK_ERROR(parse_processor("{\"image_processor_type\": \"CLIPImageProcessor\","
                              " \"size\": {\"edge\": 224}}",
                              NULL, &config),
              VLM_STATUS_INVALID_ARGUMENT, "size must be a size dict of positive integers");
  CHECK_ERROR(parse_processor("{\"image_processor_type\": \"CLIPImageProcessor\","
                              " \"image_mean\": [0.5, 0.5]}",
                              NULL, &config),
              VLM_STATUS_INVALID_ARGUMENT, "image_mean must be a number or a list of 3 numbers");
  CHECK_ERROR(parse_processor("{\"image_processor_type\": \"CLIPImageProcessor\", \"resample\": 9}",
                              NULL, &config),
              VLM_STATUS_INVALID_ARGUMENT, "resample must be a non-negative integer no larger than 5");
  CHECK_ERROR(parse_processor("{\"image_processor_type\": \"CLIPImageProcessor\"}",
                              "{\"image_processor\": 5}", &config),
              VLM_STATUS_INVALID_ARGUMENT,
              "processor_config.json: image_processor must be an object, got 5");
  CHECK_ERROR(parse_processor("{\"image_processor_type\": \"CLIPImageProcessor\"}",
                              "{\"num_additional_image_tokens\": \"one\"}", &config),
              VLM_STATUS_INVALID_ARGUMENT,
              "processor_config.json: num_additional_image_tokens must be a non-negative integer");
}

static void processor_config_loads_from_a_directory(void) {
  char directory[512];
  snprintf(directory, sizeof(directory), "%s/processor", test_temp_dir());
  mkdir(directory, 0700);
  vlm_processor_config config;
  CHECK_ERROR(vlm_processor_config_load(directory, NULL, &config), VLM_STATUS_NOT_FOUND,
              "no image processor");
  free(test_write_file(directory, "preprocessor_config.json", llava_preprocessor,
                       strlen(llava_preprocessor)));
  free(test_write_file(directory, "processor_config.json", llava_processor, strlen(llava_processor)));
  CHECK_OK(vlm_processor_config_load(directory, NULL, &config));
  CHECK_INT_EQ(config.size.shortest_edge, 336);
  CHECK_INT_EQ(config.num_additional_image_tokens, 1);
  vlm_processor_config_release(&config);
}

TEST_MAIN(TEST(generation_config_reads_an_eos_list), TEST(generation_config_defaults),
          TEST(generation_config_refuses_bad_values),
          TEST(generation_config_loads_from_a_directory), TEST(clip_processor_for_llava),
          TEST(clip_class_defaults), TEST(qwen2_vl_min_max_pixels_become_the_size),
          TEST(qwen2_vl_size_as_transformers_reads_it),
          TEST(gemma3_processor), TEST(nested_image_processor_replaces_the_preprocessor_file),
          TEST(processor_config_refusals), TEST(processor_config_loads_from_a_directory))
