/* The decoder side of the family seam (issue 28): a family's own decoder
 * (vlm_family.build_decoder) written on the public blocks of blocks.h is
 * what every backend builds, and a loop written on those blocks equals the
 * described one node for node (so the blocks are all a Llama-style family
 * needs). The numerics of the described loop are guarded bit for bit by
 * test_decoder_digests; the blocks' ops by test_graph_ops (feature merge
 * in both modes, on cpu and xla). */
#include <string.h>

#include "core/status.h"
#include "models/blocks.h"
#include "models/decoder.h"
#include "models/model.h"
#include "test.h"

static int builder_calls;

/* What a family file writes: LlamaForCausalLM's forward on the blocks. */
static vlm_status llama_written_on_blocks(const vlm_decoder_description *description, const vlm_decoder_step *step,
                                          vlm_graph *graph) {
  builder_calls++;
  vlm_decoder_blocks blocks;
  VLM_RETURN_IF_ERROR(vlm_decoder_blocks_begin(description, step, graph, &blocks));
  int32_t hidden = vlm_block_embed_tokens(&blocks);
  vlm_decoder_blocks_lora_inputs(&blocks);
  for (int32_t layer = 0; layer < description->text->num_hidden_layers; layer++)
    hidden = vlm_block_llama_decoder_layer(&blocks, hidden, layer);
  VLM_RETURN_IF_ERROR(vlm_decoder_blocks_check_adapters(&blocks));
  return vlm_block_causal_lm_head(&blocks, hidden);
}

static bool same_graphs(const vlm_graph *a, const vlm_graph *b) {
  if (a->count != b->count || a->output != b->output || a->rope_count != b->rope_count) return false;
  for (int32_t i = 0; i < a->count; i++) {
    const vlm_node *x = &a->nodes[i], *y = &b->nodes[i];
    if (x->op != y->op || strcmp(x->name, y->name) != 0 || x->rank != y->rank || x->input_count != y->input_count ||
        memcmp(x->shape, y->shape, sizeof(x->shape)) != 0 || memcmp(x->inputs, y->inputs, sizeof(x->inputs)) != 0) {
      fprintf(stderr, "node %d differs: %s (%s) vs %s (%s)\n", i, x->name, vlm_op_name(x->op), y->name,
              vlm_op_name(y->op));
      return false;
    }
  }
  return true;
}

static void a_family_builder_is_what_backends_build(void) {
  char dir[512];
  snprintf(dir, sizeof(dir), "%s/tests/models/llama", VLM_SOURCE_DIR);
  vlm_model *model = NULL;
  vlm_model_options options = {0};
  CHECK_OK(vlm_model_open(dir, &options, &model));
  if (!model) return;
  /* The family as a family file would declare it, with its own builder. */
  vlm_family family = *model->family;
  CHECK(family.build_decoder == NULL); /* Llama keeps the described loop */
  family.build_decoder = llama_written_on_blocks;
  vlm_decoder_description described, own;
  vlm_family_describe_decoder(model->family, &model->config, &described);
  vlm_family_describe_decoder(&family, &model->config, &own);
  CHECK(described.build == NULL);
  CHECK(own.build == llama_written_on_blocks);
  const int32_t logit_rows[] = {4};
  vlm_decoder_step steps[] = {
      {.row_count = 5, .logit_rows = logit_rows, .logit_row_count = 1},
      {.row_count = 5, .with_features = true, .logit_rows = logit_rows, .logit_row_count = 1},
      {.row_count = 5}, /* a chunk whose logits nobody reads */
  };
  for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
    vlm_graph a, b;
    vlm_graph_init(&a);
    vlm_graph_init(&b);
    builder_calls = 0;
    CHECK_OK(vlm_build_decoder_graph(&described, &steps[s], &a));
    CHECK_INT_EQ(builder_calls, 0);
    CHECK_OK(vlm_build_decoder_graph(&own, &steps[s], &b));
    CHECK_INT_EQ(builder_calls, 1);
    CHECK(a.count > 20);
    CHECK(same_graphs(&a, &b));
    vlm_graph_release(&a);
    vlm_graph_release(&b);
  }
  /* The add merge changes the embedding step only: one node more, and the
   * merged node is named as the goldens' input_embeddings. */
  vlm_decoder_description adding = described;
  adding.merge = VLM_FEATURE_MERGE_ADD;
  vlm_graph replace, add;
  vlm_graph_init(&replace);
  vlm_graph_init(&add);
  CHECK_OK(vlm_build_decoder_graph(&described, &steps[1], &replace));
  CHECK_OK(vlm_build_decoder_graph(&adding, &steps[1], &add));
  CHECK_INT_EQ(add.count, replace.count + 1);
  CHECK(vlm_graph_find(&add, "model.embed_tokens_plus_features") >= 0);
  CHECK(vlm_graph_find(&add, "model.embed_tokens_merged") >= 0);
  CHECK(vlm_graph_find(&replace, "model.embed_tokens_plus_features") < 0);
  vlm_graph_release(&replace);
  vlm_graph_release(&add);
  /* An unknown merge mode is refused, not treated as one of the two. */
  adding.merge = (vlm_feature_merge)7;
  vlm_graph bad;
  vlm_graph_init(&bad);
  CHECK_ERROR(vlm_build_decoder_graph(&adding, &steps[1], &bad), VLM_STATUS_INTERNAL, "unknown feature merge mode");
  vlm_graph_release(&bad);
  vlm_model_release(model);
}

TEST_MAIN(TEST(a_family_builder_is_what_backends_build))
