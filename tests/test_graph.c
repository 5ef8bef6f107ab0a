#include "graph/graph.h"
#include "io/config.h"
#include "models/decoder.h"
#include "test.h"

#define SHAPE VLM_SHAPE

static void builders_check_shapes_and_name_the_node(void) {
  vlm_graph graph;
  vlm_graph_init(&graph);
  int32_t x = vlm_graph_input(&graph, VLM_DTYPE_F32, 2, SHAPE(3, 8), "x");
  int32_t w = vlm_graph_weight(&graph, "w", VLM_DTYPE_F32, 2, SHAPE(5, 8));
  int32_t y = vlm_graph_linear(&graph, x, w, -1, "layer.%d.proj", 2);
  CHECK(y >= 0);
  CHECK_INT_EQ(vlm_graph_node(&graph, y)->shape[1], 5);
  CHECK_INT_EQ(vlm_graph_find(&graph, "layer.2.proj"), y);
  int32_t bad = vlm_graph_linear(&graph, y, w, -1, "bad.proj"); /* in 5 != 8 */
  CHECK_INT_EQ(bad, -1);
  CHECK_INT_EQ(vlm_graph_add(&graph, x, x, "after.error"), -1); /* no-op once failed */
  CHECK_ERROR(vlm_graph_take_error(&graph), VLM_STATUS_INVALID_ARGUMENT,
              "graph node 'bad.proj' (linear): needs x [rows, in] and weight [out, in]");
  vlm_graph_release(&graph);

  vlm_graph_init(&graph);
  x = vlm_graph_input(&graph, VLM_DTYPE_F32, 2, SHAPE(4, 6), "x");
  CHECK_INT_EQ(vlm_graph_reshape(&graph, x, 2, SHAPE(5, 5), "r"), -1);
  CHECK_ERROR(vlm_graph_take_error(&graph), VLM_STATUS_INVALID_ARGUMENT, "element count changes");
  vlm_graph_release(&graph);
}

static const char tiny_qwen3[] =
    "{\"model_type\": \"qwen3\", \"vocab_size\": 300, \"hidden_size\": 128,"
    " \"intermediate_size\": 256, \"num_hidden_layers\": 2, \"num_attention_heads\": 2,"
    " \"num_key_value_heads\": 1, \"head_dim\": 64, \"tie_word_embeddings\": true}";

static void decoder_graph_names_nodes_after_transformers_modules(void) {
  vlm_model_config config;
  CHECK_OK(vlm_model_config_parse(tiny_qwen3, sizeof(tiny_qwen3) - 1, "config.json", NULL, &config));
  vlm_decoder_description description = {
      .text = &config.text, .tie_word_embeddings = config.tie_word_embeddings,
      .prefix = "model.", .layout = {.qk_norm = true}, .embedding_scale = 1.0};
  const int32_t last_row[1] = {6};
  vlm_decoder_step step = {.row_count = 7, .logit_rows = last_row, .logit_row_count = 1};
  vlm_graph graph;
  vlm_graph_init(&graph);
  CHECK_OK(vlm_build_decoder_graph(&description, &step, &graph));
  const char *expected[] = {"model.embed_tokens", "model.layers.0.input_layernorm",
                            "model.layers.0.self_attn.q_norm", "model.layers.1.self_attn.k_rope",
                            "model.layers.1.self_attn.attention", "model.layers.1.mlp.down_proj",
                            "model.layers.1", "model.norm", "lm_head"};
  for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++)
    CHECK(vlm_graph_find(&graph, expected[i]) >= 0);
  const vlm_node *output = vlm_graph_node(&graph, graph.output);
  CHECK(output && output->rank == 2 && output->shape[0] == 1 && output->shape[1] == 300);
  const vlm_node *q_norm = vlm_graph_node(&graph, vlm_graph_find(&graph, "model.layers.0.self_attn.q_norm"));
  CHECK(q_norm && q_norm->rank == 3 && q_norm->shape[1] == 2 && q_norm->shape[2] == 64);
  /* Tied: the head reads the embedding table. */
  const vlm_node *head = vlm_graph_node(&graph, graph.output);
  CHECK_STR_EQ(vlm_graph_node(&graph, head->inputs[1])->name, "model.embed_tokens.weight");
  vlm_graph_release(&graph);
  vlm_model_config_release(&config);
}

static void decoder_graph_refuses_unknown_activations(void) {
  const char text[] = "{\"model_type\": \"llama\", \"vocab_size\": 10, \"hidden_size\": 64,"
                      " \"intermediate_size\": 64, \"num_hidden_layers\": 1,"
                      " \"num_attention_heads\": 1, \"hidden_act\": \"mish\"}";
  vlm_model_config config;
  CHECK_OK(vlm_model_config_parse(text, sizeof(text) - 1, "config.json", NULL, &config));
  vlm_decoder_description description = {.text = &config.text, .prefix = "model.",
                                         .embedding_scale = 1.0};
  const int32_t row[1] = {0};
  vlm_decoder_step step = {.row_count = 1, .logit_rows = row, .logit_row_count = 1};
  vlm_graph graph;
  vlm_graph_init(&graph);
  CHECK_ERROR(vlm_build_decoder_graph(&description, &step, &graph), VLM_STATUS_UNIMPLEMENTED,
              "activation 'mish' is not supported");
  vlm_graph_release(&graph);
  vlm_model_config_release(&config);
}

TEST_MAIN(TEST(builders_check_shapes_and_name_the_node),
          TEST(decoder_graph_names_nodes_after_transformers_modules),
          TEST(decoder_graph_refuses_unknown_activations))
