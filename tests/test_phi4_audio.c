/* Phi-4-multimodal's speech path pieces that the goldens cover only at one
 * configuration: the streaming mask Transformers adds to the attention
 * bias (adaptive_enc_mask over chunk_size / left_chunk, its values printed
 * by the pinned Transformers for three settings, including Phi-4's -1: one
 * chunk, all ones), the encoder's rows for clips whose frame counts round
 * differently, the xla length buckets and a clip's inputs padded to one,
 * and the configurations Transformers' modules cannot run, refused by
 * name. The encoder graph itself is proven by the goldens
 * (tests/goldens/phi4_multimodal/speech*, vlm compare). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tensor_list.h"
#include "graph/graph.h"
#include "io/config.h"
#include "media/media_item.h"
#include "models/phi4_audio.h"
#include "test.h"

/* adaptive_enc_mask(length, np.arange(0, length, chunk), left_window=left)
 * from transformers 5.23.0, row-major. */
static const struct {
  int64_t length, chunk, left;
  const char *mask;
} masks[] = {
    {10, 4, 2, "1111000000111100000011110000001111000000111111110011111111001111111100111111110011111111111111111111"},
    {7, 3, 0, "1110000111000011100000001110000111000011100000001"},
    {6, -1, 18, "111111111111111111111111111111111111"},
};

static void chunk_masks_are_transformers(void) {
  for (size_t c = 0; c < sizeof(masks) / sizeof(masks[0]); c++) {
    int64_t n = masks[c].length;
    float *mask = malloc((size_t)(n * n) * sizeof(float));
    vlm_phi4_audio_chunk_mask(n, masks[c].chunk, masks[c].left, mask);
    for (int64_t i = 0; i < n * n; i++) CHECK(mask[i] == (masks[c].mask[i] == '1' ? 1.0f : 0.0f));
    free(mask);
  }
}

static const char *config_text(char *out, size_t size, const char *audio_extra) {
  snprintf(out, size,
           "{\"model_type\": \"phi4_multimodal\", \"hidden_size\": 16, \"intermediate_size\": 32, "
           "\"num_hidden_layers\": 1, \"num_attention_heads\": 2, \"num_key_value_heads\": 1, \"vocab_size\": 64, "
           "\"audio_config\": {\"hidden_size\": 16, \"intermediate_size\": 32, \"num_blocks\": 1, "
           "\"num_attention_heads\": 2, \"depthwise_separable_out_channel\": 16, \"ext_pw_out_channel\": 16, "
           "\"nemo_conv_channels\": 8, \"audio_token_id\": 60%s}}",
           audio_extra);
  return out;
}

static vlm_status declare(const char *audio_extra) {
  char text[1024];
  config_text(text, sizeof(text), audio_extra);
  vlm_model_config config;
  vlm_status status = vlm_model_config_parse(text, strlen(text), "config.json", NULL, &config);
  if (status) return status;
  vlm_tensor_manifest manifest;
  vlm_manifest_init(&manifest);
  status = vlm_phi4_declare_audio_tensors(&config, &manifest);
  vlm_manifest_release(&manifest);
  vlm_model_config_release(&config);
  return status;
}

static void refuses_what_transformers_cannot_run(void) {
  CHECK_OK(declare(""));
  CHECK_ERROR(declare(", \"ext_pw_out_channel\": 8"), VLM_STATUS_UNIMPLEMENTED, "ext_pw_out_channel 8");
  CHECK_ERROR(declare(", \"downsample_rate\": 2"), VLM_STATUS_UNIMPLEMENTED, "downsample_rate 2");
  CHECK_ERROR(declare(", \"time_reduction\": 6"), VLM_STATUS_INVALID_ARGUMENT, "not a power of two");
  CHECK_ERROR(declare(", \"chunk_size\": 0"), VLM_STATUS_INVALID_ARGUMENT, "chunk_size 0");
  CHECK_ERROR(declare(", \"conv_activation\": \"mish\""), VLM_STATUS_UNIMPLEMENTED, "conv_activation 'mish'");
}

/* ceil(frames / 8) encoder rows, audio_embed_sizes of them taking
 * placeholders; more embed sizes than rows is refused. */
static void token_counts_and_rows(void) {
  char text[1024];
  config_text(text, sizeof(text), "");
  vlm_model_config config;
  CHECK_OK(vlm_model_config_parse(text, strlen(text), "config.json", NULL, &config));
  static const int64_t frames[] = {1, 8, 9, 342, 4001};
  for (size_t f = 0; f < sizeof(frames) / sizeof(frames[0]); f++) {
    int64_t rows = (frames[f] + 7) / 8;
    for (int extra = 0; extra < 2; extra++) {
      vlm_media_item item = {.kind = VLM_MEDIA_AUDIO};
      void *data = NULL;
      CHECK_OK(vlm_tensor_list_add(&item.tensors, "audio_input_features", VLM_DTYPE_F32, 2,
                                   (const int64_t[]){frames[f], 80}, &data));
      int32_t *size = NULL;
      CHECK_OK(vlm_tensor_list_add(&item.tensors, "audio_embed_sizes", VLM_DTYPE_I32, 1, (const int64_t[]){1},
                                   (void **)&size));
      *size = (int32_t)(rows + extra);
      int64_t count = 0;
      vlm_status status = vlm_phi4_audio_path.token_count(&config, NULL, &item, &count);
      if (extra) {
        CHECK_ERROR(status, VLM_STATUS_INVALID_ARGUMENT, "does not fit");
      } else {
        CHECK_OK(status);
        CHECK_INT_EQ(count, rows);
        /* The graph's output holds exactly those rows. */
        vlm_graph graph;
        vlm_graph_init(&graph);
        vlm_encoder_nodes nodes;
        CHECK_OK(vlm_phi4_audio_path.build_encoder(&config, frames[f], &graph, &nodes));
        const vlm_node *output = vlm_graph_node(&graph, nodes.output);
        if (output) CHECK_INT_EQ(output->shape[0], rows);
        vlm_graph_release(&graph);
      }
      vlm_media_item_release(&item);
    }
  }
  vlm_model_config_release(&config);
}

static void add_clip(vlm_media_item *item, int64_t frames) {
  memset(item, 0, sizeof(*item));
  item->kind = VLM_MEDIA_AUDIO;
  float *data = NULL;
  CHECK_OK(vlm_tensor_list_add(&item->tensors, "audio_input_features", VLM_DTYPE_F32, 2,
                               (const int64_t[]){frames, 80}, (void **)&data));
  for (int64_t i = 0; data && i < frames * 80; i++) data[i] = 1.0f + (float)(i % 7);
}

static int64_t ones(const vlm_named_tensor *mask) {
  int64_t count = 0;
  for (int64_t i = 0; mask && i < mask->shape[0]; i++) count += ((const float *)mask->data)[i] == 1.0f;
  return count;
}

static bool graph_has_input(const vlm_graph *graph, const char *name) {
  for (int32_t i = 0; i < graph->count; i++)
    if (graph->nodes[i].op == VLM_OP_INPUT && strcmp(graph->nodes[i].name, name) == 0) return true;
  return false;
}

/* The xla length buckets (encoder rows 16, 32, .., 256, 500, then whole
 * 500-row blocks, as frames), a clip's inputs padded to its bucket (zero
 * frames, the row masks of each subsampling stage, the padded keys -inf
 * in the one block's mask, none over two blocks) and the paddings refused.
 * A graph at a clip's own length (the cpu backend's) has no row masks. */
static void length_buckets_and_their_inputs(void) {
  char text[1024];
  config_text(text, sizeof(text), "");
  vlm_model_config config;
  CHECK_OK(vlm_model_config_parse(text, strlen(text), "config.json", NULL, &config));
  static const int64_t buckets[][2] = {{1, 128},      {128, 128},    {129, 256},    {339, 512},
                                       {512, 512},    {513, 1024},   {2048, 2048},  {2049, 4000},
                                       {4000, 4000},  {4001, 8000},  {8000, 8000},  {8001, 12000}};
  for (size_t i = 0; i < sizeof(buckets) / sizeof(buckets[0]); i++) {
    int64_t bucket = 0;
    CHECK_OK(vlm_phi4_audio_path.encoder_bucket(&config, buckets[i][0], &bucket));
    CHECK_INT_EQ(bucket, buckets[i][1]);
  }
  vlm_media_item item;
  add_clip(&item, 339);
  vlm_tensor_list inputs = {0};
  CHECK_OK(vlm_phi4_audio_path.encoder_inputs(&config, &item, 512, &inputs));
  const vlm_named_tensor *features = vlm_tensor_list_find(&inputs, "audio_input_features");
  CHECK(features && features->shape[0] == 512);
  if (features) {
    const float *values = features->data;
    CHECK(values[338 * 80 + 79] == 1.0f + (float)((338 * 80 + 79) % 7) && values[339 * 80] == 0.0f &&
          values[511 * 80 + 79] == 0.0f);
  }
  static const int64_t lengths[] = {512, 256, 128, 64}, kept[] = {339, 170, 85, 43};
  for (int stage = 0; stage < 4; stage++) {
    char name[32];
    snprintf(name, sizeof(name), "audio_row_mask_%d", stage);
    const vlm_named_tensor *mask = vlm_tensor_list_find(&inputs, name);
    CHECK(mask && mask->shape[0] == lengths[stage]);
    CHECK_INT_EQ(ones(mask), kept[stage]);
  }
  const vlm_named_tensor *chunk = vlm_tensor_list_find(&inputs, "audio_chunk_mask");
  CHECK(chunk && chunk->shape[0] == 64 && chunk->shape[1] == 64);
  int64_t masked = 0, finite = 0;
  for (int64_t i = 0; chunk && i < 64 * 64; i++) {
    float value = ((const float *)chunk->data)[i];
    masked += value == -INFINITY && i % 64 >= 43;
    finite += (value == 0.0f || value == 1.0f) && i % 64 < 43;
  }
  CHECK_INT_EQ(masked, 64 * 21);
  CHECK_INT_EQ(finite, 64 * 43);
  vlm_tensor_list_release(&inputs);
  vlm_graph graph;
  vlm_graph_init(&graph);
  vlm_encoder_nodes nodes;
  CHECK_OK(vlm_phi4_audio_path.build_encoder(&config, 512, &graph, &nodes));
  for (int stage = 0; stage < 4; stage++) {
    char name[32];
    snprintf(name, sizeof(name), "audio_row_mask_%d", stage);
    CHECK(graph_has_input(&graph, name));
  }
  vlm_graph_release(&graph);
  vlm_graph_init(&graph);
  CHECK_OK(vlm_phi4_audio_path.build_encoder(&config, 339, &graph, &nodes));
  CHECK(!graph_has_input(&graph, "audio_row_mask_0") && !graph_has_input(&graph, "audio_row_mask_3"));
  vlm_graph_release(&graph);
  /* Not a bucket, fewer frames than the clip's. */
  CHECK_ERROR(vlm_phi4_audio_path.encoder_inputs(&config, &item, 520, &inputs), VLM_STATUS_INVALID_ARGUMENT,
              "padded to its bucket (512 frames)");
  vlm_tensor_list_release(&inputs);
  CHECK_ERROR(vlm_phi4_audio_path.encoder_inputs(&config, &item, 256, &inputs), VLM_STATUS_INVALID_ARGUMENT,
              "not at 256");
  vlm_tensor_list_release(&inputs);
  vlm_media_item_release(&item);
  /* One block (500 rows) stays one block. */
  add_clip(&item, 3993);
  CHECK_ERROR(vlm_phi4_audio_path.encoder_inputs(&config, &item, 8000, &inputs), VLM_STATUS_INVALID_ARGUMENT,
              "padded to its bucket (4000 frames)");
  vlm_tensor_list_release(&inputs);
  vlm_media_item_release(&item);
  /* Two blocks: the padded rows are Transformers' zero rows, attended. */
  add_clip(&item, 4001);
  CHECK_OK(vlm_phi4_audio_path.encoder_inputs(&config, &item, 8000, &inputs));
  chunk = vlm_tensor_list_find(&inputs, "audio_chunk_mask");
  CHECK(chunk && chunk->shape[0] == 500);
  for (int64_t i = 0; chunk && i < 500 * 500; i++) CHECK(((const float *)chunk->data)[i] != -INFINITY);
  CHECK_INT_EQ(ones(vlm_tensor_list_find(&inputs, "audio_row_mask_3")), 501);
  vlm_tensor_list_release(&inputs);
  vlm_media_item_release(&item);
  vlm_model_config_release(&config);
}

TEST_MAIN(TEST(chunk_masks_are_transformers), TEST(refuses_what_transformers_cannot_run), TEST(token_counts_and_rows),
          TEST(length_buckets_and_their_inputs))
