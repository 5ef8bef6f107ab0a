/* The xla backend's StableHLO emitter, structurally (no IREE needed): the
 * tiny Llama and Qwen2 modules' function signatures, op counts by kind,
 * cache and parameter globals, module attributes and compatibility key, a
 * refused op, and a checked-in golden module.
 *
 * The golden (tests/goldens/xla/tiny_llama.mlir) is compared after
 * normalising (comment lines and trailing blanks dropped). After an
 * intended emitter change, regenerate it and review the diff:
 *   VLM_UPDATE_XLA_GOLDENS=1 build-xla/tests/test_xla_emitter */
#include <stdlib.h>
#include <string.h>

#include "backends/xla/stablehlo_emitter.h"
#include "backends/xla/xla_key.h"
#include "backends/xla/xla_layout.h"
#include "backends/cpu/text_model.h" /* VLM_TEXT_CONTRACT_VERSION */
#include "test.h"
#include "test_xla_model.h"

#define GOLDEN_PATH VLM_SOURCE_DIR "/tests/goldens/xla/tiny_llama.mlir"

static char *emit(const char *family, const vlm_stablehlo_options *options, vlm_xla_key *key) {
  char dir[512];
  snprintf(dir, sizeof(dir), "%s/tests/models/%s", VLM_SOURCE_DIR, family);
  vlm_xla_text_decoder model;
  char *module = NULL;
  CHECK_OK(open_xla_model(dir, &model));
  if (TEST_CURRENT_FAILED()) return NULL;
  CHECK_OK(vlm_stablehlo_emit_text_decoder(&model, options, &module, key));
  vlm_xla_text_decoder_release(&model);
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

/* Decode windows 8, 16 and 32 (decode_8, decode_16, decode); prefill row
 * buckets 4 and 8 (token_prefill_4, token_prefill, and the same for
 * embeddings_prefill). */
static const vlm_stablehlo_options small = {.slot_count = 2, .capacity = 32, .prefill_chunk = 8, .decode_window = 8,
                                            .prefill_bucket = 4};

static void signatures_are_the_module_contracts(void) {
  char *module = emit("llama", &small, NULL);
  if (!module) return;
  CHECK(strstr(module, "func.func @token_prefill(%tokens: tensor<8xi32>, %valid_rows: tensor<i32>, "
                       "%slot: tensor<i32>, %start: tensor<i32>) -> tensor<1x512xf32> {"));
  CHECK(strstr(module, "func.func @embeddings_prefill(%tokens: tensor<8xi32>, %features: tensor<8x128xf32>, "
                       "%feature_mask: tensor<8xi32>, %positions: tensor<1x8xi32>, %bias: tensor<8x32xf32>, "
                       "%valid_rows: tensor<i32>, %slot: tensor<i32>, %start: tensor<i32>) -> tensor<1x512xf32> {"));
  CHECK(strstr(module, "func.func @decode(%tokens: tensor<2xi32>, %cache_index: tensor<2xi32>, "
                       "%positions: tensor<2xi32>, %active: tensor<2xi32>) -> tensor<2x512xf32> {"));
  CHECK(strstr(module, "func.func @token_prefill_4(%tokens: tensor<4xi32>, %valid_rows: tensor<i32>, "
                       "%slot: tensor<i32>, %start: tensor<i32>) -> tensor<1x512xf32> {"));
  CHECK(strstr(module, "func.func @embeddings_prefill_4(%tokens: tensor<4xi32>, %features: tensor<4x128xf32>, "
                       "%feature_mask: tensor<4xi32>, %positions: tensor<1x4xi32>, %bias: tensor<4x32xf32>, "
                       "%valid_rows: tensor<i32>, %slot: tensor<i32>, %start: tensor<i32>) -> tensor<1x512xf32> {"));
  CHECK(strstr(module, "func.func @decode_8(%tokens: tensor<2xi32>, %cache_index: tensor<2xi32>, "
                       "%positions: tensor<2xi32>, %active: tensor<2xi32>) -> tensor<2x512xf32> {"));
  CHECK(strstr(module, "func.func @decode_16(%tokens: tensor<2xi32>, %cache_index: tensor<2xi32>, "
                       "%positions: tensor<2xi32>, %active: tensor<2xi32>) -> tensor<2x512xf32> {"));
  CHECK(strstr(module, "func.func @read_kv(%slot: tensor<i32>) -> tensor<2x2x32x1x64xf32> {"));
  CHECK(strstr(module, "func.func @clear_slot(%slot: tensor<i32>) {"));
  CHECK(strstr(module, "func.func @compatibility() -> tensor<4xi32> {"));
  CHECK_INT_EQ(count(module, "func.func @"), 10);
  free(module);
}

/* Two layers; two prefills in two row buckets and three decode windows: every count follows
 * from the decoder's structure, so a change in lowering shows up here by kind. */
static void op_counts_follow_the_graph(void) {
  char *module = emit("llama", &small, NULL);
  if (!module) return;
  const int layers = 2, prefills = 2 * 2, decodes = 3, functions = prefills + decodes, slots = 2;
  /* 7 projections + 2 attention products per layer, and the LM head. */
  CHECK_INT_EQ(count_op(module, "dot_general"), functions * (layers * 9 + 1));
  CHECK_INT_EQ(count_op(module, "gather"), prefills + decodes); /* every function embeds its tokens */
  /* rms_norm: 2 per layer + final; softmax: 1 per layer; each one "add"/"maximum" reduce. */
  CHECK_INT_EQ(count_op(module, "reduce"), functions * (layers * 2 + 1) + functions * layers * 2);
  CHECK_INT_EQ(count_op(module, "rsqrt"), functions * (layers * 2 + 1));
  CHECK_INT_EQ(count_op(module, "cosine"), functions); /* one RoPE table per function */
  CHECK_INT_EQ(count_op(module, "sine"), functions);
  /* All layers' new K/V in one write per prefill and one per slot per
   * decode, after the last layer; clear_slot once. */
  CHECK_INT_EQ(count_op(module, "dynamic_update_slice"), prefills + decodes * slots + 1);
  /* The prefills' last valid row for the LM head. */
  CHECK(strstr(module, "-> tensor<1x128xf32>") != NULL);
  /* The cache global is stored once per function that writes it. */
  CHECK_INT_EQ(count(module, "util.global.store"), functions + 1);
  CHECK_INT_EQ(count_op(module, "convert"), functions); /* positions to f32; f32 weights need none */
  CHECK_INT_EQ(count_op(module, "transpose"), prefills * layers); /* prefill attention output */
  CHECK_INT_EQ(count_op(module, "logistic"), 0);           /* silu is x / (1 + exp(-x)) */
  free(module);
}

static void globals_are_parameters_and_a_device_cache(void) {
  char *module = emit("llama", &small, NULL);
  if (!module) return;
  /* Every weight is a buffer the runtime lays out (xla_layout.h, scope
   * vlm.layout): linear weights transposed, [in, out] ("#t"), the rest as
   * stored. IREE reads nothing from the checkpoint's files, so it neither
   * hoists a transposed copy nor copies an unaligned tensor next to its
   * mapped pages. */
  CHECK(strstr(module, "util.global private @\"model.layers.1.self_attn.q_proj.weight#t\" = "
                       "#stream.parameter.named<\"vlm.layout\"::\"model.layers.1.self_attn.q_proj.weight#t\"> : "
                       "tensor<128x128xf32>"));
  CHECK(!strstr(module, "\"model\"::"));
  CHECK(!strstr(module, "q_proj.weight\">"));
  CHECK(strstr(module, "\"vlm.layout\"::\"model.layers.0.mlp.down_proj.weight#t\"> : tensor<256x128xf32>"));
  CHECK(strstr(module, "#stream.parameter.named<\"vlm.layout\"::\"lm_head.weight#t\"> : tensor<128x512xf32>"));
  CHECK(strstr(module, "#stream.parameter.named<\"vlm.layout\"::\"model.embed_tokens.weight\"> : tensor<512x128xf32>"));
  CHECK(strstr(module, "#stream.parameter.named<\"vlm.layout\"::\"model.norm.weight\"> : tensor<128xf32>"));
  /* 2 layers x 9 tensors + embeddings, final norm, LM head. */
  CHECK_INT_EQ(count(module, "#stream.parameter.named<\"vlm.layout\""), 2 * 9 + 3);
  CHECK_INT_EQ(count(module, "#t\"> : "), 2 * 7 + 1);
  /* [layers, keys|values, slots, capacity + prefill chunk, kv heads, head dim] */
  CHECK(strstr(module, "util.global private mutable @kv_cache = dense<0.0> : tensor<2x2x2x40x1x64xf32>"));
  CHECK_INT_EQ(count(module, "util.global private mutable"), 1);
  CHECK(!strstr(module, "dense<0.0> : tensor<512x128")); /* no weight is inlined */
  free(module);
}

static void qwen2_has_biases_and_ties_the_head(void) {
  char *module = emit("qwen2", &small, NULL);
  if (!module) return;
  CHECK(strstr(module, "\"vlm.layout\"::\"model.layers.0.self_attn.q_proj.bias\"> : tensor<128xf32>"));
  CHECK(strstr(module, "\"vlm.layout\"::\"model.layers.1.self_attn.v_proj.bias\"> : tensor<64xf32>"));
  CHECK(!strstr(module, "lm_head.weight"));
  /* The tied table once, transposed: the head reads it, the embedding
   * gathers its columns. */
  CHECK(strstr(module, "\"vlm.layout\"::\"model.embed_tokens.weight#t\"> : tensor<128x512xf32>"));
  CHECK(!strstr(module, "model.embed_tokens.weight\">"));
  CHECK(strstr(module, "collapsed_slice_dims = [1], start_index_map = [1]"));
  CHECK_INT_EQ(count(module, "#stream.parameter.named<"), 2 * 12 + 2);
  /* The RoPE theta is baked in: 1e6 gives a different second frequency than Llama's 1e4. */
  CHECK(strstr(module, "dense<[1.000000000e+00, "));
  free(module);
}

static void attributes_carry_the_compatibility_key(void) {
  vlm_xla_key key;
  char *module = emit("llama", &small, &key);
  if (!module) return;
  char hash[17], expected[64];
  vlm_xla_key_hash_hex(&key, hash);
  snprintf(expected, sizeof(expected), "vlm.compatibility_key_hash = \"%s\"", hash);
  CHECK(strstr(module, expected));
  CHECK(strstr(module, "vlm.contract_version = 1 : i32"));
  snprintf(expected, sizeof(expected), "vlm.emitter_version = %d : i32", VLM_XLA_EMITTER_VERSION);
  CHECK(strstr(module, expected));
  CHECK(strstr(module, "capacity = \"32\""));
  CHECK(strstr(module, "slots = \"2\""));
  CHECK(strstr(module, "prefill_chunk = \"8\""));
  CHECK_STR_EQ(vlm_xla_key_get(&key, "capacity"), "32");
  CHECK_STR_EQ(vlm_xla_key_get(&key, "model_type"), "llama");
  CHECK_STR_EQ(vlm_xla_key_get(&key, "dtype"), "compute=f32,weights=f32");
  CHECK_STR_EQ(vlm_xla_key_get(&key, "position_mode"), "rope-1d");
  CHECK(vlm_xla_key_get(&key, "graphs") && vlm_xla_key_get(&key, "kv_layout"));
  CHECK(vlm_xla_key_get(&key, "config_hash") == NULL); /* derived from the graphs, not kept by hand */
  /* The hash is also compiled into @compatibility. */
  uint64_t value = vlm_xla_key_hash(&key);
  snprintf(expected, sizeof(expected), "dense<[%d, %d, %d, %d]>", VLM_TEXT_CONTRACT_VERSION,
           VLM_XLA_EMITTER_VERSION, (int32_t)(uint32_t)value,
           (int32_t)(uint32_t)(value >> 32));
  CHECK(strstr(module, expected));
  free(module);

  /* Another capacity, another key; another family, other graphs. */
  vlm_stablehlo_options larger = small;
  larger.capacity = 64;
  vlm_xla_key other;
  free(emit("llama", &larger, &other));
  CHECK_ERROR(vlm_xla_key_check(&other, &key, "artifact"), VLM_STATUS_FAILED_PRECONDITION,
              "compiled for capacity='32', this model and configuration need capacity='64'");
  free(emit("qwen2", &small, &other));
  CHECK(strcmp(vlm_xla_key_get(&other, "graphs"), vlm_xla_key_get(&key, "graphs")) != 0);
  CHECK_OK(vlm_xla_key_check(&key, &key, "artifact"));
}

static void key_round_trips_through_the_sidecar(void) {
  vlm_xla_key key;
  free(emit("llama", &small, &key));
  CHECK_OK(vlm_xla_key_set(&key, "target", "llvm-cpu"));
  char path[600];
  snprintf(path, sizeof(path), "%s/key.json", test_temp_dir());
  CHECK_OK(vlm_xla_key_write_json(&key, "module.vmfb", path));
  vlm_xla_key read;
  CHECK_OK(vlm_xla_key_read_json(path, &read));
  CHECK_OK(vlm_xla_key_check(&key, &read, path));
  CHECK_INT_EQ(vlm_xla_key_hash(&read), vlm_xla_key_hash(&key));
  /* A hand-edited field no longer matches the stored hash. */
  char *text = NULL;
  FILE *file = fopen(path, "rb");
  if (file) {
    text = calloc(1, 1 << 16);
    size_t length = fread(text, 1, (1 << 16) - 1, file);
    fclose(file);
    char *at = strstr(text, "\"capacity\": \"32\"");
    CHECK(at != NULL);
    if (at) at[strlen("\"capacity\": \"3")] = '9';
    free(test_write_file(test_temp_dir(), "key.json", text, length));
  }
  CHECK_ERROR(vlm_xla_key_read_json(path, &read), VLM_STATUS_DATA_LOSS, "key_hash does not match");
  free(text);
}

static void unsupported_ops_are_refused_by_name(void) {
  vlm_graph graph;
  vlm_graph_init(&graph);
  /* Sliding-window and soft-capped attention (Gemma, Mistral) and M-RoPE
   * lower; RoPE whose frequencies depend on the sequence length does not. */
  int32_t x = vlm_graph_input(&graph, VLM_DTYPE_F32, 3, (const int64_t[]){4, 2, 8}, "embeddings");
  graph.output = vlm_graph_attention(&graph, x, x, x, 0, 0.125, 512, 50.0, "layers.0.self_attn");
  CHECK_OK(vlm_graph_take_error(&graph));
  CHECK_OK(vlm_stablehlo_check_graph(&graph));
  graph.nodes[graph.output].params.attention.sliding_window = -1;
  CHECK_ERROR(vlm_stablehlo_check_graph(&graph), VLM_STATUS_INVALID_ARGUMENT,
              "graph node 'layers.0.self_attn': negative sliding window or soft cap");
  graph.nodes[graph.output].params.attention.sliding_window = 512;
  vlm_rope_config dynamic = {.type = VLM_ROPE_DYNAMIC, .theta = 10000.0, .factor = 2.0};
  graph.ropes[0] = &dynamic;
  graph.rope_count = 1;
  graph.output = vlm_graph_rope(&graph, x, 0, "layers.0.self_attn.q_rope");
  CHECK_OK(vlm_graph_take_error(&graph));
  CHECK_ERROR(vlm_stablehlo_check_graph(&graph), VLM_STATUS_UNIMPLEMENTED,
              "graph node 'layers.0.self_attn.q_rope': the dynamic RoPE type is not supported yet");
  vlm_graph_release(&graph);

  char dir[512];
  snprintf(dir, sizeof(dir), "%s/tests/models/llama", VLM_SOURCE_DIR);
  vlm_xla_text_decoder model;
  CHECK_OK(open_xla_model(dir, &model));
  char *module = NULL;
  vlm_stablehlo_options bad = {.slot_count = 1, .capacity = 8, .prefill_chunk = 16};
  CHECK_ERROR(vlm_stablehlo_emit_text_decoder(&model, &bad, &module, NULL), VLM_STATUS_INVALID_ARGUMENT,
              "prefill chunk 16 exceeds the capacity 8");
  CHECK(module == NULL);
  vlm_xla_text_decoder_release(&model);
}

/* Comment lines and trailing blanks do not count. */
static char *normalise(const char *text) {
  char *out = malloc(strlen(text) + 1), *end = out;
  for (const char *line = text; *line;) {
    const char *next = strchr(line, '\n');
    size_t length = next ? (size_t)(next - line) : strlen(line);
    const char *first = line;
    while (first < line + length && *first == ' ') first++;
    bool comment = first + 1 < line + length && first[0] == '/' && first[1] == '/';
    while (length > 0 && (line[length - 1] == ' ' || line[length - 1] == '\r')) length--;
    if (!comment && length > 0) {
      memcpy(end, line, length);
      end += length;
      *end++ = '\n';
    }
    line = next ? next + 1 : line + strlen(line);
  }
  *end = '\0';
  return out;
}

static void module_matches_the_golden(void) {
  char *module = emit("llama", &small, NULL);
  if (!module) return;
  if (getenv("VLM_UPDATE_XLA_GOLDENS")) {
    FILE *file = fopen(GOLDEN_PATH, "w");
    CHECK(file && fputs(module, file) >= 0);
    if (file) fclose(file);
    fprintf(stderr, "  wrote %s\n", GOLDEN_PATH);
  }
  FILE *file = fopen(GOLDEN_PATH, "rb");
  CHECK(file != NULL);
  if (!file) {
    free(module);
    return;
  }
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  char *golden = calloc(1, (size_t)size + 1);
  CHECK(fread(golden, 1, (size_t)size, file) == (size_t)size);
  fclose(file);
  char *expected = normalise(golden), *actual = normalise(module);
  if (strcmp(expected, actual) != 0) {
    size_t at = 0;
    while (expected[at] && expected[at] == actual[at]) at++;
    fprintf(stderr, "  %s differs from the emitted module at byte %zu (normalised): golden \"%.80s\" vs "
                    "emitted \"%.80s\"\n  (regenerate: VLM_UPDATE_XLA_GOLDENS=1 %s)\n",
            GOLDEN_PATH, at, expected + at, actual + at, "test_xla_emitter");
    test_failures++;
  }
  free(expected);
  free(actual);
  free(golden);
  free(module);
}

/* The runtime lays out exactly the transposed parameters the module
 * declares, each the transpose of the stored tensor, in its dtype. */
static void linear_weights_are_laid_out_transposed(void) {
  char dir[512];
  snprintf(dir, sizeof(dir), "%s/tests/models/qwen2", VLM_SOURCE_DIR);
  vlm_xla_text_decoder model;
  char *module = NULL;
  CHECK_OK(open_xla_model(dir, &model));
  if (TEST_CURRENT_FAILED()) return;
  CHECK_OK(vlm_stablehlo_emit_text_decoder(&model, &small, &module, NULL));
  vlm_xla_layout *layout = NULL;
  if (module) CHECK_OK(vlm_xla_layout_create(model.weights, module, &layout));
  if (layout) {
    CHECK_INT_EQ(layout->count, count(module, "#stream.parameter.named<\"vlm.layout\""));
    CHECK_INT_EQ(layout->count, 2 * 12 + 2);
    size_t total = 0;
    int transposed = 0;
    for (int i = 0; i < layout->count; i++) {
      const vlm_xla_layout_tensor *tensor = &layout->tensors[i];
      char name[256];
      snprintf(name, sizeof(name), "%s", tensor->key);
      size_t length = strlen(name);
      bool is_transposed = length > 2 && strcmp(name + length - 2, "#t") == 0;
      if (is_transposed) name[length - 2] = '\0';
      transposed += is_transposed;
      vlm_tensor stored;
      CHECK_OK(vlm_checkpoint_get(model.weights, name, VLM_DTYPE_F32, -1, NULL, &stored));
      if (TEST_CURRENT_FAILED()) break;
      CHECK((uintptr_t)tensor->data % 64 == 0);
      const float *source = stored.data, *laid = tensor->data;
      int64_t wrong = 0;
      if (is_transposed) {
        CHECK_INT_EQ(stored.rank, 2);
        for (int64_t r = 0; r < stored.shape[0]; r++)
          for (int64_t c = 0; c < stored.shape[1]; c++)
            wrong += memcmp(&laid[c * stored.shape[0] + r], &source[r * stored.shape[1] + c], 4) != 0;
      } else {
        wrong = memcmp(laid, source, tensor->bytes) != 0;
      }
      CHECK_INT_EQ(wrong, 0);
      total += tensor->bytes;
    }
    CHECK_INT_EQ(transposed, 2 * 7 + 1);
    CHECK_INT_EQ((long long)layout->bytes, (long long)total);
  }
  vlm_xla_layout_release(layout);
  free(module);
  vlm_xla_text_decoder_release(&model);
  /* 2-byte elements (bf16/f16 weights), sizes that are no multiple of the tile. */
  enum { ROWS = 37, COLUMNS = 70 };
  uint16_t source[ROWS * COLUMNS], laid[ROWS * COLUMNS];
  for (int i = 0; i < ROWS * COLUMNS; i++) source[i] = (uint16_t)(i * 7 + 1);
  vlm_xla_transpose(source, laid, ROWS, COLUMNS, 2);
  int wrong = 0;
  for (int r = 0; r < ROWS; r++)
    for (int c = 0; c < COLUMNS; c++) wrong += laid[c * ROWS + r] != source[r * COLUMNS + c];
  CHECK_INT_EQ(wrong, 0);
}

TEST_MAIN(TEST(signatures_are_the_module_contracts), TEST(op_counts_follow_the_graph),
          TEST(globals_are_parameters_and_a_device_cache), TEST(qwen2_has_biases_and_ties_the_head),
          TEST(attributes_carry_the_compatibility_key), TEST(key_round_trips_through_the_sidecar),
          TEST(unsupported_ops_are_refused_by_name), TEST(module_matches_the_golden),
          TEST(linear_weights_are_laid_out_transposed))
