/* Conformance with Hugging Face: every real tokenizer in
 * ../shared/fixtures/tokenizers against the goldens in tests/goldens/tokenizer
 * (made by tools/oracle/make_tokenizer_goldens.py). Each case checks the ids
 * with and without special tokens, decode with and without skipping special
 * tokens, and that streaming decode reproduces the full decode -- in
 * Transformers' semantics (the default) and in plain `tokenizers` semantics. */
#include <stdint.h>
#include <time.h>

#include "io/json.h"
#include "test.h"
#include "vlm/tokenizer.h"

static double now_seconds(void) {
  struct timespec time;
  clock_gettime(CLOCK_MONOTONIC, &time);
  return (double)time.tv_sec + (double)time.tv_nsec * 1e-9;
}

static size_t hex_to_bytes(const char *hex, char *out) {
  size_t length = strlen(hex) / 2;
  for (size_t i = 0; i < length; i++) {
    unsigned value = 0;
    sscanf(hex + 2 * i, "%2x", &value);
    out[i] = (char)value;
  }
  return length;
}

static bool ids_equal(const vlm_token_ids *ids, const vlm_json_value *expected) {
  if (!expected || expected->type != VLM_JSON_ARRAY || expected->as.array.count != ids->count)
    return false;
  for (size_t i = 0; i < ids->count; i++) {
    int64_t value;
    if (!vlm_json_get_int(&expected->as.array.items[i], &value) || value != ids->ids[i]) return false;
  }
  return true;
}

static void print_ids(const char *label, const vlm_token_ids *ids) {
  fprintf(stderr, "    %s:", label);
  for (size_t i = 0; i < ids->count && i < 60; i++) fprintf(stderr, " %d", ids->ids[i]);
  fprintf(stderr, "\n");
}

static int32_t *json_ids(const vlm_json_value *array, size_t *count) {
  *count = array ? array->as.array.count : 0;
  int32_t *ids = malloc((*count + 1) * sizeof(int32_t));
  for (size_t i = 0; i < *count; i++) {
    int64_t value = 0;
    vlm_json_get_int(&array->as.array.items[i], &value);
    ids[i] = (int32_t)value;
  }
  return ids;
}

static bool check_decode(const vlm_tokenizer *tokenizer, const int32_t *ids, size_t count,
                         bool skip, const char *expected, const char *label) {
  char *text = NULL;
  size_t length = 0;
  vlm_status status = vlm_tokenizer_decode(tokenizer, ids, count, skip, &text, &length);
  bool ok = status == VLM_OK && length == strlen(expected) && memcmp(text, expected, length) == 0;
  if (!ok) fprintf(stderr, "    %s: got \"%s\"\n    expected \"%s\"\n", label, text ? text : "(error)", expected);
  vlm_status_free(status);
  free(text);
  return ok;
}

static bool check_stream(const vlm_tokenizer *tokenizer, const int32_t *ids, size_t count,
                         bool skip, const char *expected) {
  vlm_detokenizer *stream = NULL;
  if (vlm_detokenizer_create(tokenizer, skip, &stream)) return false;
  char *joined = calloc(1, strlen(expected) * 2 + 1024);
  size_t length = 0;
  bool ok = true;
  for (size_t i = 0; i <= count && ok; i++) {
    const char *piece;
    size_t piece_length;
    vlm_status status = i < count ? vlm_detokenizer_push(stream, ids[i], &piece, &piece_length)
                                  : vlm_detokenizer_finish(stream, &piece, &piece_length);
    if (status || length + piece_length > strlen(expected) + 1000) {
      vlm_status_free(status);
      ok = false;
      break;
    }
    memcpy(joined + length, piece, piece_length);
    length += piece_length;
  }
  ok = ok && length == strlen(expected) && memcmp(joined, expected, length) == 0;
  if (!ok) fprintf(stderr, "    stream: got \"%.*s\"\n", (int)length, joined);
  free(joined);
  vlm_detokenizer_release(stream);
  return ok;
}

/* hf_* fields exist only where plain tokenizers differs from Transformers. */
static const vlm_json_value *field(const vlm_json_value *item, const char *name, bool hf) {
  if (hf) {
    char key[64];
    snprintf(key, sizeof(key), "hf_%s", name);
    const vlm_json_value *value = vlm_json_object_get(item, key);
    if (value) return value;
  }
  return vlm_json_object_get(item, name);
}

static bool run_case(const vlm_tokenizer *tokenizer, const vlm_json_value *item, bool hf) {
  const char *name = vlm_json_get_string(vlm_json_object_get(item, "name"));
  if (!name) name = vlm_json_get_string(vlm_json_object_get(item, "input"));
  const vlm_json_value *input = vlm_json_object_get(item, "input");
  const char *hex = vlm_json_get_string(vlm_json_object_get(item, "input_hex"));
  char *bytes = malloc(hex ? strlen(hex) + 1 : 1);
  const char *text = input ? input->as.string.chars : bytes;
  size_t length = input ? input->as.string.length : hex_to_bytes(hex, bytes);
  bool ok = true;
  for (int plain = 0; plain < 2; plain++) {
    vlm_token_ids ids = {0};
    vlm_status status = vlm_tokenizer_encode(tokenizer, text, length, !plain, &ids);
    const vlm_json_value *expected = field(item, plain ? "ids_plain" : "ids", hf);
    if (status || !ids_equal(&ids, expected)) {
      fprintf(stderr, "  case %s (%s%s): ids differ%s%s\n", name, hf ? "tokenizers" : "transformers",
              plain ? ", no special" : "", status ? ": " : "", status ? vlm_status_message(status) : "");
      print_ids("got", &ids);
      size_t count;
      int32_t *want = json_ids(expected, &count);
      vlm_token_ids want_ids = {want, count, count};
      print_ids("expected", &want_ids);
      free(want);
      ok = false;
    }
    vlm_status_free(status);
    vlm_token_ids_release(&ids);
  }
  size_t count;
  int32_t *ids = json_ids(field(item, "ids", hf), &count);
  const char *decoded = vlm_json_get_string(field(item, "decoded", hf));
  const char *decoded_skip = vlm_json_get_string(field(item, "decoded_skip", hf));
  if (!check_decode(tokenizer, ids, count, false, decoded, "decode") ||
      !check_decode(tokenizer, ids, count, true, decoded_skip, "decode skip_special") ||
      !check_stream(tokenizer, ids, count, false, decoded) ||
      !check_stream(tokenizer, ids, count, true, decoded_skip)) {
    fprintf(stderr, "  case %s (%s): decode differs\n", name, hf ? "tokenizers" : "transformers");
    ok = false;
  }
  free(ids);
  free(bytes);
  return ok;
}

static void check_tokenizer(const char *name) {
  const char *fixtures = test_require_fixtures();
  if (!fixtures) return;
  char directory[1024], golden_path[1024];
  snprintf(directory, sizeof(directory), "%s/tokenizers/%s", fixtures, name);
  snprintf(golden_path, sizeof(golden_path), "%s/tests/goldens/tokenizer/%s.json", VLM_SOURCE_DIR,
           name);
  vlm_json_document golden;
  CHECK_OK(vlm_json_parse_file(golden_path, 16 << 20, NULL, &golden));
  const vlm_json_value *cases = vlm_json_object_get(golden.root, "cases");
  for (int hf = 0; hf < 2; hf++) {
    vlm_tokenizer_options options = {.tokenizers_library_semantics = hf};
    vlm_tokenizer *tokenizer = NULL;
    double start = now_seconds();
    vlm_status status = vlm_tokenizer_create(directory, &options, &tokenizer);
    double elapsed = now_seconds() - start;
    CHECK_OK(status);
    if (!tokenizer) continue;
    size_t passed = 0, total = cases ? cases->as.array.count : 0;
    for (size_t i = 0; i < total; i++) passed += run_case(tokenizer, &cases->as.array.items[i], hf);
    printf("  %s (%s semantics): %zu/%zu cases passed, loaded in %.0f ms\n", name,
           hf ? "tokenizers" : "transformers", passed, total, elapsed * 1000);
    CHECK_INT_EQ(passed, total);
    vlm_tokenizer_release(tokenizer);
  }
  vlm_json_document_release(&golden);
}

static void qwen3(void) { check_tokenizer("qwen3"); }
static void llama3(void) { check_tokenizer("llama3"); }
static void deepseek_v3(void) { check_tokenizer("deepseek_v3"); }
static void llama2(void) { check_tokenizer("llama2"); }
static void gemma3(void) { check_tokenizer("gemma3"); }

/* tests/goldens/tokenizer/matrix.json (tools/oracle/make_tokenizer_matrix.py):
 * Metaspace always / first / never with split true and false, Llama-2's
 * legacy normalizer, and the LlamaTokenizer class's own rebuild, each around
 * special and plain added tokens, normalized or not, lstrip / rstrip /
 * single_word -- in both semantics. The tokenizers are the tiny Llama BPE
 * model under each pipeline: nothing outside the checkout is read. */
static void metaspace_and_added_tokens_matrix(void) {
  vlm_json_document matrix, base;
  CHECK_OK(vlm_json_parse_file(VLM_SOURCE_DIR "/tests/goldens/tokenizer/matrix.json", 16 << 20, NULL, &matrix));
  CHECK_OK(vlm_json_parse_file(VLM_SOURCE_DIR "/tests/models/llama/tokenizer.json", 16 << 20, NULL, &base));
  if (!matrix.root || !base.root) return;
  const vlm_json_value *variants = vlm_json_object_get(matrix.root, "variants");
  CHECK(variants && variants->as.array.count >= 10);
  for (size_t v = 0; variants && v < variants->as.array.count; v++) {
    const vlm_json_value *variant = &variants->as.array.items[v];
    const char *name = vlm_json_get_string(vlm_json_object_get(variant, "name"));
    vlm_string_builder json = {0};
    vlm_sb_append_literal(&json, "{\"version\":\"1.0\",\"truncation\":null,\"padding\":null,\"added_tokens\":");
    vlm_sb_append_json_value(&json, vlm_json_object_get(matrix.root, "added_tokens"));
    vlm_sb_append_literal(&json, ",\"normalizer\":");
    vlm_sb_append_json_value(&json, vlm_json_object_get(variant, "normalizer"));
    vlm_sb_append_literal(&json, ",\"pre_tokenizer\":");
    vlm_sb_append_json_value(&json, vlm_json_object_get(variant, "pre_tokenizer"));
    vlm_sb_append_literal(&json, ",\"post_processor\":");
    vlm_sb_append_json_value(&json, vlm_json_object_get(matrix.root, "post_processor"));
    vlm_sb_append_literal(&json, ",\"decoder\":");
    vlm_sb_append_json_value(&json, vlm_json_object_get(matrix.root, "decoder"));
    vlm_sb_append_literal(&json, ",\"model\":");
    vlm_sb_append_json_value(&json, vlm_json_object_get(base.root, "model"));
    vlm_sb_append_literal(&json, "}");
    char *tokenizer_json = vlm_sb_finish(&json);
    vlm_string_builder config_builder = {0};
    vlm_sb_append_json_value(&config_builder, vlm_json_object_get(variant, "tokenizer_config"));
    char *config = vlm_sb_finish(&config_builder);
    const vlm_json_value *cases = vlm_json_object_get(variant, "cases");
    for (int hf = 0; hf < 2; hf++) {
      vlm_tokenizer_options options = {.tokenizers_library_semantics = hf};
      vlm_tokenizer *tokenizer = NULL;
      CHECK_OK(vlm_tokenizer_create_from_json(tokenizer_json, strlen(tokenizer_json), config, strlen(config),
                                              name, &options, &tokenizer));
      if (!tokenizer) continue;
      size_t passed = 0, total = cases ? cases->as.array.count : 0;
      for (size_t i = 0; i < total; i++) passed += run_case(tokenizer, &cases->as.array.items[i], hf);
      printf("  %s (%s semantics): %zu/%zu cases passed\n", name, hf ? "tokenizers" : "transformers", passed,
             total);
      CHECK_INT_EQ(passed, total);
      vlm_tokenizer_release(tokenizer);
    }
    free(tokenizer_json);
    free(config);
  }
  vlm_json_document_release(&base);
  vlm_json_document_release(&matrix);
}

TEST_MAIN(TEST(qwen3), TEST(llama3), TEST(deepseek_v3), TEST(llama2), TEST(gemma3),
          TEST(metaspace_and_added_tokens_matrix))
