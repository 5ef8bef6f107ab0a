/* vlm_tokenizer_max_bytes_per_token: the bound that lets the engine refuse
 * a prompt that cannot fit its context before tokenizing it. It must be
 * sound (n bytes never give fewer than ceil(n / B) tokens), which the
 * adversarial texts below check on every tokenizer in the tree and in the
 * fixtures, and it must be absent (0) for pipelines that can drop text. */
#include <stdint.h>

#include "io/file.h"
#include "test.h"
#include "vlm/tokenizer.h"

static char *repeat(const char *unit, size_t count, size_t *out_length) {
  size_t unit_length = strlen(unit);
  char *text = malloc(unit_length * count + 1);
  for (size_t i = 0; i < count; i++) memcpy(text + i * unit_length, unit, unit_length);
  text[unit_length * count] = 0;
  *out_length = unit_length * count;
  return text;
}

/* Texts that pack many bytes into few tokens, or that normalization
 * shrinks: runs of one character (long merged tokens), whitespace,
 * characters NFKC maps to ASCII, the Kelvin sign, decomposed accents,
 * special tokens, emoji. */
static void check_sound(const char *name, const vlm_tokenizer *tokenizer) {
  size_t bound = vlm_tokenizer_max_bytes_per_token(tokenizer);
  CHECK(bound > 0);
  if (!bound) {
    fprintf(stderr, "  %s: no bound\n", name);
    return;
  }
  static const char *const units[] = {
      " ", "\n", "\t", "  \n", "a", "0", "aaaaaaaa", "The ", "\xef\xbc\xa1" /* fullwidth A */,
      "\xe2\x84\xaa" /* Kelvin */, "e\xcc\x81" /* e + combining acute */, "\xf0\x9d\x90\x80" /* math bold A */,
      "\xf0\x9f\x98\x80", "<s>", "</s>", "<|im_start|>", "<|endoftext|>", "<image>", "=", "-", "\xe3\x80\x80",
      "\x80" /* invalid UTF-8 */, "<0x41>", "\xe2\x96\x81"};
  for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
    size_t length = 0;
    char *text = repeat(units[i], 4096 / strlen(units[i]) + 1, &length);
    vlm_token_ids ids = {0};
    CHECK_OK(vlm_tokenizer_encode(tokenizer, text, length, false, &ids));
    size_t at_least = (length + bound - 1) / bound;
    if (ids.count < at_least) {
      fprintf(stderr, "  %s: %zu bytes of \"%s\" gave %zu tokens, fewer than ceil(%zu / %zu)\n", name, length,
              units[i], ids.count, length, bound);
      test_failures++;
    }
    vlm_token_ids_release(&ids);
    free(text);
  }
}

static void bound_is_sound_on_every_tokenizer(void) {
  const char *dirs[] = {VLM_SOURCE_DIR "/tests/models/qwen2", VLM_SOURCE_DIR "/tests/models/llava",
                        VLM_SOURCE_DIR "/tests/models/llama"};
  for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
    vlm_tokenizer *tokenizer = NULL;
    CHECK_OK(vlm_tokenizer_create(dirs[i], NULL, &tokenizer));
    if (tokenizer) check_sound(dirs[i], tokenizer);
    vlm_tokenizer_release(tokenizer);
  }
  const char *fixtures = test_fixtures_dir();
  if (!fixtures) {
    printf("  skipped the fixture tokenizers: ../shared/fixtures not found\n");
    return;
  }
  const char *names[] = {"llama2", "llama3", "qwen3", "gemma3", "deepseek_v3"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/tokenizers/%s", fixtures, names[i]);
    vlm_tokenizer *tokenizer = NULL;
    CHECK_OK(vlm_tokenizer_create(dir, NULL, &tokenizer));
    if (tokenizer) check_sound(names[i], tokenizer);
    vlm_tokenizer_release(tokenizer);
  }
}

static size_t bound_of(const char *json) {
  vlm_tokenizer *tokenizer = NULL;
  vlm_status status = vlm_tokenizer_create_from_json(json, strlen(json), NULL, 0, "t.json", NULL, &tokenizer);
  CHECK_OK(status);
  size_t bound = tokenizer ? vlm_tokenizer_max_bytes_per_token(tokenizer) : 999;
  vlm_tokenizer_release(tokenizer);
  return bound;
}

#define MODEL(extra) "{\"model\":{\"type\":\"BPE\",\"unk_token\":\"u\",\"vocab\":{\"u\":0,\"abcdefgh\":1},\"merges\":[]}" extra "}"

/* Pipelines that can drop or swallow text have no bound. */
static void no_bound_where_text_can_vanish(void) {
  CHECK_INT_EQ(bound_of(MODEL("")), 8);
  CHECK_INT_EQ(bound_of(MODEL(",\"normalizer\":{\"type\":\"NFKC\"}")), 32);
  CHECK_INT_EQ(bound_of(MODEL(",\"normalizer\":{\"type\":\"Replace\",\"pattern\":{\"String\":\"abcd\"},\"content\":\"x\"}")),
               32);
  CHECK_INT_EQ(bound_of(MODEL(",\"normalizer\":{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"\"}")), 0);
  CHECK_INT_EQ(bound_of(MODEL(",\"normalizer\":{\"type\":\"Replace\",\"pattern\":{\"Regex\":\" +\"},\"content\":\" \"}")), 0);
  CHECK_INT_EQ(bound_of(MODEL(",\"normalizer\":{\"type\":\"Strip\",\"strip_left\":true,\"strip_right\":true}")), 0);
  CHECK_INT_EQ(bound_of(MODEL(",\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"NFD\"},"
                              "{\"type\":\"StripAccents\"}]}")), 0);
  CHECK_INT_EQ(bound_of(MODEL(",\"pre_tokenizer\":{\"type\":\"WhitespaceSplit\"}")), 0);
  CHECK_INT_EQ(bound_of(MODEL(",\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Digits\","
                              "\"individual_digits\":true},{\"type\":\"Whitespace\"}]}")), 0);
  CHECK_INT_EQ(bound_of(MODEL(",\"pre_tokenizer\":{\"type\":\"Split\",\"pattern\":{\"String\":\" \"},"
                              "\"behavior\":\"Removed\",\"invert\":false}")), 0);
  CHECK_INT_EQ(bound_of(MODEL(",\"added_tokens\":[{\"id\":2,\"content\":\"<x>\",\"single_word\":false,\"lstrip\":true,"
                              "\"rstrip\":false,\"normalized\":false,\"special\":true}]")), 0);
  /* Unknown characters dropped (no unk token) or fused into one token. */
  CHECK_INT_EQ(bound_of("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[]}}"), 0);
  CHECK_INT_EQ(bound_of("{\"model\":{\"type\":\"BPE\",\"unk_token\":\"u\",\"fuse_unk\":true,\"vocab\":{\"u\":0},"
                        "\"merges\":[]}}"), 0);
  CHECK_INT_EQ(bound_of("{\"model\":{\"type\":\"WordPiece\",\"unk_token\":\"[UNK]\",\"vocab\":{\"[UNK]\":0,\"a\":1}}}"), 0);
}

TEST_MAIN(TEST(bound_is_sound_on_every_tokenizer), TEST(no_bound_where_text_can_vanish))
