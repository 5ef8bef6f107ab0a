/* The xla backend's vision module, structurally (no IREE needed), for the
 * tiny LLaVA (CLIP tower, feature layer -2, strategy "default", gelu
 * projector with bias): the encode signature, op counts by kind (each
 * follows from the graph: one encoder layer is built, as layer -2 of two
 * skips the last), the parameter globals by canonical and stored name, no
 * mutable global, and the module attributes with the compatibility key.
 *
 * Set VLM_DUMP_XLA_VISION=FILE to write the emitted module (for compiling
 * it by hand with iree-compile). */
#include <stdlib.h>
#include <string.h>

#include "backends/xla/stablehlo_emitter.h"
#include "backends/xla/stablehlo_vision.h"
#include "backends/xla/xla_key.h"
#include "test.h"

static char *emit(const vlm_stablehlo_vision_options *options, vlm_xla_key *key) {
  char dir[512];
  snprintf(dir, sizeof(dir), "%s/tests/models/llava", VLM_SOURCE_DIR);
  vlm_xla_vision_encoder model;
  char *module = NULL;
  CHECK_OK(vlm_xla_vision_encoder_open(dir, &model));
  if (TEST_CURRENT_FAILED()) return NULL;
  CHECK_OK(vlm_stablehlo_emit_vision_encoder(&model, options, &module, key));
  vlm_xla_vision_encoder_release(&model);
  const char *dump = getenv("VLM_DUMP_XLA_VISION");
  if (module && dump && *dump) {
    FILE *file = fopen(dump, "w");
    if (file) {
      fputs(module, file);
      fclose(file);
    }
  }
  return module;
}

static int count(const char *text, const char *pattern) {
  int found = 0;
  for (const char *at = text; (at = strstr(at, pattern)) != NULL; at += strlen(pattern)) found++;
  return found;
}

static int count_op(const char *module, const char *op) {
  char pattern[64];
  snprintf(pattern, sizeof(pattern), "\"stablehlo.%s\"(", op);
  return count(module, pattern);
}

static void encode_signature_has_patches_and_two_results(void) {
  char *module = emit(NULL, NULL);
  if (!module) return;
  /* 336 / 14 = 24, 24 * 24 = 576 patches of 3 * 14 * 14 = 588 values; the
   * class token is dropped, so 576 rows of 128 (text hidden) and 64. */
  /* The graph's inputs in graph order: patches, the class-token order, the
   * position ids and the attention segments (577 sequence rows). */
  CHECK(strstr(module, "func.func @encode(%input0: tensor<576x588xf32>, %input1: tensor<577xi32>, "
                       "%input2: tensor<577xi32>, %input3: tensor<577xi32>) -> "
                       "(tensor<576x128xf32>, tensor<576x64xf32>) {"));
  CHECK(strstr(module, "func.func @compatibility() -> tensor<4xi32> {"));
  CHECK_INT_EQ(count(module, "func.func @"), 2);
  CHECK(strstr(module, "module @vlm_vision_encoder attributes {"));
  free(module);

  vlm_stablehlo_vision_options two = {.images_per_call = 2};
  module = emit(&two, NULL);
  if (!module) return;
  CHECK(strstr(module, "func.func @encode(%input0: tensor<1152x588xf32>, %input1: tensor<1154xi32>, "
                       "%input2: tensor<1154xi32>, %input3: tensor<1154xi32>) -> "
                       "(tensor<1152x128xf32>, tensor<1152x64xf32>) {"));
  /* Both images' 2 x 577 rows in one attention, masked by segment. */
  CHECK(strstr(module, "tensor<1x1154x1154xf32>"));
  free(module);
}

static void op_counts_follow_the_graph(void) {
  char *module = emit(NULL, NULL);
  if (!module) return;
  const int layers = 1; /* feature layer -2 of 2: the last layer is not built */
  /* Patch embedding; q, k, v, out, fc1, fc2 and the two attention products
   * per layer; the projector's two linears. */
  CHECK_INT_EQ(count_op(module, "dot_general"), 1 + layers * 8 + 2);
  /* layer_norm: pre_layrnorm and two per layer, each two reductions and one
   * rsqrt; softmax: two reductions per layer. */
  CHECK_INT_EQ(count_op(module, "rsqrt"), 1 + layers * 2);
  CHECK_INT_EQ(count_op(module, "reduce"), 2 * (1 + layers * 2) + 2 * layers);
  CHECK_INT_EQ(count_op(module, "logistic"), layers);     /* quick_gelu in the tower */
  CHECK_INT_EQ(count(module, "\"chlo.erf\"("), 1);         /* erf gelu in the projector */
  CHECK_INT_EQ(count_op(module, "concatenate"), 1);       /* the class token row joined with the patches */
  CHECK_INT_EQ(count_op(module, "slice"), 1);             /* dropping it again ("default") */
  CHECK_INT_EQ(count_op(module, "transpose"), layers);
  CHECK_INT_EQ(count_op(module, "gather"), 2);            /* class token order, position embeddings */
  CHECK_INT_EQ(count(module, "util.global.store"), 0);
  CHECK_INT_EQ(count(module, "mutable"), 0);
  free(module);
}

static void weights_are_parameters_by_stored_name(void) {
  char *module = emit(NULL, NULL);
  if (!module) return;
  /* 3 embedding tensors, pre_layrnorm (2), 16 per layer, projector 4. */
  CHECK_INT_EQ(count(module, "#stream.parameter.named<\"model\"::"), 3 + 2 + 16 + 4);
  /* The canonical name for the global, the checkpoint's stored name for the parameter. */
  CHECK(strstr(module, "util.global private @\"model.vision_tower.encoder.layers.0.self_attn.q_proj.weight\" = "
                       "#stream.parameter.named<\"model\"::\"vision_tower.encoder.layers.0.self_attn.q_proj.weight\"> "
                       ": tensor<64x64xf32>"));
  CHECK(strstr(module, "util.global private @\"model.vision_tower.embeddings.patch_embedding.weight\" = "
                       "#stream.parameter.named<\"model\"::\"vision_tower.embeddings.patch_embedding.weight\"> "
                       ": tensor<64x3x14x14xf32>"));
  CHECK(strstr(module, "#stream.parameter.named<\"model\"::\"multi_modal_projector.linear_2.bias\"> : tensor<128xf32>"));
  /* The skipped last layer and the text decoder are never referenced. */
  CHECK(!strstr(module, "encoder.layers.1."));
  CHECK(!strstr(module, "post_layernorm"));
  CHECK(!strstr(module, "language_model"));
  CHECK(!strstr(module, "embed_tokens"));
  free(module);
}

static void attributes_carry_the_vision_key(void) {
  vlm_xla_key key;
  char *module = emit(NULL, &key);
  if (!module) return;
  CHECK_STR_EQ(vlm_xla_key_get(&key, "module"), "vision_encoder");
  CHECK_STR_EQ(vlm_xla_key_get(&key, "model_type"), "llava");
  CHECK_STR_EQ(vlm_xla_key_get(&key, "contract_version"), "1");
  CHECK_STR_EQ(vlm_xla_key_get(&key, "emitter_version"), "2");
  CHECK_STR_EQ(vlm_xla_key_get(&key, "image_size"), "3x336x336");
  CHECK_STR_EQ(vlm_xla_key_get(&key, "patch_size"), "14");
  CHECK_STR_EQ(vlm_xla_key_get(&key, "feature_layers"), "1"); /* -2 of hidden_states[0..2] */
  CHECK_STR_EQ(vlm_xla_key_get(&key, "select_strategy"), "default");
  CHECK_STR_EQ(vlm_xla_key_get(&key, "images_per_call"), "1");
  CHECK_STR_EQ(vlm_xla_key_get(&key, "dtype"), "compute=f32,weights=f32");
  CHECK_STR_EQ(vlm_xla_key_get(&key, "outputs"), "projected=f32[576,128],features=f32[576,64]");
  CHECK(vlm_xla_key_get(&key, "capacity") == NULL); /* no text geometry in the vision key */
  char hash[17], attribute[64];
  vlm_xla_key_hash_hex(&key, hash);
  snprintf(attribute, sizeof(attribute), "vlm.compatibility_key_hash = \"%s\"", hash);
  CHECK(strstr(module, attribute));
  CHECK(strstr(module, "vlm.contract_version = 1 : i32, vlm.emitter_version = 2 : i32"));
  CHECK(strstr(module, "module = \"vision_encoder\""));
  CHECK(strstr(module, "images_per_call = \"1\""));
  free(module);

  /* Images per call is part of the key, so each geometry has its own artifact. */
  vlm_xla_key other;
  vlm_stablehlo_vision_options two = {.images_per_call = 2};
  module = emit(&two, &other);
  if (!module) return;
  CHECK_STR_EQ(vlm_xla_key_get(&other, "images_per_call"), "2");
  CHECK(vlm_xla_key_hash(&key) != vlm_xla_key_hash(&other));
  free(module);

  /* The text module of the same checkpoint has another key (and directory). */
  char dir[512];
  snprintf(dir, sizeof(dir), "%s/tests/models/llava", VLM_SOURCE_DIR);
  vlm_xla_text_decoder text;
  CHECK_OK(vlm_xla_text_decoder_open(dir, &text));
  vlm_stablehlo_options geometry = {.slot_count = 1, .capacity = 16, .prefill_chunk = 8};
  vlm_xla_key text_key;
  CHECK_OK(vlm_stablehlo_emit_text_decoder(&text, &geometry, &module, &text_key));
  free(module);
  CHECK_STR_EQ(vlm_xla_key_get(&text_key, "module"), "text_decoder");
  CHECK(vlm_xla_key_hash(&text_key) != vlm_xla_key_hash(&key));
  vlm_xla_text_decoder_release(&text);
}

static void bad_options_and_text_only_models_are_refused(void) {
  char dir[512];
  snprintf(dir, sizeof(dir), "%s/tests/models/llava", VLM_SOURCE_DIR);
  vlm_xla_vision_encoder model;
  CHECK_OK(vlm_xla_vision_encoder_open(dir, &model));
  char *module = NULL;
  vlm_stablehlo_vision_options bad = {.images_per_call = -1};
  CHECK_ERROR(vlm_stablehlo_emit_vision_encoder(&model, &bad, &module, NULL), VLM_STATUS_INVALID_ARGUMENT,
              "images per call");
  CHECK(module == NULL);
  vlm_xla_vision_encoder_release(&model);

  snprintf(dir, sizeof(dir), "%s/tests/models/llama", VLM_SOURCE_DIR);
  CHECK_ERROR(vlm_xla_vision_encoder_open(dir, &model), VLM_STATUS_UNIMPLEMENTED, "has no vision path");
}

TEST_MAIN(TEST(encode_signature_has_patches_and_two_results), TEST(op_counts_follow_the_graph),
          TEST(weights_are_parameters_by_stored_name), TEST(attributes_carry_the_vision_key),
          TEST(bad_options_and_text_only_models_are_refused))
