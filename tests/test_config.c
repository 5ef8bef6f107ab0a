/* config.json parsing: real-looking Hugging Face files for every family, the
 * Transformers 5.23.0 defaults for what they leave out (expected values were
 * read from the Transformers classes themselves), and the refusals of
 * malformed or hostile input. Generation and processor configs are in
 * test_config_processor.c. */
#include <sys/stat.h>

#include "io/config.h"
#include "io/config_record.h"
#include "test.h"

static vlm_status parse(const char *text, vlm_model_config *config) {
  return vlm_model_config_parse(text, strlen(text), "config.json", NULL, config);
}

/* Asserts that parsing succeeds; on failure the config is zeroed. */
static bool parse_ok(const char *text, vlm_model_config *config) {
  vlm_status status = parse(text, config);
  if (status) {
    fprintf(stderr, "  %s: parse failed: %s\n", test_current, vlm_status_message(status));
    vlm_status_free(status);
    test_failures++;
    return false;
  }
  return true;
}

static void check_layers(const vlm_text_config *text, const char *expected) {
  CHECK_INT_EQ(text->num_hidden_layers, (long long)strlen(expected));
  for (int64_t i = 0; i < text->num_hidden_layers && expected[i]; i++) {
    vlm_layer_attention want = expected[i] == 'S' ? VLM_LAYER_ATTENTION_SLIDING
                                                  : VLM_LAYER_ATTENTION_FULL;
    if (text->layer_types[i] != want) {
      fprintf(stderr, "  %s: layer %lld is %d, expected %c\n", test_current, (long long)i,
              (int)text->layer_types[i], expected[i]);
      test_failures++;
      return;
    }
  }
}

/* ---------------------------------------------------------------------- */
/* LLaVA                                                                   */
/* ---------------------------------------------------------------------- */

/* llava-hf/llava-1.5-7b-hf/config.json, as published (v4, torch_dtype). */
static const char llava_1_5_7b[] =
    "{\n"
    "  \"architectures\": [\"LlavaForConditionalGeneration\"],\n"
    "  \"ignore_index\": -100,\n"
    "  \"image_token_index\": 32000,\n"
    "  \"model_type\": \"llava\",\n"
    "  \"pad_token_id\": 32001,\n"
    "  \"projector_hidden_act\": \"gelu\",\n"
    "  \"text_config\": {\n"
    "    \"_name_or_path\": \"lmsys/vicuna-7b-v1.5\",\n"
    "    \"architectures\": [\"LlamaForCausalLM\"],\n"
    "    \"max_position_embeddings\": 4096,\n"
    "    \"model_type\": \"llama\",\n"
    "    \"rms_norm_eps\": 1e-05,\n"
    "    \"torch_dtype\": \"float16\",\n"
    "    \"vocab_size\": 32064\n"
    "  },\n"
    "  \"tie_word_embeddings\": false,\n"
    "  \"torch_dtype\": \"float16\",\n"
    "  \"transformers_version\": \"4.36.0.dev0\",\n"
    "  \"vision_config\": {\n"
    "    \"hidden_size\": 1024,\n"
    "    \"image_size\": 336,\n"
    "    \"intermediate_size\": 4096,\n"
    "    \"model_type\": \"clip_vision_model\",\n"
    "    \"num_attention_heads\": 16,\n"
    "    \"num_hidden_layers\": 24,\n"
    "    \"patch_size\": 14,\n"
    "    \"projection_dim\": 768,\n"
    "    \"vocab_size\": 32000\n"
    "  },\n"
    "  \"vision_feature_layer\": -2,\n"
    "  \"vision_feature_select_strategy\": \"default\",\n"
    "  \"vocab_size\": 32064\n"
    "}\n";

static void llava_1_5_fills_llama_and_clip_defaults(void) {
  vlm_model_config config;
  if (!parse_ok(llava_1_5_7b, &config)) return;
  CHECK_STR_EQ(config.architecture, "LlavaForConditionalGeneration");
  CHECK_STR_EQ(config.model_type, "llava");
  CHECK_INT_EQ(config.dtype, VLM_DTYPE_F16);
  const vlm_text_config *text = &config.text;
  CHECK_STR_EQ(text->model_type, "llama");
  CHECK_INT_EQ(text->vocab_size, 32064);
  /* Everything else is LlamaConfig()'s. */
  CHECK_INT_EQ(text->hidden_size, 4096);
  CHECK_INT_EQ(text->intermediate_size, 11008);
  CHECK_INT_EQ(text->num_hidden_layers, 32);
  CHECK_INT_EQ(text->num_attention_heads, 32);
  CHECK_INT_EQ(text->num_key_value_heads, 32);
  CHECK_INT_EQ(text->head_dim, 128);
  CHECK_STR_EQ(text->hidden_act, "silu");
  CHECK_NEAR(text->rms_norm_eps, 1e-5, 0);
  CHECK_INT_EQ(text->max_position_embeddings, 4096);
  CHECK(!text->attention_bias && !text->attention_output_bias && !text->mlp_bias);
  CHECK_INT_EQ(text->dtype, VLM_DTYPE_F16);
  CHECK_INT_EQ(text->rope.type, VLM_ROPE_DEFAULT);
  CHECK_NEAR(text->rope.theta, 10000.0, 0);
  CHECK_INT_EQ(text->rope.rotary_dimension, 128);
  CHECK(!text->has_sliding_rope);
  CHECK_INT_EQ(text->sliding_window, 0);
  check_layers(text, "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF");
  CHECK_NEAR(text->attention_scale, 1.0 / sqrt(128.0), 1e-15);
  CHECK_INT_EQ(text->bos_token_id, 1);
  CHECK_INT_EQ(text->eos_token_ids.count, 1);
  CHECK_INT_EQ(text->eos_token_ids.ids[0], 2);
  CHECK_INT_EQ(text->pad_token_id, -1); /* the top-level 32001 is not the text config's */
  CHECK(config.has_vision && !config.has_audio);
  const vlm_vision_config *vision = &config.vision;
  CHECK_STR_EQ(vision->model_type, "clip_vision_model");
  CHECK_INT_EQ(vision->hidden_size, 1024);
  CHECK_INT_EQ(vision->intermediate_size, 4096);
  CHECK_INT_EQ(vision->num_hidden_layers, 24);
  CHECK_INT_EQ(vision->num_attention_heads, 16);
  CHECK_INT_EQ(vision->head_dim, 64);
  CHECK_INT_EQ(vision->image_height, 336);
  CHECK_INT_EQ(vision->image_width, 336);
  CHECK_INT_EQ(vision->patch_size, 14);
  CHECK_INT_EQ(vision->num_channels, 3);
  CHECK_STR_EQ(vision->hidden_act, "quick_gelu");
  CHECK_NEAR(vision->layer_norm_eps, 1e-5, 0);
  CHECK_INT_EQ(config.image_token_id, 32000);
  CHECK_INT_EQ(config.video_token_id, -1);
  CHECK_INT_EQ(config.image_seq_length, 576);
  CHECK_INT_EQ(config.vision_feature_layers.count, 1);
  CHECK_INT_EQ(config.vision_feature_layers.values[0], -2);
  CHECK(!config.vision_feature_layer_is_list);
  CHECK_STR_EQ(config.vision_feature_select_strategy, "default");
  CHECK_STR_EQ(config.projector_hidden_act, "gelu");
  CHECK(config.multimodal_projector_bias);
  CHECK(!config.tie_word_embeddings);
  /* The merged sections keep the file's extras and the defaults. */
  CHECK(vlm_json_object_get(config.text_section, "_name_or_path") != NULL);
  int64_t vocab = 0;
  CHECK(vlm_json_get_int(vlm_json_object_get(config.root_section, "ignore_index"), &vocab) &&
        vocab == -100);
  vlm_model_config_release(&config);
}

/* SubConfigSpec: init_kwargs (the LLaVA CLIP-L/336 shape) apply only when
 * vision_config is absent; a present but empty one gets CLIPVisionConfig(). */
static void llava_sub_config_defaults_depend_on_presence(void) {
  vlm_model_config config;
  if (parse_ok("{\"model_type\": \"llava\"}", &config)) {
    CHECK_INT_EQ(config.vision.hidden_size, 1024);
    CHECK_INT_EQ(config.vision.intermediate_size, 4096);
    CHECK_INT_EQ(config.vision.num_hidden_layers, 24);
    CHECK_INT_EQ(config.vision.image_height, 336);
    CHECK_INT_EQ(config.vision.patch_size, 14);
    CHECK_STR_EQ(config.text.model_type, "llama");
    CHECK_INT_EQ(config.text.max_position_embeddings, 2048);
    CHECK_NEAR(config.text.rms_norm_eps, 1e-6, 0);
    vlm_model_config_release(&config);
  }
  if (parse_ok("{\"model_type\": \"llava\", \"vision_config\": {},"
               " \"text_config\": {\"model_type\": \"mistral\"}}",
               &config)) {
    CHECK_INT_EQ(config.vision.hidden_size, 768);
    CHECK_INT_EQ(config.vision.num_hidden_layers, 12);
    CHECK_INT_EQ(config.vision.image_height, 224);
    CHECK_INT_EQ(config.vision.patch_size, 32);
    CHECK_STR_EQ(config.text.model_type, "mistral");
    CHECK_INT_EQ(config.text.sliding_window, 4096);
    CHECK_INT_EQ(config.text.num_key_value_heads, 8);
    CHECK_INT_EQ(config.text.layer_types[0], VLM_LAYER_ATTENTION_SLIDING);
    vlm_model_config_release(&config);
  }
}

static void llava_forwards_text_tying_and_aliases(void) {
  vlm_model_config config;
  if (!parse_ok("{\"model_type\": \"llava\", \"text_config\": {\"tie_word_embeddings\": true},"
                " \"image_token_id\": 7, \"vision_feature_layer\": [-2, -5]}",
                &config))
    return;
  CHECK(config.tie_word_embeddings); /* LlavaConfig.__post_init__ */
  CHECK_INT_EQ(config.image_token_id, 7); /* attribute_map: image_token_index */
  CHECK(config.vision_feature_layer_is_list);
  CHECK_INT_EQ(config.vision_feature_layers.count, 2);
  CHECK_INT_EQ(config.vision_feature_layers.values[1], -5);
  vlm_model_config_release(&config);
}

/* ---------------------------------------------------------------------- */
/* Qwen2-VL / Qwen2.5-VL                                                    */
/* ---------------------------------------------------------------------- */

/* Qwen/Qwen2-VL-2B-Instruct/config.json: flat text fields, legacy mrope. */
static const char qwen2_vl_2b[] =
    "{\n"
    "  \"architectures\": [\"Qwen2VLForConditionalGeneration\"],\n"
    "  \"attention_dropout\": 0.0,\n"
    "  \"bos_token_id\": 151643,\n"
    "  \"eos_token_id\": 151645,\n"
    "  \"vision_start_token_id\": 151652,\n"
    "  \"vision_end_token_id\": 151653,\n"
    "  \"vision_token_id\": 151654,\n"
    "  \"image_token_id\": 151655,\n"
    "  \"video_token_id\": 151656,\n"
    "  \"hidden_act\": \"silu\",\n"
    "  \"hidden_size\": 1536,\n"
    "  \"initializer_range\": 0.02,\n"
    "  \"intermediate_size\": 8960,\n"
    "  \"max_position_embeddings\": 32768,\n"
    "  \"max_window_layers\": 28,\n"
    "  \"model_type\": \"qwen2_vl\",\n"
    "  \"num_attention_heads\": 12,\n"
    "  \"num_hidden_layers\": 28,\n"
    "  \"num_key_value_heads\": 2,\n"
    "  \"rms_norm_eps\": 1e-06,\n"
    "  \"rope_theta\": 1000000.0,\n"
    "  \"sliding_window\": 32768,\n"
    "  \"tie_word_embeddings\": true,\n"
    "  \"torch_dtype\": \"bfloat16\",\n"
    "  \"transformers_version\": \"4.41.2\",\n"
    "  \"use_cache\": true,\n"
    "  \"use_sliding_window\": false,\n"
    "  \"vision_config\": {\n"
    "    \"depth\": 32,\n"
    "    \"embed_dim\": 1280,\n"
    "    \"mlp_ratio\": 4,\n"
    "    \"num_heads\": 16,\n"
    "    \"in_chans\": 3,\n"
    "    \"hidden_size\": 1536,\n"
    "    \"patch_size\": 14,\n"
    "    \"spatial_merge_size\": 2,\n"
    "    \"spatial_patch_size\": 14,\n"
    "    \"temporal_patch_size\": 2\n"
    "  },\n"
    "  \"rope_scaling\": {\n"
    "    \"type\": \"mrope\",\n"
    "    \"mrope_section\": [16, 24, 24]\n"
    "  },\n"
    "  \"vocab_size\": 151936\n"
    "}\n";

/* The same model saved by Transformers 5.23.0 (to_json_string(use_diff=True)),
 * layer_types shortened to the 28 entries it writes. */
static const char qwen2_vl_2b_v5[] =
    "{\"architectures\": [\"Qwen2VLForConditionalGeneration\"], \"dtype\": \"bfloat16\","
    " \"image_token_id\": 151655, \"model_type\": \"qwen2_vl\","
    " \"text_config\": {\"attention_dropout\": 0.0, \"bos_token_id\": 151643,"
    " \"dtype\": \"bfloat16\", \"eos_token_id\": 151645, \"hidden_act\": \"silu\","
    " \"hidden_size\": 1536, \"initializer_range\": 0.02, \"intermediate_size\": 8960,"
    " \"layer_types\": [\"full_attention\", \"full_attention\", \"full_attention\","
    " \"full_attention\", \"full_attention\", \"full_attention\", \"full_attention\","
    " \"full_attention\", \"full_attention\", \"full_attention\", \"full_attention\","
    " \"full_attention\", \"full_attention\", \"full_attention\", \"full_attention\","
    " \"full_attention\", \"full_attention\", \"full_attention\", \"full_attention\","
    " \"full_attention\", \"full_attention\", \"full_attention\", \"full_attention\","
    " \"full_attention\", \"full_attention\", \"full_attention\", \"full_attention\","
    " \"full_attention\"], \"max_position_embeddings\": 32768, \"max_window_layers\": 28,"
    " \"model_type\": \"qwen2_vl_text\", \"num_attention_heads\": 12, \"num_hidden_layers\": 28,"
    " \"num_key_value_heads\": 2, \"pad_token_id\": null, \"rms_norm_eps\": 1e-06,"
    " \"rope_parameters\": {\"mrope_section\": [16, 24, 24], \"rope_theta\": 1000000.0,"
    " \"rope_type\": \"default\", \"type\": \"mrope\"}, \"sliding_window\": null,"
    " \"use_cache\": true, \"use_sliding_window\": false, \"vocab_size\": 151936},"
    " \"tie_word_embeddings\": true, \"transformers_version\": \"5.23.0\","
    " \"video_token_id\": 151656, \"vision_config\": {\"depth\": 32, \"embed_dim\": 1280,"
    " \"hidden_act\": \"quick_gelu\", \"hidden_size\": 1536, \"in_channels\": 3, \"in_chans\": 3,"
    " \"initializer_range\": 0.02, \"mlp_ratio\": 4, \"model_type\": \"qwen2_vl_vision\","
    " \"num_heads\": 16, \"patch_size\": 14, \"rope_parameters\": {\"rope_theta\": 10000.0,"
    " \"rope_type\": \"axial\"}, \"spatial_merge_size\": 2, \"spatial_patch_size\": 14,"
    " \"temporal_patch_size\": 2}, \"vision_end_token_id\": 151653,"
    " \"vision_start_token_id\": 151652, \"vision_token_id\": 151654}";

static void check_qwen2_vl_2b(const vlm_model_config *config) {
  const vlm_text_config *text = &config->text;
  CHECK_STR_EQ(text->model_type, "qwen2_vl_text");
  CHECK_INT_EQ(text->vocab_size, 151936);
  CHECK_INT_EQ(text->hidden_size, 1536);
  CHECK_INT_EQ(text->intermediate_size, 8960);
  CHECK_INT_EQ(text->num_hidden_layers, 28);
  CHECK_INT_EQ(text->num_attention_heads, 12);
  CHECK_INT_EQ(text->num_key_value_heads, 2);
  CHECK_INT_EQ(text->head_dim, 128);
  CHECK_NEAR(text->rms_norm_eps, 1e-6, 0);
  CHECK(text->attention_bias && !text->attention_output_bias); /* Qwen2 q/k/v biases */
  CHECK_INT_EQ(text->dtype, VLM_DTYPE_BF16);
  CHECK_INT_EQ(text->sliding_window, 0); /* use_sliding_window is false */
  check_layers(text, "FFFFFFFFFFFFFFFFFFFFFFFFFFFF");
  CHECK_INT_EQ(text->rope.type, VLM_ROPE_DEFAULT); /* "mrope" means default */
  CHECK_NEAR(text->rope.theta, 1e6, 0);
  CHECK_INT_EQ(text->rope.mrope_section_count, 3);
  CHECK_INT_EQ(text->rope.mrope_section[0], 16);
  CHECK_INT_EQ(text->rope.mrope_section[1], 24);
  CHECK_INT_EQ(text->rope.mrope_section[2], 24);
  CHECK(!text->rope.mrope_interleaved);
  CHECK_INT_EQ(text->bos_token_id, 151643);
  CHECK_INT_EQ(text->eos_token_ids.ids[0], 151645);
  const vlm_vision_config *vision = &config->vision;
  CHECK_STR_EQ(vision->model_type, "qwen2_vl_vision");
  CHECK_INT_EQ(vision->hidden_size, 1280);       /* embed_dim */
  CHECK_INT_EQ(vision->out_hidden_size, 1536);   /* hidden_size */
  CHECK_INT_EQ(vision->intermediate_size, 5120); /* embed_dim * mlp_ratio */
  CHECK_INT_EQ(vision->num_hidden_layers, 32);
  CHECK_INT_EQ(vision->num_attention_heads, 16);
  CHECK_INT_EQ(vision->num_channels, 3);
  CHECK_INT_EQ(vision->patch_size, 14);
  CHECK_INT_EQ(vision->spatial_merge_size, 2);
  CHECK_INT_EQ(vision->temporal_patch_size, 2);
  CHECK_STR_EQ(vision->hidden_act, "quick_gelu"); /* the class default */
  CHECK_NEAR(vision->layer_norm_eps, 1e-6, 0);
  CHECK_INT_EQ(config->image_token_id, 151655);
  CHECK_INT_EQ(config->video_token_id, 151656);
  CHECK_INT_EQ(config->vision_start_token_id, 151652);
  CHECK_INT_EQ(config->vision_end_token_id, 151653);
  CHECK_INT_EQ(config->image_seq_length, 0);
  CHECK(config->tie_word_embeddings);
  CHECK_INT_EQ(config->dtype, VLM_DTYPE_BF16);
}

static void qwen2_vl_flat_legacy_and_v5_files_agree(void) {
  vlm_model_config legacy, written;
  if (!parse_ok(qwen2_vl_2b, &legacy)) return;
  if (!parse_ok(qwen2_vl_2b_v5, &written)) {
    vlm_model_config_release(&legacy);
    return;
  }
  check_qwen2_vl_2b(&legacy);
  check_qwen2_vl_2b(&written);
  /* The flat file's text section is assembled from top-level keys. */
  CHECK(vlm_json_object_get(legacy.text_section, "vision_config") == NULL);
  CHECK(vlm_json_object_get(legacy.text_section, "rope_scaling") != NULL);
  vlm_model_config_release(&legacy);
  vlm_model_config_release(&written);
}

static void qwen2_sliding_layers_follow_max_window_layers(void) {
  vlm_model_config config;
  if (!parse_ok("{\"model_type\": \"qwen2\", \"use_sliding_window\": true,"
                " \"sliding_window\": 4096, \"max_window_layers\": 20, \"num_hidden_layers\": 24}",
                &config))
    return;
  CHECK_INT_EQ(config.text.sliding_window, 4096);
  check_layers(&config.text, "FFFFFFFFFFFFFFFFFFFFSSSS");
  vlm_model_config_release(&config);
}

/* Qwen/Qwen2.5-VL-3B-Instruct/config.json (flat text). */
static const char qwen2_5_vl_3b[] =
    "{\"architectures\": [\"Qwen2_5_VLForConditionalGeneration\"], \"attention_dropout\": 0.0,"
    " \"bos_token_id\": 151643, \"eos_token_id\": 151645, \"vision_start_token_id\": 151652,"
    " \"vision_end_token_id\": 151653, \"vision_token_id\": 151654, \"image_token_id\": 151655,"
    " \"video_token_id\": 151656, \"hidden_act\": \"silu\", \"hidden_size\": 2048,"
    " \"initializer_range\": 0.02, \"intermediate_size\": 11008, \"max_position_embeddings\": 128000,"
    " \"max_window_layers\": 70, \"model_type\": \"qwen2_5_vl\", \"num_attention_heads\": 16,"
    " \"num_hidden_layers\": 36, \"num_key_value_heads\": 2, \"rms_norm_eps\": 1e-06,"
    " \"rope_theta\": 1000000.0, \"sliding_window\": 32768, \"tie_word_embeddings\": true,"
    " \"torch_dtype\": \"bfloat16\", \"transformers_version\": \"4.41.2\", \"use_cache\": true,"
    " \"use_sliding_window\": false, \"vision_config\": {\"depth\": 32, \"hidden_act\": \"silu\","
    " \"hidden_size\": 1280, \"intermediate_size\": 3420, \"num_heads\": 16, \"in_chans\": 3,"
    " \"out_hidden_size\": 2048, \"patch_size\": 14, \"spatial_merge_size\": 2,"
    " \"spatial_patch_size\": 14, \"window_size\": 112, \"fullatt_block_indexes\": [7, 15, 23, 31],"
    " \"tokens_per_second\": 2, \"temporal_patch_size\": 2},"
    " \"rope_scaling\": {\"type\": \"mrope\", \"mrope_section\": [16, 24, 24]},"
    " \"vocab_size\": 151936}";

static void qwen2_5_vl_reads_windowed_vision(void) {
  vlm_model_config config;
  if (!parse_ok(qwen2_5_vl_3b, &config)) return;
  CHECK_STR_EQ(config.text.model_type, "qwen2_5_vl_text");
  CHECK_INT_EQ(config.text.hidden_size, 2048);
  CHECK_INT_EQ(config.text.num_hidden_layers, 36);
  CHECK_INT_EQ(config.text.head_dim, 128);
  CHECK_INT_EQ(config.text.max_position_embeddings, 128000);
  CHECK_INT_EQ(config.text.rope.mrope_section_count, 3);
  const vlm_vision_config *vision = &config.vision;
  CHECK_STR_EQ(vision->model_type, "qwen2_5_vl_vision");
  CHECK_INT_EQ(vision->hidden_size, 1280);
  CHECK_INT_EQ(vision->intermediate_size, 3420);
  CHECK_INT_EQ(vision->out_hidden_size, 2048);
  CHECK_INT_EQ(vision->window_size, 112);
  CHECK_INT_EQ(vision->tokens_per_second, 2);
  CHECK_INT_EQ(vision->fullatt_block_indexes.count, 4);
  CHECK_INT_EQ(vision->fullatt_block_indexes.values[3], 31);
  CHECK_STR_EQ(vision->hidden_act, "silu");
  CHECK(config.tie_word_embeddings);
  vlm_model_config_release(&config);
}

/* ---------------------------------------------------------------------- */
/* Qwen3-VL                                                                */
/* ---------------------------------------------------------------------- */

/* Qwen/Qwen3-VL-4B-Instruct/config.json. */
static const char qwen3_vl_4b[] =
    "{\"architectures\": [\"Qwen3VLForConditionalGeneration\"], \"image_token_id\": 151655,"
    " \"model_type\": \"qwen3_vl\", \"text_config\": {\"attention_bias\": false,"
    " \"attention_dropout\": 0.0, \"bos_token_id\": 151643, \"dtype\": \"bfloat16\","
    " \"eos_token_id\": 151645, \"head_dim\": 128, \"hidden_act\": \"silu\", \"hidden_size\": 2560,"
    " \"initializer_range\": 0.02, \"intermediate_size\": 9728, \"max_position_embeddings\": 262144,"
    " \"model_type\": \"qwen3_vl_text\", \"num_attention_heads\": 32, \"num_hidden_layers\": 36,"
    " \"num_key_value_heads\": 8, \"rms_norm_eps\": 1e-06, \"rope_scaling\": {\"mrope_interleaved\":"
    " true, \"mrope_section\": [24, 20, 20], \"rope_type\": \"default\"}, \"rope_theta\": 5000000,"
    " \"tie_word_embeddings\": true, \"use_cache\": true, \"vocab_size\": 151936},"
    " \"tie_word_embeddings\": true, \"transformers_version\": \"4.57.0.dev0\","
    " \"video_token_id\": 151656, \"vision_config\": {\"deepstack_visual_indexes\": [5, 11, 17],"
    " \"depth\": 24, \"hidden_act\": \"gelu_pytorch_tanh\", \"hidden_size\": 1024, \"in_channels\": 3,"
    " \"initializer_range\": 0.02, \"intermediate_size\": 4096, \"model_type\": \"qwen3_vl\","
    " \"num_heads\": 16, \"num_position_embeddings\": 2304, \"out_hidden_size\": 2560,"
    " \"patch_size\": 16, \"spatial_merge_size\": 2, \"temporal_patch_size\": 2},"
    " \"vision_end_token_id\": 151653, \"vision_start_token_id\": 151652}";

static void qwen3_vl_reads_interleaved_mrope_and_deepstack(void) {
  vlm_model_config config;
  if (!parse_ok(qwen3_vl_4b, &config)) return;
  const vlm_text_config *text = &config.text;
  CHECK_STR_EQ(text->model_type, "qwen3_vl_text");
  CHECK_INT_EQ(text->head_dim, 128);
  CHECK_INT_EQ(text->num_key_value_heads, 8);
  CHECK_NEAR(text->rope.theta, 5e6, 0);
  CHECK(text->rope.mrope_interleaved);
  CHECK_INT_EQ(text->rope.mrope_section[0], 24);
  CHECK_INT_EQ(text->rope.mrope_section[2], 20);
  CHECK(!text->attention_bias);
  CHECK_INT_EQ(text->dtype, VLM_DTYPE_BF16);
  CHECK_INT_EQ(config.dtype, VLM_DTYPE_INVALID); /* no top-level dtype */
  const vlm_vision_config *vision = &config.vision;
  CHECK_STR_EQ(vision->model_type, "qwen3_vl_vision");
  CHECK_INT_EQ(vision->num_hidden_layers, 24);
  CHECK_INT_EQ(vision->patch_size, 16);
  CHECK_INT_EQ(vision->num_position_embeddings, 2304);
  CHECK_INT_EQ(vision->out_hidden_size, 2560);
  CHECK_INT_EQ(vision->deepstack_visual_indexes.count, 3);
  CHECK_INT_EQ(vision->deepstack_visual_indexes.values[1], 11);
  CHECK(config.tie_word_embeddings);
  vlm_model_config_release(&config);
}

/* The rotary embeddings, not the flag, decide the M-RoPE layout:
 * Qwen3VLTextRotaryEmbedding interleaves always and falls back to
 * [24, 20, 20]; Qwen2VLRotaryEmbedding never interleaves. */
static void mrope_layout_follows_the_family_not_the_flag(void) {
  vlm_model_config config;
  if (parse_ok("{\"model_type\": \"qwen3_vl\", \"text_config\": {\"head_dim\": 128,"
               " \"rope_parameters\": {\"rope_type\": \"default\", \"rope_theta\": 5000000}}}", &config)) {
    CHECK(config.text.rope.mrope_interleaved);
    CHECK_INT_EQ(config.text.rope.mrope_section_count, 3);
    CHECK_INT_EQ(config.text.rope.mrope_section[0], 24);
    CHECK_INT_EQ(config.text.rope.mrope_section[1], 20);
    CHECK_INT_EQ(config.text.rope.mrope_section[2], 20);
    vlm_model_config_release(&config);
  }
  if (parse_ok("{\"model_type\": \"qwen3_vl\", \"text_config\": {\"head_dim\": 32, \"rope_parameters\":"
               " {\"rope_type\": \"default\", \"mrope_section\": [6, 5, 5], \"mrope_interleaved\": false}}}",
               &config)) {
    CHECK(config.text.rope.mrope_interleaved);
    CHECK_INT_EQ(config.text.rope.mrope_section[0], 6);
    vlm_model_config_release(&config);
  }
  if (parse_ok("{\"model_type\": \"qwen2_vl\", \"rope_scaling\": {\"type\": \"mrope\","
               " \"mrope_section\": [16, 24, 24], \"mrope_interleaved\": true}}", &config)) {
    CHECK(!config.text.rope.mrope_interleaved);
    vlm_model_config_release(&config);
  }
}

static void qwen3_vl_moe_defaults(void) {
  vlm_model_config config;
  if (!parse_ok("{\"model_type\": \"qwen3_vl_moe\"}", &config)) return;
  /* Qwen3VLMoeTextConfig(): head_dim None -> hidden_size // heads. */
  CHECK_STR_EQ(config.text.model_type, "qwen3_vl_moe_text");
  CHECK_INT_EQ(config.text.hidden_size, 2048);
  CHECK_INT_EQ(config.text.num_attention_heads, 16);
  CHECK_INT_EQ(config.text.head_dim, 128);
  CHECK_NEAR(config.text.rope.theta, 500000.0, 0);
  CHECK(config.text.tie_word_embeddings);
  CHECK(!config.tie_word_embeddings); /* Qwen3VLMoeConfig's own default */
  int64_t experts = 0;
  CHECK(vlm_json_get_int(vlm_json_object_get(config.text_section, "num_experts"), &experts) &&
        experts == 60);
  CHECK_INT_EQ(config.vision.deepstack_visual_indexes.count, 3);
  vlm_model_config_release(&config);
}

/* ---------------------------------------------------------------------- */
/* Gemma 3                                                                 */
/* ---------------------------------------------------------------------- */

/* google/gemma-3-4b-it/config.json. */
static const char gemma3_4b[] =
    "{\"architectures\": [\"Gemma3ForConditionalGeneration\"], \"boi_token_index\": 255999,"
    " \"eoi_token_index\": 256000, \"eos_token_id\": [1, 106], \"image_token_index\": 262144,"
    " \"initializer_range\": 0.02, \"mm_tokens_per_image\": 256, \"model_type\": \"gemma3\","
    " \"text_config\": {\"hidden_size\": 2560, \"intermediate_size\": 10240,"
    " \"model_type\": \"gemma3_text\", \"num_hidden_layers\": 34,"
    " \"rope_scaling\": {\"factor\": 8.0, \"rope_type\": \"linear\"}, \"sliding_window\": 1024},"
    " \"torch_dtype\": \"bfloat16\", \"transformers_version\": \"4.50.0.dev0\","
    " \"vision_config\": {\"hidden_size\": 1152, \"image_size\": 896, \"intermediate_size\": 4304,"
    " \"model_type\": \"siglip_vision_model\", \"num_attention_heads\": 16,"
    " \"num_hidden_layers\": 27, \"patch_size\": 14, \"vision_use_head\": false}}";

static void check_gemma3_4b(const vlm_model_config *config) {
  const vlm_text_config *text = &config->text;
  CHECK_STR_EQ(text->model_type, "gemma3_text");
  CHECK_INT_EQ(text->vocab_size, 262208);
  CHECK_INT_EQ(text->hidden_size, 2560);
  CHECK_INT_EQ(text->num_attention_heads, 8);
  CHECK_INT_EQ(text->num_key_value_heads, 4);
  CHECK_INT_EQ(text->head_dim, 256);
  CHECK_STR_EQ(text->hidden_act, "gelu_pytorch_tanh");
  CHECK_INT_EQ(text->max_position_embeddings, 131072);
  CHECK_INT_EQ(text->sliding_window, 1024);
  check_layers(text, "SSSSSFSSSSSFSSSSSFSSSSSFSSSSSFSSSS");
  CHECK_INT_EQ(text->rope.type, VLM_ROPE_LINEAR);
  CHECK_NEAR(text->rope.factor, 8.0, 0);
  CHECK_NEAR(text->rope.theta, 1e6, 0);
  CHECK(text->has_sliding_rope);
  CHECK_INT_EQ(text->sliding_rope.type, VLM_ROPE_DEFAULT);
  CHECK_NEAR(text->sliding_rope.theta, 10000.0, 0);
  CHECK_NEAR(text->query_pre_attn_scalar, 256, 0);
  CHECK_NEAR(text->attention_scale, 1.0 / 16.0, 1e-15);
  CHECK_NEAR(text->final_logit_softcapping, 0, 0);
  CHECK(text->tie_word_embeddings);
  CHECK_INT_EQ(text->pad_token_id, 0);
  CHECK_INT_EQ(text->bos_token_id, 2);
  const vlm_vision_config *vision = &config->vision;
  CHECK_STR_EQ(vision->model_type, "siglip_vision_model");
  CHECK_INT_EQ(vision->hidden_size, 1152);
  CHECK_INT_EQ(vision->image_height, 896);
  CHECK_INT_EQ(vision->num_hidden_layers, 27);
  CHECK_STR_EQ(vision->hidden_act, "gelu_pytorch_tanh");
  CHECK_NEAR(vision->layer_norm_eps, 1e-6, 0);
  CHECK(!vision->vision_use_head);
  CHECK_INT_EQ(config->image_token_id, 262144);
  CHECK_INT_EQ(config->boi_token_id, 255999);
  CHECK_INT_EQ(config->eoi_token_id, 256000);
  CHECK_INT_EQ(config->image_seq_length, 256);
  CHECK(config->tie_word_embeddings);
}

static void gemma3_4b_reads_both_ropes_and_the_layer_pattern(void) {
  vlm_model_config config;
  if (!parse_ok(gemma3_4b, &config)) return;
  check_gemma3_4b(&config);
  CHECK_INT_EQ(config.dtype, VLM_DTYPE_BF16);
  CHECK_INT_EQ(config.text.dtype, VLM_DTYPE_INVALID);
  vlm_model_config_release(&config);
}

/* The v5 spelling of the same text config: nested rope_parameters and an
 * explicit layer_types. */
static void gemma3_v5_rope_parameters_give_the_same_struct(void) {
  char text[4096];
  char layers[34 * 24 + 1] = "";
  for (int i = 0; i < 34; i++)
    strcat(layers, (i + 1) % 6 ? "\"sliding_attention\"," : "\"full_attention\",");
  layers[strlen(layers) - 1] = '\0';
  snprintf(text, sizeof(text),
           "{\"model_type\": \"gemma3\", \"dtype\": \"bfloat16\", \"eos_token_id\": [1, 106],"
           " \"text_config\": {\"hidden_size\": 2560, \"intermediate_size\": 10240,"
           " \"model_type\": \"gemma3_text\", \"num_hidden_layers\": 34, \"sliding_window\": 1024,"
           " \"layer_types\": [%s], \"rope_parameters\": {\"full_attention\": {\"factor\": 8.0,"
           " \"rope_theta\": 1000000.0, \"rope_type\": \"linear\"}, \"sliding_attention\":"
           " {\"rope_theta\": 10000.0, \"rope_type\": \"default\"}}},"
           " \"vision_config\": {\"hidden_size\": 1152, \"image_size\": 896,"
           " \"intermediate_size\": 4304, \"model_type\": \"siglip_vision_model\","
           " \"num_attention_heads\": 16, \"num_hidden_layers\": 27, \"patch_size\": 14,"
           " \"vision_use_head\": false}}",
           layers);
  vlm_model_config config;
  if (!parse_ok(text, &config)) return;
  check_gemma3_4b(&config);
  vlm_model_config_release(&config);
}

static void gemma3_text_legacy_keys_and_pattern(void) {
  vlm_model_config config;
  if (parse_ok("{\"model_type\": \"gemma3_text\", \"sliding_window_pattern\": 4,"
               " \"num_hidden_layers\": 8, \"rope_local_base_freq\": 20000.0, \"rope_theta\": 2e6,"
               " \"use_bidirectional_attention\": true, \"sliding_window\": 512}",
               &config)) {
    check_layers(&config.text, "SSSFSSSF");
    CHECK_NEAR(config.text.rope.theta, 2e6, 0);
    CHECK_NEAR(config.text.sliding_rope.theta, 20000.0, 0);
    CHECK_INT_EQ(config.text.sliding_window, 257); /* 512 // 2 + 1 when bidirectional */
    vlm_model_config_release(&config);
  }
  /* Gemma's rope_scaling updates a {"rope_type": "default"} dict, so a
   * legacy "type" alone does not change the type (as in Transformers). */
  if (parse_ok("{\"model_type\": \"gemma3_text\","
               " \"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.0}}",
               &config)) {
    CHECK_INT_EQ(config.text.rope.type, VLM_ROPE_DEFAULT);
    vlm_model_config_release(&config);
  }
}

/* google/gemma-3-1b-it/config.json: a text-only Gemma 3. */
static void gemma3_1b_text_only(void) {
  vlm_model_config config;
  if (!parse_ok("{\"architectures\": [\"Gemma3ForCausalLM\"], \"attention_bias\": false,"
                " \"attn_logit_softcapping\": null, \"bos_token_id\": 2, \"cache_implementation\":"
                " \"hybrid\", \"eos_token_id\": [1, 106], \"final_logit_softcapping\": null,"
                " \"head_dim\": 256, \"hidden_activation\": \"gelu_pytorch_tanh\", \"hidden_size\": 1152,"
                " \"intermediate_size\": 6912, \"max_position_embeddings\": 32768,"
                " \"model_type\": \"gemma3_text\", \"num_attention_heads\": 4, \"num_hidden_layers\": 26,"
                " \"num_key_value_heads\": 1, \"pad_token_id\": 0, \"query_pre_attn_scalar\": 256,"
                " \"rms_norm_eps\": 1e-06, \"rope_local_base_freq\": 10000, \"rope_scaling\": null,"
                " \"rope_theta\": 1000000, \"sliding_window\": 512, \"sliding_window_pattern\": 6,"
                " \"torch_dtype\": \"bfloat16\", \"vocab_size\": 262144}",
                &config))
    return;
  CHECK(!config.has_vision);
  CHECK_STR_EQ(config.text.model_type, "gemma3_text");
  check_layers(&config.text, "SSSSSFSSSSSFSSSSSFSSSSSFSS");
  CHECK_INT_EQ(config.text.eos_token_ids.count, 2);
  CHECK_INT_EQ(config.text.eos_token_ids.ids[1], 106);
  CHECK_NEAR(config.text.rope.theta, 1e6, 0);
  CHECK_NEAR(config.text.sliding_rope.theta, 10000, 0);
  CHECK(config.tie_word_embeddings);
  CHECK_INT_EQ(config.text.dtype, VLM_DTYPE_BF16);
  vlm_model_config_release(&config);
}

/* ---------------------------------------------------------------------- */
/* Gemma 3n, Phi-4-multimodal, Molmo2                                       */
/* ---------------------------------------------------------------------- */

/* google/gemma-3n-E2B-it/config.json, with the long per-layer lists built
 * below (30 layers) and label_names shortened. */
static void gemma3n_reads_all_three_parts(void) {
  char intermediate[30 * 6], sparsity[30 * 6], layers[30 * 24];
  intermediate[0] = sparsity[0] = layers[0] = '\0';
  for (int i = 0; i < 30; i++) {
    strcat(intermediate, i ? ",8192" : "8192");
    strcat(sparsity, i < 10 ? (i ? ",0.95" : "0.95") : ",0.0");
    strcat(layers, i ? "," : "");
    strcat(layers, (i + 1) % 5 ? "\"sliding_attention\"" : "\"full_attention\"");
  }
  char text[8192];
  snprintf(text, sizeof(text),
           "{\"architectures\": [\"Gemma3nForConditionalGeneration\"], \"audio_config\":"
           " {\"conf_attention_chunk_size\": 12, \"conf_attention_context_left\": 13,"
           " \"conf_attention_logit_cap\": 50.0, \"conf_num_attention_heads\": 8,"
           " \"conf_num_hidden_layers\": 12, \"hidden_size\": 1536, \"input_feat_size\": 128,"
           " \"model_type\": \"gemma3n_audio\", \"rms_norm_eps\": 1e-06,"
           " \"sscp_conv_kernel_size\": [[3, 3], [3, 3]], \"torch_dtype\": \"bfloat16\","
           " \"vocab_offset\": 262272, \"vocab_size\": 128}, \"audio_soft_tokens_per_image\": 188,"
           " \"audio_token_id\": 262273, \"boa_token_id\": 256000, \"boi_token_id\": 255999,"
           " \"eoa_token_id\": 262272, \"eoi_token_id\": 262144, \"eos_token_id\": [1, 106],"
           " \"image_token_id\": 262145, \"model_type\": \"gemma3n\", \"text_config\":"
           " {\"activation_sparsity_pattern\": [%s], \"altup_num_inputs\": 4,"
           " \"final_logit_softcapping\": 30.0, \"head_dim\": 256, \"hidden_activation\":"
           " \"gelu_pytorch_tanh\", \"hidden_size\": 2048, \"hidden_size_per_layer_input\": 256,"
           " \"intermediate_size\": [%s], \"laurel_rank\": 64, \"layer_types\": [%s],"
           " \"max_position_embeddings\": 32768, \"model_type\": \"gemma3n_text\","
           " \"num_attention_heads\": 8, \"num_hidden_layers\": 30, \"num_key_value_heads\": 2,"
           " \"num_kv_shared_layers\": 10, \"rms_norm_eps\": 1e-06, \"rope_local_base_freq\": 10000.0,"
           " \"rope_scaling\": null, \"rope_theta\": 1000000.0, \"sliding_window\": 512,"
           " \"torch_dtype\": \"bfloat16\", \"vocab_size\": 262400, \"vocab_size_per_layer_input\":"
           " 262144}, \"torch_dtype\": \"bfloat16\", \"vision_config\": {\"architecture\":"
           " \"mobilenetv5_300m_enc\", \"do_pooling\": true, \"hidden_size\": 2048, \"label_names\":"
           " [\"LABEL_0\", \"LABEL_1\"], \"model_type\": \"gemma3n_vision\", \"rms_norm_eps\": 1e-06,"
           " \"vocab_offset\": 262144, \"vocab_size\": 128}, \"vision_soft_tokens_per_image\": 256}",
           sparsity, intermediate, layers);
  vlm_model_config config;
  if (!parse_ok(text, &config)) return;
  const vlm_text_config *t = &config.text;
  CHECK_STR_EQ(t->model_type, "gemma3n_text");
  CHECK_INT_EQ(t->intermediate_size, 8192);
  CHECK_INT_EQ(t->layer_intermediate_sizes[29], 8192);
  CHECK_INT_EQ(t->head_dim, 256);
  CHECK_NEAR(t->attention_scale, 1.0, 0); /* Gemma3nAttention: scaling = 1.0 */
  CHECK_NEAR(t->final_logit_softcapping, 30.0, 0);
  check_layers(t, "SSSSFSSSSFSSSSFSSSSFSSSSFSSSSF");
  CHECK_NEAR(t->rope.theta, 1e6, 0);
  CHECK_NEAR(t->sliding_rope.theta, 10000, 0);
  CHECK_INT_EQ(t->sliding_window, 512);
  CHECK(config.has_vision && config.has_audio);
  CHECK_STR_EQ(config.vision.model_type, "gemma3n_vision");
  CHECK_INT_EQ(config.vision.hidden_size, 2048);
  CHECK_STR_EQ(config.audio.model_type, "gemma3n_audio");
  CHECK_INT_EQ(config.audio.hidden_size, 1536);
  CHECK_INT_EQ(config.audio.intermediate_size, 6144);
  CHECK_INT_EQ(config.audio.num_hidden_layers, 12);
  CHECK_INT_EQ(config.audio.num_attention_heads, 8);
  CHECK_INT_EQ(config.audio.input_feature_size, 128);
  CHECK_INT_EQ(config.image_token_id, 262145);
  CHECK_INT_EQ(config.audio_token_id, 262273);
  CHECK_INT_EQ(config.boa_token_id, 256000);
  CHECK_INT_EQ(config.eoa_token_id, 262272);
  CHECK_INT_EQ(config.image_seq_length, 256);
  CHECK_INT_EQ(config.audio_seq_length, 188);
  int64_t shared = 0;
  CHECK(vlm_json_get_int(vlm_json_object_get(config.text_section, "num_kv_shared_layers"), &shared) &&
        shared == 10);
  vlm_model_config_release(&config);
}

static void gemma3n_defaults_derive_the_layer_pattern(void) {
  vlm_model_config config;
  if (!parse_ok("{\"model_type\": \"gemma3n\", \"text_config\": {\"num_hidden_layers\": 10}}",
                &config))
    return;
  check_layers(&config.text, "SSSSFSSSSF");
  CHECK_INT_EQ(config.text.layer_intermediate_sizes[9], 16384);
  CHECK_INT_EQ(config.audio.input_feature_size, 128);
  CHECK_INT_EQ(config.image_seq_length, 256);
  vlm_model_config_release(&config);
}

/* microsoft/Phi-4-multimodal-instruct in the Transformers layout: text at the
 * top level, longrope with 48 factors (head_dim 128 * 0.75 / 2). */
static void phi4_multimodal_reads_longrope_and_both_encoders(void) {
  char factors[48 * 8] = "";
  for (int i = 0; i < 48; i++) strcat(factors, i ? ", 1.5" : "1.0");
  char text[4096];
  snprintf(text, sizeof(text),
           "{\"architectures\": [\"Phi4MultimodalForCausalLM\"], \"audio_config\":"
           " {\"activation\": \"swish\", \"audio_token_id\": 200011, \"hidden_size\": 1024,"
           " \"input_size\": 80, \"intermediate_size\": 1536, \"model_type\": \"phi4_multimodal_audio\","
           " \"num_attention_heads\": 16, \"num_blocks\": 24, \"time_reduction\": 8},"
           " \"bos_token_id\": 199999, \"eos_token_id\": [199999, 200020], \"hidden_act\": \"silu\","
           " \"hidden_size\": 3072, \"intermediate_size\": 8192, \"max_position_embeddings\": 131072,"
           " \"model_type\": \"phi4_multimodal\", \"num_attention_heads\": 24, \"num_hidden_layers\": 32,"
           " \"num_key_value_heads\": 8, \"original_max_position_embeddings\": 4096,"
           " \"pad_token_id\": 199999, \"partial_rotary_factor\": 0.75, \"rms_norm_eps\": 1e-05,"
           " \"rope_scaling\": {\"long_factor\": [%s], \"short_factor\": [%s], \"type\": \"longrope\"},"
           " \"rope_theta\": 10000.0, \"sliding_window\": 262144, \"tie_word_embeddings\": true,"
           " \"torch_dtype\": \"bfloat16\", \"vision_config\": {\"crop_size\": 448,"
           " \"feature_layer\": -2, \"hidden_size\": 1152, \"image_size\": 448, \"image_token_id\":"
           " 200010, \"intermediate_size\": 4304, \"model_type\": \"phi4_multimodal_vision\","
           " \"num_attention_heads\": 16, \"num_hidden_layers\": 27, \"patch_size\": 14},"
           " \"vocab_size\": 200064}",
           factors, factors);
  vlm_model_config config;
  if (!parse_ok(text, &config)) return;
  const vlm_text_config *t = &config.text;
  CHECK_STR_EQ(t->model_type, "phi4_multimodal");
  CHECK_INT_EQ(t->head_dim, 128);
  CHECK_INT_EQ(t->rope.type, VLM_ROPE_LONGROPE);
  CHECK_NEAR(t->rope.partial_rotary_factor, 0.75, 0);
  CHECK_INT_EQ(t->rope.rotary_dimension, 96);
  CHECK_INT_EQ(t->rope.original_max_position_embeddings, 4096);
  CHECK_NEAR(t->rope.factor, 32.0, 0); /* max_position_embeddings / original */
  CHECK_NEAR(t->rope.attention_factor, sqrt(1 + log(32.0) / log(4096.0)), 1e-15);
  CHECK_INT_EQ(t->rope.longrope_factor_count, 48);
  CHECK_NEAR(t->rope.long_factor[1], 1.5, 0);
  CHECK_INT_EQ(t->sliding_window, 262144);
  CHECK_INT_EQ(t->layer_types[0], VLM_LAYER_ATTENTION_SLIDING);
  CHECK(!t->attention_bias && !t->attention_output_bias);
  CHECK_INT_EQ(t->eos_token_ids.count, 2);
  CHECK(config.tie_word_embeddings);
  CHECK_STR_EQ(config.vision.model_type, "phi4_multimodal_vision");
  CHECK_INT_EQ(config.vision.image_height, 448);
  CHECK_STR_EQ(config.audio.model_type, "phi4_multimodal_audio");
  CHECK_INT_EQ(config.audio.num_hidden_layers, 24);
  CHECK_INT_EQ(config.audio.input_feature_size, 80);
  CHECK_INT_EQ(config.image_token_id, 200010);
  CHECK_INT_EQ(config.audio_token_id, 200011);
  CHECK_INT_EQ(config.vision_feature_layers.values[0], -2);
  vlm_model_config_release(&config);
}

static void phi4_multimodal_defaults(void) {
  vlm_model_config config;
  if (!parse_ok("{\"model_type\": \"phi4_multimodal\"}", &config)) return;
  /* Phi4MultimodalConfig(): eos_token_id None becomes [199999, 200020]. */
  CHECK_INT_EQ(config.text.eos_token_ids.count, 2);
  CHECK_INT_EQ(config.text.eos_token_ids.ids[1], 200020);
  CHECK_INT_EQ(config.text.head_dim, 96);
  CHECK_INT_EQ(config.text.sliding_window, 0);
  CHECK_INT_EQ(config.text.layer_types[0], VLM_LAYER_ATTENTION_FULL);
  CHECK_INT_EQ(config.text.rope.type, VLM_ROPE_DEFAULT);
  vlm_model_config_release(&config);
}

/* allenai/Molmo2 config.json in its remote-code spelling: vit_config,
 * vit_layers, qkv_bias, layer_norm_eps, image_default_input_size. */
static const char molmo2_8b[] =
    "{\"architectures\": [\"Molmo2ForConditionalGeneration\"], \"adapter_config\":"
    " {\"head_dim\": 72, \"hidden_act\": \"silu\", \"hidden_size\": 1152, \"intermediate_size\": 12288,"
    " \"model_type\": \"molmo2\", \"num_attention_heads\": 16, \"num_key_value_heads\": 16,"
    " \"pooling_attention_mask\": true, \"text_hidden_size\": 4096, \"vit_layers\": [-3, -9]},"
    " \"auto_map\": {\"AutoConfig\": \"configuration_molmo2.Molmo2Config\"},"
    " \"frame_end_token_id\": 151944, \"frame_start_token_id\": 151943, \"image_col_id\": 151939,"
    " \"image_end_token_id\": 151937, \"image_low_res_id\": 151942, \"image_patch_id\": 151938,"
    " \"image_start_token_id\": 151936, \"low_res_image_start_token_id\": 151940,"
    " \"model_type\": \"molmo2\", \"text_config\": {\"additional_vocab_size\": 128, \"head_dim\": 128,"
    " \"hidden_act\": \"silu\", \"hidden_size\": 4096, \"intermediate_size\": 12288,"
    " \"layer_norm_eps\": 1e-05, \"max_position_embeddings\": 36864, \"model_type\": \"molmo2_text\","
    " \"norm_after\": false, \"num_attention_heads\": 32, \"num_hidden_layers\": 36,"
    " \"num_key_value_heads\": 8, \"qk_norm_type\": \"qwen3\", \"qkv_bias\": true,"
    " \"rope_scaling\": null, \"rope_theta\": 1000000.0, \"use_qk_norm\": true,"
    " \"vocab_size\": 151936}, \"tie_word_embeddings\": false, \"torch_dtype\": \"float32\","
    " \"use_frame_special_tokens\": true, \"vit_config\": {\"head_dim\": 72, \"hidden_act\":"
    " \"gelu_pytorch_tanh\", \"hidden_size\": 1152, \"image_default_input_size\": [378, 378],"
    " \"image_num_pos\": 729, \"image_patch_size\": 14, \"intermediate_size\": 4304,"
    " \"layer_norm_eps\": 1e-06, \"model_type\": \"molmo2\", \"num_attention_heads\": 16,"
    " \"num_hidden_layers\": 27, \"num_key_value_heads\": 16}}";

static void molmo2_maps_remote_code_names(void) {
  vlm_model_config config;
  if (!parse_ok(molmo2_8b, &config)) return;
  const vlm_text_config *t = &config.text;
  CHECK_STR_EQ(t->model_type, "molmo2_text");
  CHECK_NEAR(t->rms_norm_eps, 1e-5, 0); /* layer_norm_eps -> rms_norm_eps */
  CHECK(t->attention_bias);            /* qkv_bias -> attention_bias */
  CHECK(!t->attention_output_bias);    /* Molmo2 o_proj has no bias */
  CHECK_NEAR(t->rope.theta, 1e6, 0);
  const vlm_vision_config *v = &config.vision;
  CHECK_STR_EQ(v->model_type, "molmo2_vision");
  CHECK_INT_EQ(v->image_height, 378);
  CHECK_INT_EQ(v->patch_size, 14);
  CHECK_INT_EQ(v->num_position_embeddings, 729);
  CHECK_INT_EQ(v->head_dim, 72);
  /* vit_layers [-3, -9] of 27 -> [24, 18], and the encoder stops at 25. */
  CHECK(config.vision_feature_layer_is_list);
  CHECK_INT_EQ(config.vision_feature_layers.values[0], 24);
  CHECK_INT_EQ(config.vision_feature_layers.values[1], 18);
  CHECK_INT_EQ(v->num_hidden_layers, 25);
  CHECK_INT_EQ(config.image_token_id, 151938);
  CHECK_INT_EQ(config.video_token_id, 151938);
  CHECK_INT_EQ(config.vision_start_token_id, 151936);
  CHECK_INT_EQ(config.vision_end_token_id, 151937);
  CHECK_INT_EQ(config.dtype, VLM_DTYPE_F32);
  CHECK(config.adapter_section != NULL);
  vlm_model_config_release(&config);
}

/* ---------------------------------------------------------------------- */
/* Text models                                                             */
/* ---------------------------------------------------------------------- */

/* meta-llama/Llama-3.2-1B/config.json. */
static void llama_3_2_reads_llama3_rope(void) {
  vlm_model_config config;
  if (!parse_ok("{\"architectures\": [\"LlamaForCausalLM\"], \"attention_bias\": false,"
                " \"bos_token_id\": 128000, \"eos_token_id\": 128001, \"head_dim\": 64,"
                " \"hidden_act\": \"silu\", \"hidden_size\": 2048, \"intermediate_size\": 8192,"
                " \"max_position_embeddings\": 131072, \"mlp_bias\": false, \"model_type\": \"llama\","
                " \"num_attention_heads\": 32, \"num_hidden_layers\": 16, \"num_key_value_heads\": 8,"
                " \"pretraining_tp\": 1, \"rms_norm_eps\": 1e-05, \"rope_scaling\": {\"factor\": 32.0,"
                " \"high_freq_factor\": 4.0, \"low_freq_factor\": 1.0,"
                " \"original_max_position_embeddings\": 8192, \"rope_type\": \"llama3\"},"
                " \"rope_theta\": 500000.0, \"tie_word_embeddings\": true, \"torch_dtype\": \"bfloat16\","
                " \"vocab_size\": 128256}",
                &config))
    return;
  const vlm_text_config *t = &config.text;
  CHECK_INT_EQ(t->head_dim, 64);
  CHECK_INT_EQ(t->rope.type, VLM_ROPE_LLAMA3);
  CHECK_NEAR(t->rope.theta, 500000, 0);
  CHECK_NEAR(t->rope.factor, 32, 0);
  CHECK_NEAR(t->rope.low_freq_factor, 1, 0);
  CHECK_NEAR(t->rope.high_freq_factor, 4, 0);
  CHECK_INT_EQ(t->rope.original_max_position_embeddings, 8192);
  CHECK(config.tie_word_embeddings && t->tie_word_embeddings);
  CHECK(!config.has_vision);
  CHECK(config.text_section == config.root_section);
  vlm_model_config_release(&config);
}

static void yarn_attention_factor_is_derived(void) {
  vlm_model_config config;
  if (!parse_ok("{\"model_type\": \"llama\", \"max_position_embeddings\": 32768, \"rope_scaling\":"
                " {\"rope_type\": \"yarn\", \"factor\": 4.0, \"original_max_position_embeddings\": 8192}}",
                &config))
    return;
  CHECK_INT_EQ(config.text.rope.type, VLM_ROPE_YARN);
  CHECK_NEAR(config.text.rope.attention_factor, 0.1 * log(4.0) + 1.0, 1e-15);
  CHECK_NEAR(config.text.rope.beta_fast, 32, 0);
  CHECK_NEAR(config.text.rope.beta_slow, 1, 0);
  CHECK(config.text.rope.truncate);
  vlm_model_config_release(&config);
}

static void qwen2_qwen3_mistral_text_models(void) {
  vlm_model_config config;
  /* Qwen/Qwen2.5-0.5B-Instruct: no head_dim field, q/k/v biases. */
  if (parse_ok("{\"architectures\": [\"Qwen2ForCausalLM\"], \"bos_token_id\": 151643,"
               " \"eos_token_id\": 151645, \"hidden_act\": \"silu\", \"hidden_size\": 896,"
               " \"intermediate_size\": 4864, \"max_position_embeddings\": 32768,"
               " \"max_window_layers\": 21, \"model_type\": \"qwen2\", \"num_attention_heads\": 14,"
               " \"num_hidden_layers\": 24, \"num_key_value_heads\": 2, \"rms_norm_eps\": 1e-06,"
               " \"rope_theta\": 1000000.0, \"sliding_window\": 32768, \"tie_word_embeddings\": true,"
               " \"torch_dtype\": \"bfloat16\", \"use_sliding_window\": false, \"vocab_size\": 151936}",
               &config)) {
    CHECK_INT_EQ(config.text.head_dim, 64);
    CHECK(config.text.attention_bias && !config.text.attention_output_bias);
    CHECK_INT_EQ(config.text.sliding_window, 0);
    CHECK_NEAR(config.text.rope.theta, 1e6, 0);
    vlm_model_config_release(&config);
  }
  /* Qwen/Qwen3-0.6B: head_dim 128 although 1024 / 16 = 64. */
  if (parse_ok("{\"model_type\": \"qwen3\", \"head_dim\": 128, \"hidden_size\": 1024,"
               " \"num_attention_heads\": 16, \"num_key_value_heads\": 8, \"num_hidden_layers\": 28,"
               " \"rope_scaling\": null, \"rope_theta\": 1000000, \"sliding_window\": null,"
               " \"use_sliding_window\": false, \"tie_word_embeddings\": true}",
               &config)) {
    CHECK_INT_EQ(config.text.head_dim, 128);
    CHECK_INT_EQ(config.text.rope.rotary_dimension, 128);
    CHECK(!config.text.attention_bias);
    vlm_model_config_release(&config);
  }
  /* Mistral-7B-v0.1 slides on every layer; v0.3 sets sliding_window null. */
  if (parse_ok("{\"model_type\": \"mistral\", \"sliding_window\": 4096, \"num_hidden_layers\": 4}",
               &config)) {
    check_layers(&config.text, "SSSS");
    CHECK_INT_EQ(config.text.sliding_window, 4096);
    vlm_model_config_release(&config);
  }
  if (parse_ok("{\"model_type\": \"mistral\", \"sliding_window\": null, \"num_hidden_layers\": 4,"
               " \"rope_theta\": 1000000.0}",
               &config)) {
    check_layers(&config.text, "FFFF");
    CHECK_INT_EQ(config.text.sliding_window, 0);
    CHECK_NEAR(config.text.rope.theta, 1e6, 0);
    vlm_model_config_release(&config);
  }
}

/* {"model_type": T} alone gives T's Transformers class defaults (values read
 * from CONFIG_MAPPING[T]() in transformers 5.23.0). */
static void bare_model_types_get_class_defaults(void) {
  static const struct {
    const char *model_type;
    int64_t vocab, hidden, layers, heads, kv_heads, head_dim, max_positions;
    double eps, theta;
    int64_t sliding_window, bos;
    bool tie;
  } cases[] = {
      {"llama", 32000, 4096, 32, 32, 32, 128, 2048, 1e-6, 10000, 0, 1, false},
      {"mistral", 32000, 4096, 32, 32, 8, 128, 131072, 1e-6, 10000, 4096, 1, false},
      {"qwen2", 151936, 4096, 32, 32, 32, 128, 32768, 1e-6, 10000, 0, -1, false},
      {"qwen3", 151936, 4096, 32, 32, 32, 128, 32768, 1e-6, 10000, 0, -1, false},
      {"gemma3_text", 262208, 2304, 26, 8, 4, 256, 131072, 1e-6, 1e6, 4096, 2, true},
      {"gemma3", 262208, 2304, 26, 8, 4, 256, 131072, 1e-6, 1e6, 4096, 2, true},
      {"qwen2_vl", 152064, 8192, 80, 64, 8, 128, 32768, 1e-5, 1e6, 0, 151643, false},
      {"qwen2_5_vl", 152064, 8192, 80, 64, 8, 128, 32768, 1e-5, 1e6, 0, 151643, false},
      {"qwen3_vl", 151936, 4096, 32, 32, 32, 128, 128000, 1e-6, 500000, 0, -1, false},
      {"gemma3n", 262400, 2048, 35, 8, 2, 256, 32768, 1e-6, 1e6, 512, 2, true},
      {"phi4_multimodal", 200064, 3072, 32, 32, 8, 96, 131072, 1e-5, 10000, 0, 199999, false},
      {"molmo2", 151936, 4096, 36, 32, 8, 128, 36864, 1e-6, 10000, 0, -1, false},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char text[128];
    snprintf(text, sizeof(text), "{\"model_type\": \"%s\"}", cases[i].model_type);
    vlm_model_config config;
    if (!parse_ok(text, &config)) continue;
    const vlm_text_config *t = &config.text;
    test_current = cases[i].model_type;
    CHECK_INT_EQ(t->vocab_size, cases[i].vocab);
    CHECK_INT_EQ(t->hidden_size, cases[i].hidden);
    CHECK_INT_EQ(t->num_hidden_layers, cases[i].layers);
    CHECK_INT_EQ(t->num_attention_heads, cases[i].heads);
    CHECK_INT_EQ(t->num_key_value_heads, cases[i].kv_heads);
    CHECK_INT_EQ(t->head_dim, cases[i].head_dim);
    CHECK_INT_EQ(t->max_position_embeddings, cases[i].max_positions);
    CHECK_NEAR(t->rms_norm_eps, cases[i].eps, 0);
    CHECK_NEAR(t->rope.theta, cases[i].theta, 0);
    CHECK_INT_EQ(t->sliding_window, cases[i].sliding_window);
    CHECK_INT_EQ(t->bos_token_id, cases[i].bos);
    CHECK_INT_EQ(config.tie_word_embeddings, cases[i].tie);
    vlm_model_config_release(&config);
  }
  test_current = "bare_model_types_get_class_defaults";
}

/* ---------------------------------------------------------------------- */
/* Refusals                                                                */
/* ---------------------------------------------------------------------- */

static void refuses_malformed_configs_with_the_key_path(void) {
  static const struct {
    const char *text;
    vlm_status_code code;
    const char *fragment;
  } cases[] = {
      {"{\"model_type\": \"llava\", \"text_config\": {\"num_attention_heads\": \"x\"}}",
       VLM_STATUS_INVALID_ARGUMENT,
       "config.json: text_config.num_attention_heads must be a positive integer, got \"x\""},
      {"{\"model_type\": \"llama\", \"hidden_size\": -4096}", VLM_STATUS_INVALID_ARGUMENT,
       "hidden_size must be a positive integer, got -4096"},
      {"{\"model_type\": \"llama\", \"num_hidden_layers\": 5000}", VLM_STATUS_INVALID_ARGUMENT,
       "num_hidden_layers must be a positive integer no larger than 1024, got 5000"},
      {"{\"model_type\": \"llama\", \"vocab_size\": 4294967296}", VLM_STATUS_INVALID_ARGUMENT,
       "vocab_size must be a positive integer no larger than 2147483647"},
      {"{\"model_type\": \"llama\", \"hidden_size\": 4100, \"num_attention_heads\": 32}",
       VLM_STATUS_INVALID_ARGUMENT, "hidden_size (4100) is not a multiple of num_attention_heads (32)"},
      {"{\"model_type\": \"llama\", \"num_key_value_heads\": 5}", VLM_STATUS_INVALID_ARGUMENT,
       "num_attention_heads (32) is not a multiple of num_key_value_heads (5)"},
      {"{\"model_type\": \"llama\", \"rms_norm_eps\": true}", VLM_STATUS_INVALID_ARGUMENT,
       "rms_norm_eps must be a number"},
      {"{\"model_type\": \"llama\", \"tie_word_embeddings\": \"yes\"}", VLM_STATUS_INVALID_ARGUMENT,
       "tie_word_embeddings must be true or false"},
      {"{\"model_type\": \"llama\", \"eos_token_id\": [1, \"2\"]}", VLM_STATUS_INVALID_ARGUMENT,
       "eos_token_id must be a token id or a list of token ids"},
      {"{\"model_type\": \"llama\", \"torch_dtype\": \"float7\"}", VLM_STATUS_INVALID_ARGUMENT,
       "torch_dtype must be a torch dtype name"},
      {"{\"model_type\": \"gpt2\"}", VLM_STATUS_UNIMPLEMENTED,
       "model_type \"gpt2\" is not supported (supported: llama, mistral"},
      {"{\"hidden_size\": 8}", VLM_STATUS_INVALID_ARGUMENT, "model_type is missing"},
      {"[1, 2]", VLM_STATUS_INVALID_ARGUMENT, "the top level must be a JSON object"},
      {"{\"model_type\": \"llama\",}", VLM_STATUS_DATA_LOSS, "config.json: invalid JSON"},
      {"{\"model_type\": \"llava\", \"vision_config\": {\"model_type\": \"dinov2\"}}",
       VLM_STATUS_UNIMPLEMENTED,
       "vision_config.model_type \"dinov2\" is not supported for llava (supported: "
       "clip_vision_model, siglip_vision_model, qwen2_vl_vision, "},
      {"{\"model_type\": \"llava\", \"text_config\": [1]}", VLM_STATUS_INVALID_ARGUMENT,
       "text_config must be an object, got [1]"},
      {"{\"model_type\": \"llama\", \"rope_scaling\": {\"rope_type\": \"magic\"}}",
       VLM_STATUS_UNIMPLEMENTED, "rope_scaling.rope_type \"magic\" is not supported"},
      {"{\"model_type\": \"llama\", \"rope_scaling\": {\"rope_type\": \"linear\"}}",
       VLM_STATUS_INVALID_ARGUMENT, "rope_scaling.factor must be a number"},
      {"{\"model_type\": \"qwen3\", \"num_hidden_layers\": 2,"
       " \"layer_types\": [\"full_attention\", \"linear_attention\"]}",
       VLM_STATUS_UNIMPLEMENTED, "layer_types[1] is \"linear_attention\""},
      {"{\"model_type\": \"qwen3\", \"num_hidden_layers\": 3, \"layer_types\": [\"full_attention\"]}",
       VLM_STATUS_INVALID_ARGUMENT, "layer_types lists 1 layers but num_hidden_layers is 3"},
      {"{\"model_type\": \"qwen2_vl\", \"rope_scaling\": {\"type\": \"mrope\","
       " \"mrope_section\": [16, 16, 16]}}",
       VLM_STATUS_INVALID_ARGUMENT, "mrope_section sums to 48 but the rotary dimension / 2 is 64"},
      {"{\"model_type\": \"gemma3_text\", \"sliding_window\": null}", VLM_STATUS_INVALID_ARGUMENT,
       "layer_types[0] is sliding_attention but sliding_window is unset"},
      {"{\"model_type\": \"qwen2_5_vl\", \"vision_config\": {\"fullatt_block_indexes\": [40]}}",
       VLM_STATUS_INVALID_ARGUMENT, "vision_config.fullatt_block_indexes must be a list of integers in [0, 31]"},
      {"{\"model_type\": \"molmo2\", \"adapter_config\": {\"vision_feature_layer\": [30]}}",
       VLM_STATUS_INVALID_ARGUMENT, "adapter_config.vision_feature_layer entry 30 does not index"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    vlm_model_config config;
    CHECK_ERROR(parse(cases[i].text, &config), cases[i].code, cases[i].fragment);
    CHECK(config.storage == NULL); /* nothing held after a failure */
  }
}

static void refuses_long_strings_and_huge_sections(void) {
  char text[1024];
  char name[400];
  memset(name, 'a', sizeof(name) - 1);
  name[sizeof(name) - 1] = '\0';
  snprintf(text, sizeof(text), "{\"model_type\": \"llama\", \"hidden_act\": \"%s\"}", name);
  vlm_model_config config;
  CHECK_ERROR(parse(text, &config), VLM_STATUS_INVALID_ARGUMENT,
              "hidden_act must be a string of at most 256 bytes, got \"aaaa");
  CHECK_ERROR(parse("{\"model_type\": \"llama\", \"hidden_act\": \"si\\u0000lu\"}", &config),
              VLM_STATUS_INVALID_ARGUMENT, "hidden_act must be a string");
  /* 5000 keys in one section. */
  size_t size = 64 + 5000 * 16;
  char *big = malloc(size);
  size_t used = (size_t)snprintf(big, size, "{\"model_type\": \"llama\"");
  for (int i = 0; i < 5000; i++) used += (size_t)snprintf(big + used, size - used, ",\"k%d\":0", i);
  snprintf(big + used, size - used, "}");
  CHECK_ERROR(parse(big, &config), VLM_STATUS_OUT_OF_RANGE, "the top level has 5001 keys");
  free(big);
}

/* ---------------------------------------------------------------------- */
/* Files and tables                                                        */
/* ---------------------------------------------------------------------- */

static void loads_from_a_model_directory(void) {
  char directory[512];
  snprintf(directory, sizeof(directory), "%s/llava", test_temp_dir());
  mkdir(directory, 0700);
  free(test_write_file(directory, "config.json", llava_1_5_7b, strlen(llava_1_5_7b)));
  vlm_model_config config;
  CHECK_OK(vlm_model_config_load(directory, NULL, &config));
  CHECK_INT_EQ(config.text.vocab_size, 32064);
  vlm_model_config_release(&config);
  snprintf(directory, sizeof(directory), "%s/empty", test_temp_dir());
  mkdir(directory, 0700);
  CHECK_ERROR(vlm_model_config_load(directory, NULL, &config), VLM_STATUS_NOT_FOUND,
              "config.json");
  snprintf(directory, sizeof(directory), "%s/broken", test_temp_dir());
  mkdir(directory, 0700);
  free(test_write_file(directory, "config.json", "{\"model_type\": ", 15));
  CHECK_ERROR(vlm_model_config_load(directory, NULL, &config), VLM_STATUS_DATA_LOSS,
              "broken/config.json: invalid JSON");
  /* Errors name the file. */
  free(test_write_file(directory, "config.json", "{\"model_type\": \"llama\", \"head_dim\": 0}", 38));
  CHECK_ERROR(vlm_model_config_load(directory, NULL, &config), VLM_STATUS_INVALID_ARGUMENT,
              "broken/config.json: head_dim must be a positive integer, got 0");
}

/* The sub-config key a model_type may fill, as config.c reads it. */
static bool record_fits_role(const char *key, const vlm_config_record *record) {
  if (strcmp(key, "text_config") == 0) return vlm_config_record_is_text(record);
  if (strcmp(key, "vision_config") == 0) return vlm_config_record_is_vision(record);
  if (strcmp(key, "audio_config") == 0) return vlm_config_record_is_audio(record);
  return true;
}

static void every_defaults_table_parses_and_names_its_class(void) {
  size_t count = vlm_config_record_count();
  CHECK(count >= 30);
  for (size_t i = 0; i < count; i++) {
    const vlm_config_record *record = vlm_config_record_at(i);
    const char *table = record->defaults;
    CHECK(table != NULL && vlm_config_defaults_json(record->model_type) == table);
    CHECK(vlm_config_record_find(record->model_type) == record); /* each model_type once */
    vlm_json_document document;
    CHECK_OK(vlm_json_parse(table, strlen(table), NULL, NULL, record->model_type, &document));
    CHECK(vlm_json_string_equals(vlm_json_object_get(document.root, "model_type"), record->model_type));
    CHECK(vlm_json_get_string(vlm_json_object_get(document.root, "class")) != NULL);
    const vlm_json_value *fields = vlm_json_object_get(document.root, "fields");
    CHECK(fields && fields->type == VLM_JSON_OBJECT);
    /* A composite is what has sub-configs, and each one names a record
     * that can fill its role. */
    const vlm_json_value *subs = vlm_json_object_get(document.root, "sub_configs");
    CHECK_INT_EQ(record->composite, subs != NULL);
    for (size_t s = 0; subs && s < subs->as.object.count; s++) {
      const vlm_json_member *sub = &subs->as.object.members[s];
      const vlm_config_record *target =
          vlm_config_record_find(vlm_json_get_string(vlm_json_object_get(&sub->value, "model_type")));
      CHECK(target != NULL);
      if (target) CHECK(record_fits_role(sub->key, target));
    }
    /* Only a whole model registers a tokenizer class. */
    if (record->tokenizer_class) CHECK(vlm_config_record_is_model(record));
    vlm_json_document_release(&document);
  }
  CHECK(vlm_config_record_at(count) == NULL);
  CHECK(strstr(vlm_config_defaults_json("llama"), "\"class\": \"LlamaConfig\"") != NULL);
  CHECK(vlm_config_defaults_json("gpt2") == NULL);
  CHECK(vlm_config_defaults_json(NULL) == NULL);
  const vlm_class_kind kinds[] = {VLM_CLASS_IMAGE_PROCESSOR, VLM_CLASS_PROCESSOR, VLM_CLASS_FEATURE_EXTRACTOR};
  for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
    CHECK(vlm_class_defaults_count(kinds[k]) >= 1);
    for (size_t i = 0; i < vlm_class_defaults_count(kinds[k]); i++) {
      const vlm_class_defaults *entry = vlm_class_defaults_at(kinds[k], i);
      CHECK(vlm_class_defaults_find(kinds[k], entry->class_name) == entry->defaults); /* each class once */
      char quoted[160];
      snprintf(quoted, sizeof(quoted), "\"class\": \"%s\"", entry->class_name);
      CHECK(strstr(entry->defaults, quoted) != NULL);
    }
  }
  CHECK(vlm_image_processor_defaults_json("CLIPImageProcessor") != NULL);
  CHECK(vlm_processor_defaults_json("LlavaProcessor") != NULL);
  CHECK(vlm_generation_defaults_json() != NULL);
}

/* The names an error lists come from the records, so they cannot drift
 * from what is accepted. */
static bool listed(const char *names, const char *name) {
  char wrapped[2100], item[160];
  snprintf(wrapped, sizeof(wrapped), ", %s,", names);
  snprintf(item, sizeof(item), ", %s,", name);
  return strstr(wrapped, item) != NULL;
}

static void supported_lists_come_from_the_records(void) {
  char names[2048];
  vlm_config_record_names(vlm_config_record_is_vision, names, sizeof(names));
  for (size_t i = 0; i < vlm_config_record_count(); i++) {
    const vlm_config_record *record = vlm_config_record_at(i);
    CHECK_INT_EQ(listed(names, record->model_type), record->read_vision != NULL);
  }
  CHECK(listed(names, "siglip_vision_model") && !listed(names, "qwen2_vl"));
  vlm_model_config config;
  CHECK_ERROR(parse("{\"model_type\": \"gpt2\"}", &config), VLM_STATUS_UNIMPLEMENTED,
              "(supported: llama, mistral, qwen2, qwen3, llava, qwen2_vl, qwen2_vl_text, ");
  CHECK_ERROR(parse("{\"model_type\": \"clip_vision_model\"}", &config), VLM_STATUS_UNIMPLEMENTED,
              "model_type \"clip_vision_model\" is not supported");
  /* A list that would not fit is cut, never overrun. */
  char small[8];
  CHECK_STR_EQ(vlm_config_record_names(NULL, small, sizeof(small)), "llama, ");
}

TEST_MAIN(TEST(llava_1_5_fills_llama_and_clip_defaults),
          TEST(llava_sub_config_defaults_depend_on_presence),
          TEST(llava_forwards_text_tying_and_aliases),
          TEST(qwen2_vl_flat_legacy_and_v5_files_agree),
          TEST(qwen2_sliding_layers_follow_max_window_layers),
          TEST(qwen2_5_vl_reads_windowed_vision),
          TEST(qwen3_vl_reads_interleaved_mrope_and_deepstack), TEST(mrope_layout_follows_the_family_not_the_flag),
          TEST(qwen3_vl_moe_defaults),
          TEST(gemma3_4b_reads_both_ropes_and_the_layer_pattern),
          TEST(gemma3_v5_rope_parameters_give_the_same_struct),
          TEST(gemma3_text_legacy_keys_and_pattern), TEST(gemma3_1b_text_only),
          TEST(gemma3n_reads_all_three_parts), TEST(gemma3n_defaults_derive_the_layer_pattern),
          TEST(phi4_multimodal_reads_longrope_and_both_encoders), TEST(phi4_multimodal_defaults),
          TEST(molmo2_maps_remote_code_names), TEST(llama_3_2_reads_llama3_rope),
          TEST(yarn_attention_factor_is_derived), TEST(qwen2_qwen3_mistral_text_models),
          TEST(bare_model_types_get_class_defaults),
          TEST(refuses_malformed_configs_with_the_key_path),
          TEST(refuses_long_strings_and_huge_sections), TEST(loads_from_a_model_directory),
          TEST(every_defaults_table_parses_and_names_its_class),
          TEST(supported_lists_come_from_the_records))
