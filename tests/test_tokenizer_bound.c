/* vlm_tokenizer_max_bytes_per_token: the bound that lets the engine refuse
 * a prompt that cannot fit its context before tokenizing it. It must be
 * sound (n bytes never give fewer than ceil(n / B) tokens), which the
 * adversarial texts below check on every tokenizer in the tree and in the
 * fixtures, and it must be absent (0) for pipelines that can drop text. */
#include <stdint.h>
#include <time.h>

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

/* Issue 27: a 4 MB prompt on a Qwen tokenizer (1024 bytes per token by the
 * bound) was tokenized in full, 2.27 M tokens and 5-8 CPU-s, before its
 * capacity refusal. vlm_tokenizer_encode_bounded stops past the limit and
 * is exact: under the limit it gives vlm_tokenizer_encode's ids (long
 * pieces streamed a batch of regex matches at a time), over it a prefix of
 * them longer than the limit. */
static const char *const mixed_units[] = {
    "The quick brown fox jumps over the lazy dog. ", "  \n\n\t  ", "12345 67.89 ", "caf\xc3\xa9 cafe\xcc\x81 ",
    "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e ", "<|im_start|>user\n", "\xf0\x9f\x98\x80!", "don't I'll ",
    "\xe2\x84\xaa ", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "   ", "x=1;y=2\r\n"};

static char *mixed_text(size_t length, unsigned seed, bool specials_off) {
  char *text = malloc(length + 64);
  size_t used = 0;
  while (used < length) {
    seed = seed * 1103515245u + 12345u;
    const char *unit = mixed_units[(seed >> 16) % (sizeof(mixed_units) / sizeof(mixed_units[0]))];
    if (specials_off && strchr(unit, '<')) continue; /* one long piece: streamed */
    size_t unit_length = strlen(unit);
    memcpy(text + used, unit, unit_length);
    used += unit_length;
  }
  text[used] = 0;
  return text;
}

static void check_bounded(const char *name, const vlm_tokenizer *tokenizer) {
  for (unsigned seed = 1; seed <= 3; seed++) {
    char *text = mixed_text(seed == 1 ? 300000 : 20000, seed, seed != 2);
    size_t length = strlen(text);
    vlm_token_ids whole = {0}, bounded = {0}, prefix = {0};
    CHECK_OK(vlm_tokenizer_encode(tokenizer, text, length, true, &whole));
    bool over = true;
    CHECK_OK(vlm_tokenizer_encode_bounded(tokenizer, text, length, true, whole.count, &bounded, &over));
    CHECK(!over);
    CHECK_INT_EQ(bounded.count, whole.count);
    bool same = bounded.count == whole.count && memcmp(bounded.ids, whole.ids, whole.count * sizeof(int32_t)) == 0;
    if (!same) fprintf(stderr, "  %s: the bounded ids differ (seed %u)\n", name, seed);
    CHECK(same);
    size_t limit = whole.count / 3;
    CHECK_OK(vlm_tokenizer_encode_bounded(tokenizer, text, length, false, limit, &prefix, &over));
    CHECK(over);
    CHECK(prefix.count < whole.count);
    /* (whole has the post-processor's tokens around the body: compare the
     * unbounded body's start.) */
    vlm_token_ids body = {0};
    CHECK_OK(vlm_tokenizer_encode(tokenizer, text, length, false, &body));
    CHECK(prefix.count <= body.count && memcmp(prefix.ids, body.ids, prefix.count * sizeof(int32_t)) == 0);
    vlm_token_ids_release(&whole), vlm_token_ids_release(&bounded), vlm_token_ids_release(&prefix);
    vlm_token_ids_release(&body);
    free(text);
  }
}

static void bounded_encoding_is_exact(void) {
  vlm_tokenizer *tokenizer = NULL;
  CHECK_OK(vlm_tokenizer_create(VLM_SOURCE_DIR "/tests/models/qwen2", NULL, &tokenizer));
  if (tokenizer) check_bounded("qwen2", tokenizer);
  vlm_tokenizer_release(tokenizer);
  const char *fixtures = test_fixtures_dir();
  if (!fixtures) {
    printf("  skipped the fixture tokenizers: ../shared/fixtures not found\n");
    return;
  }
  const char *names[] = {"llama2", "llama3", "qwen3", "gemma3", "deepseek_v3"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/tokenizers/%s", fixtures, names[i]);
    tokenizer = NULL;
    CHECK_OK(vlm_tokenizer_create(dir, NULL, &tokenizer));
    if (tokenizer) check_bounded(names[i], tokenizer);
    vlm_tokenizer_release(tokenizer);
  }
  /* The cost: 4 MiB of text on the Qwen3 tokenizer, stopped past 4096 ids. */
  char dir[1024];
  snprintf(dir, sizeof(dir), "%s/tokenizers/qwen3", fixtures);
  tokenizer = NULL;
  CHECK_OK(vlm_tokenizer_create(dir, NULL, &tokenizer));
  char *text = mixed_text(4u << 20, 7, true);
  struct timespec start, end;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
  vlm_token_ids ids = {0};
  bool over = false;
  CHECK_OK(vlm_tokenizer_encode_bounded(tokenizer, text, strlen(text), true, 4096, &ids, &over));
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &end);
  CHECK(over);
  printf("  4 MiB on qwen3 stopped past 4096 ids after %.3f CPU-s\n",
         (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) * 1e-9);
  vlm_token_ids_release(&ids);
  free(text);
  /* One pre-tokenized piece of 4 MiB (a run of spaces): its length alone
   * needs more ids than 4096, so the model never runs on it. */
  text = malloc(4u << 20);
  memset(text, ' ', 4u << 20);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
  CHECK_OK(vlm_tokenizer_encode_bounded(tokenizer, text, 4u << 20, false, 4096, &ids, &over));
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &end);
  CHECK(over);
  printf("  4 MiB of spaces on qwen3 stopped past 4096 ids after %.3f CPU-s\n",
         (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) * 1e-9);
  vlm_token_ids_release(&ids);
  free(text);
  vlm_tokenizer_release(tokenizer);
}

/* Long single pieces that the longest-token bound cannot refuse: one
 * repeated letter, digits, punctuation, a two-letter pattern, CJK without
 * spaces (a repeated phrase and a pseudo-random run of common characters). */
static const char *const long_piece_units[] = {"a", "1", "-", "ab", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", "!?"};

static char *long_piece(size_t shape, size_t length) {
  char *text = malloc(length + 8);
  size_t used = 0;
  unsigned seed = 12345;
  while (used < length) {
    if (shape < sizeof(long_piece_units) / sizeof(long_piece_units[0])) {
      const char *unit = long_piece_units[shape];
      size_t unit_length = strlen(unit);
      memcpy(text + used, unit, unit_length);
      used += unit_length;
    } else { /* CJK Unified Ideographs U+4E00 + 0..511, 3 bytes each */
      seed = seed * 1103515245u + 12345u;
      uint32_t codepoint = 0x4E00 + ((seed >> 16) & 511);
      text[used++] = (char)(0xE0 | (codepoint >> 12));
      text[used++] = (char)(0x80 | ((codepoint >> 6) & 0x3F));
      text[used++] = (char)(0x80 | (codepoint & 0x3F));
    }
  }
  text[used] = 0;
  return text;
}
#define LONG_PIECE_SHAPES (sizeof(long_piece_units) / sizeof(long_piece_units[0]) + 1)

/* Exact where they fit: 64 KiB of each shape, bounded at exactly its count,
 * on every fixture tokenizer; and 4 MiB of each refused at 32768 ids. */
static void long_pieces_are_exact_or_refused(void) {
  const char *fixtures = test_fixtures_dir();
  const char *names[] = {"qwen2", "llama2", "llama3", "qwen3", "gemma3", "deepseek_v3"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    char dir[1024];
    if (i == 0) {
      snprintf(dir, sizeof(dir), "%s/tests/models/qwen2", VLM_SOURCE_DIR);
    } else if (!fixtures) {
      printf("  skipped %s: ../shared/fixtures not found\n", names[i]);
      continue;
    } else {
      snprintf(dir, sizeof(dir), "%s/tokenizers/%s", fixtures, names[i]);
    }
    vlm_tokenizer *tokenizer = NULL;
    CHECK_OK(vlm_tokenizer_create(dir, NULL, &tokenizer));
    if (!tokenizer) continue;
    for (size_t shape = 0; shape < LONG_PIECE_SHAPES; shape++) {
      char *text = long_piece(shape, 64u << 10);
      size_t length = strlen(text);
      vlm_token_ids whole = {0}, bounded = {0};
      CHECK_OK(vlm_tokenizer_encode(tokenizer, text, length, false, &whole));
      bool over = true;
      CHECK_OK(vlm_tokenizer_encode_bounded(tokenizer, text, length, false, whole.count, &bounded, &over));
      if (over || bounded.count != whole.count ||
          memcmp(bounded.ids, whole.ids, whole.count * sizeof(int32_t)) != 0) {
        fprintf(stderr, "  %s: shape %zu (%zu ids) not exact when bounded at its own count\n", names[i], shape,
                whole.count);
        test_failures++;
      }
      vlm_token_ids_release(&whole), vlm_token_ids_release(&bounded);
      free(text);
      text = long_piece(shape, 4u << 20);
      length = strlen(text);
      struct timespec start, end;
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
      CHECK_OK(vlm_tokenizer_encode_bounded(tokenizer, text, length, false, 32768, &bounded, &over));
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &end);
      double seconds = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) * 1e-9;
      printf("  %s: 4 MiB of shape %zu stopped past 32768 ids after %.3f CPU-s\n", names[i], shape, seconds);
      CHECK(over);
      vlm_token_ids_release(&bounded);
      free(text);
    }
    vlm_tokenizer_release(tokenizer);
  }
}

TEST_MAIN(TEST(bound_is_sound_on_every_tokenizer), TEST(no_bound_where_text_can_vanish),
          TEST(bounded_encoding_is_exact), TEST(long_pieces_are_exact_or_refused))
