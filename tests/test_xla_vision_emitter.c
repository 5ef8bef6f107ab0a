/* The xla backend's image-encoder module, structurally (no IREE needed),
 * for the tiny LLaVA (CLIP tower, feature layer -2, strategy "default",
 * gelu projector with bias): the encode signature (the graph's inputs in
 * graph order; the features and the golden stages out), op counts by kind
 * (each follows from the graph: one encoder layer is built, as layer -2 of
 * two skips the last), the parameter globals by canonical and stored name,
 * no mutable global, and the key derived from the graph.
 *
 * Set VLM_DUMP_XLA_VISION=FILE to write the emitted module (for compiling
 * it by hand with iree-compile). */
#include <stdlib.h>
#include <string.h>

#include "backends/xla/stablehlo_emitter.h"
#include "backends/xla/stablehlo_encoder.h"
#include "backends/xla/xla_key.h"
#include "test.h"
#include "test_xla_model.h"

#define MODEL VLM_SOURCE_DIR "/tests/models/llava"

static vlm_model *open_model(const char *dir) {
  vlm_model *model = NULL;
  CHECK_OK(vlm_model_open(dir, NULL, &model));
  return model;
}

static char *emit(vlm_xla_key *key) {
  vlm_model *model = open_model(MODEL);
  if (!model) return NULL;
  vlm_xla_encoder_function function;
  char *module = NULL;
  CHECK_OK(vlm_xla_encoder_function_build(model, 576, &function));
  vlm_xla_key local;
  if (!TEST_CURRENT_FAILED()) CHECK_OK(vlm_stablehlo_emit_encoder(model, &function, &module, key ? key : &local));
  vlm_xla_encoder_function_release(&function);
  vlm_model_release(model);
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

static void encode_signature_has_the_graph_inputs_and_stages(void) {
  char *module = emit(NULL);
  if (!module) return;
  /* 336 / 14 = 24, 24 * 24 = 576 patches of 3 * 14 * 14 = 588 values,
   * then the class-token order, position ids and segments of the 577
   * sequence rows; out: the projected features (576 x text hidden 128),
   * and the stages: the hidden state (577 x 64) and the selected features
   * (576 x 64). */
  CHECK(strstr(module, "func.func @encode(%input0: tensor<576x588xf32>, %input1: tensor<577xi32>, "
                       "%input2: tensor<577xi32>, %input3: tensor<577xi32>) -> "
                       "(tensor<576x128xf32>, tensor<577x64xf32>, tensor<576x64xf32>) {"));
  CHECK(strstr(module, "func.func @compatibility() -> tensor<4xi32> {"));
  CHECK_INT_EQ(count(module, "func.func @"), 2);
  CHECK(strstr(module, "module @vlm_media_encoder attributes {"));
  free(module);
}

static void op_counts_follow_the_graph(void) {
  char *module = emit(NULL);
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

static void weights_are_laid_out_by_the_runtime(void) {
  char *module = emit(NULL);
  if (!module) return;
  /* Every weight is a buffer the runtime lays out once per encoder, shared
   * by its buckets (xla_layout.h), by canonical name, linears too as
   * stored ([out, in], unlike the text decoder's "#t": many rows per call).
   * Nothing is read from the files by IREE (which copies unaligned
   * parameters per module). */
  /* 3 embedding tensors, pre_layrnorm (2), 16 per layer, projector 4. */
  CHECK_INT_EQ(count(module, "#stream.parameter.named<\"vlm.layout\"::"), 3 + 2 + 16 + 4);
  CHECK_INT_EQ(count(module, "#stream.parameter.named<\"model\"::"), 0);
  CHECK_INT_EQ(count(module, "#t\"> : "), 0);
  CHECK(strstr(module, "util.global private @\"model.vision_tower.encoder.layers.0.mlp.fc1.weight\" = "
                       "#stream.parameter.named<\"vlm.layout\"::\"model.vision_tower.encoder.layers.0.mlp.fc1.weight\"> "
                       ": tensor<128x64xf32>"));
  CHECK(strstr(module, "util.global private @\"model.vision_tower.embeddings.patch_embedding.weight\" = "
                       "#stream.parameter.named<\"vlm.layout\"::\"model.vision_tower.embeddings.patch_embedding.weight\"> "
                       ": tensor<64x3x14x14xf32>"));
  CHECK(strstr(module, "\"vlm.layout\"::\"model.multi_modal_projector.linear_2.bias\"> : tensor<128xf32>"));
  /* The skipped last layer and the text decoder are never referenced. */
  CHECK(!strstr(module, "encoder.layers.1."));
  CHECK(!strstr(module, "post_layernorm"));
  CHECK(!strstr(module, "language_model"));
  CHECK(!strstr(module, "embed_tokens"));
  free(module);
}

static void the_key_comes_from_the_graph(void) {
  vlm_xla_key key;
  char *module = emit(&key);
  if (!module) return;
  CHECK_STR_EQ(vlm_xla_key_get(&key, "module"), "media_encoder");
  CHECK_STR_EQ(vlm_xla_key_get(&key, "kind"), "image");
  CHECK_STR_EQ(vlm_xla_key_get(&key, "model_type"), "llava");
  CHECK_STR_EQ(vlm_xla_key_get(&key, "encoder_rows"), "576");
  CHECK_STR_EQ(vlm_xla_key_get(&key, "dtype"), "compute=f32,weights=f32");
  CHECK(vlm_xla_key_get(&key, "functions") && strncmp(vlm_xla_key_get(&key, "functions"), "encode:", 7) == 0);
  CHECK(vlm_xla_key_get(&key, "capacity") == NULL); /* no text geometry in the encoder key */
  char hash[17], attribute[64];
  vlm_xla_key_hash_hex(&key, hash);
  snprintf(attribute, sizeof(attribute), "vlm.compatibility_key_hash = \"%s\"", hash);
  CHECK(strstr(module, attribute));
  free(module);

  /* A graph that differs (one more feature layer would, here: another
   * epsilon) gives another key: the listing is hashed, not config fields. */
  vlm_model *model = open_model(MODEL);
  vlm_xla_encoder_function function;
  if (model) CHECK_OK(vlm_xla_encoder_function_build(model, 576, &function));
  if (model && !TEST_CURRENT_FAILED()) {
    for (int32_t i = 0; i < function.graph.count; i++)
      if (function.graph.nodes[i].op == VLM_OP_LAYER_NORM) function.graph.nodes[i].params.norm.epsilon *= 2;
    vlm_xla_key other;
    char *changed = NULL;
    CHECK_OK(vlm_stablehlo_emit_encoder(model, &function, &changed, &other));
    CHECK(vlm_xla_key_hash(&key) != vlm_xla_key_hash(&other));
    free(changed);
    vlm_xla_encoder_function_release(&function);
  }

  /* The text module of the same checkpoint has another key (and directory). */
  vlm_xla_text_decoder text;
  CHECK_OK(open_xla_model(MODEL, &text));
  vlm_stablehlo_options geometry = {.slot_count = 1, .capacity = 16, .prefill_chunk = 8};
  vlm_xla_key text_key;
  CHECK_OK(vlm_stablehlo_emit_text_decoder(&text, &geometry, &module, &text_key));
  free(module);
  CHECK_STR_EQ(vlm_xla_key_get(&text_key, "module"), "text_decoder");
  CHECK(vlm_xla_key_hash(&text_key) != vlm_xla_key_hash(&key));
  vlm_xla_text_decoder_release(&text);
  vlm_model_release(model);
}

static void text_only_models_are_refused(void) {
  vlm_model *model = open_model(VLM_SOURCE_DIR "/tests/models/llama");
  if (!model) return;
  vlm_xla_encoder_function function;
  CHECK_ERROR(vlm_xla_encoder_function_build(model, 576, &function), VLM_STATUS_UNIMPLEMENTED, "has no image path");
  vlm_xla_encoder_function_release(&function);
  vlm_model_release(model);
}

TEST_MAIN(TEST(encode_signature_has_the_graph_inputs_and_stages), TEST(op_counts_follow_the_graph),
          TEST(weights_are_laid_out_by_the_runtime), TEST(the_key_comes_from_the_graph),
          TEST(text_only_models_are_refused))
