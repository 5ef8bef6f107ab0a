/* Tokenizer units on small hand-made tokenizer.json files (the fuzz seeds in
 * fuzz/corpus/tokenizer). Expected values were produced with Hugging Face
 * tokenizers 0.23.3 (Tokenizer.from_str on the same files). */
#include <stdint.h>

#include "io/file.h"
#include "test.h"
#include "vlm/tokenizer.h"

static vlm_tokenizer *load_seed(const char *name) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/fuzz/corpus/tokenizer/%s", VLM_SOURCE_DIR, name);
  char *text = NULL;
  size_t length = 0;
  CHECK_OK(vlm_file_read_all(path, 1 << 20, &text, &length));
  vlm_tokenizer *tokenizer = NULL;
  vlm_tokenizer_options options = {.tokenizers_library_semantics = true};
  CHECK_OK(vlm_tokenizer_create_from_json(text, length, NULL, 0, name, &options, &tokenizer));
  free(text);
  return tokenizer;
}

static void check_encode(const vlm_tokenizer *tokenizer, const char *text, bool add_special,
                         const int32_t *expected, size_t expected_count) {
  vlm_token_ids ids = {0};
  CHECK_OK(vlm_tokenizer_encode(tokenizer, text, strlen(text), add_special, &ids));
  bool same = ids.count == expected_count;
  for (size_t i = 0; same && i < ids.count; i++) same = ids.ids[i] == expected[i];
  if (!same) {
    fprintf(stderr, "  encode \"%s\": got", text);
    for (size_t i = 0; i < ids.count; i++) fprintf(stderr, " %d", ids.ids[i]);
    fprintf(stderr, "\n");
  }
  CHECK(same);
  vlm_token_ids_release(&ids);
}

static void check_decode(const vlm_tokenizer *tokenizer, const int32_t *ids, size_t count,
                         bool skip, const char *expected) {
  char *text = NULL;
  CHECK_OK(vlm_tokenizer_decode(tokenizer, ids, count, skip, &text, NULL));
  CHECK_STR_EQ(text, expected);
  free(text);
}

#define IDS(...) ((const int32_t[]){__VA_ARGS__}), (sizeof((int32_t[]){__VA_ARGS__}) / sizeof(int32_t))

static void byte_level_bpe_with_added_tokens(void) {
  vlm_tokenizer *tokenizer = load_seed("bpe_byte_level.json");
  if (!tokenizer) return;
  check_encode(tokenizer, "hello world", true, IDS(0, 12, 16));
  check_encode(tokenizer, "hello world", false, IDS(12, 16));
  /* <tool> is single_word + lstrip + rstrip: it swallows the spaces, and
   * glued to letters it is not a match at all. */
  check_encode(tokenizer, "hello <tool> world", true, IDS(0, 12, 18, 6, 14, 17));
  check_encode(tokenizer, "hello<tool>world", true, IDS(0, 12, 4, 4, 3, 6, 14, 17));
  check_encode(tokenizer, "Hello  \n\n world's", true, IDS(0, 2, 10, 4, 5, 16));
  check_decode(tokenizer, IDS(0, 12, 18, 6, 14, 17), false, "<s>hello<tool>world");
  check_decode(tokenizer, IDS(0, 12, 18, 6, 14, 17), true, "hello<tool>world");
  CHECK_INT_EQ(vlm_tokenizer_token_to_id(tokenizer, "Ġworld", strlen("Ġworld")), 16);
  CHECK_INT_EQ(vlm_tokenizer_token_to_id(tokenizer, "<tool>", 6), 18);
  CHECK_INT_EQ(vlm_tokenizer_token_to_id(tokenizer, "nope", 4), -1);
  CHECK_STR_EQ(vlm_tokenizer_id_to_token(tokenizer, 12), "hello");
  CHECK(vlm_tokenizer_id_to_token(tokenizer, 99) == NULL);
  CHECK(vlm_tokenizer_is_special(tokenizer, 0));
  CHECK(!vlm_tokenizer_is_special(tokenizer, 18));
  CHECK_INT_EQ(vlm_tokenizer_vocab_size(tokenizer), 19);
  vlm_tokenizer_release(tokenizer);
}

static void sentencepiece_bpe_with_byte_fallback(void) {
  vlm_tokenizer *tokenizer = load_seed("bpe_sentencepiece.json");
  if (!tokenizer) return;
  check_encode(tokenizer, "hi café", true, IDS(1, 11, 17, 2, 3));
  check_encode(tokenizer, " hi  hi", false, IDS(7, 11, 7, 11));
  check_encode(tokenizer, "hi<s>hi €x", true, IDS(1, 11, 1, 11, 7, 4, 5, 6, 0));
  check_encode(tokenizer, "zz", true, IDS(1, 7, 0)); /* fused unknowns */
  check_decode(tokenizer, IDS(1, 11, 17, 2, 3), false, "<s> hi café");
  check_decode(tokenizer, IDS(1, 11, 1, 11, 7, 4, 5, 6, 0), false, "<s> hi<s> hi €<unk>");
  check_decode(tokenizer, IDS(1, 11, 1, 11, 7, 4, 5, 6, 0), true, "hi hi €");
  /* A lone byte token is not UTF-8: U+FFFD per byte, as ByteFallback does. */
  check_decode(tokenizer, IDS(11, 4, 5), false, "hi\xEF\xBF\xBD\xEF\xBF\xBD");
  vlm_tokenizer_release(tokenizer);
}

/* processing_utils.py (transformers 5.23): a processor's chat flow adds the
 * post-processor's tokens unless the rendered prompt starts with bos_token;
 * the tokenizer's flow never adds them. */
static void chat_flows_add_special_tokens_as_transformers_does(void) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/fuzz/corpus/tokenizer/bpe_sentencepiece.json", VLM_SOURCE_DIR);
  char *text = NULL;
  size_t length = 0;
  CHECK_OK(vlm_file_read_all(path, 1 << 20, &text, &length));
  const char *config = "{\"bos_token\": {\"content\": \"<s>\"}, \"eos_token\": \"</s>\"}";
  vlm_tokenizer *tokenizer = NULL;
  CHECK_OK(vlm_tokenizer_create_from_json(text, length, config, strlen(config), "seed", NULL, &tokenizer));
  free(text);
  if (!tokenizer) return;
  static const struct {
    const char *prompt;
    vlm_prompt_flow flow;
    bool adds;
  } cases[] = {
      {"hi hi", VLM_PROMPT_FLOW_PROCESSOR, true},
      {"<s>hi hi", VLM_PROMPT_FLOW_PROCESSOR, false},
      {" <s>hi", VLM_PROMPT_FLOW_PROCESSOR, true}, /* a prefix test, not a search */
      {"<s", VLM_PROMPT_FLOW_PROCESSOR, true},
      {"", VLM_PROMPT_FLOW_PROCESSOR, true},
      {"hi hi", VLM_PROMPT_FLOW_TOKENIZER, false},
      {"<s>hi hi", VLM_PROMPT_FLOW_TOKENIZER, false},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    size_t prompt_length = strlen(cases[i].prompt);
    CHECK(vlm_tokenizer_chat_adds_special_tokens(tokenizer, cases[i].prompt, prompt_length,
                                                 cases[i].flow) == cases[i].adds);
    vlm_token_ids chat = {0}, plain = {0};
    CHECK_OK(vlm_tokenizer_encode_chat(tokenizer, cases[i].prompt, prompt_length, cases[i].flow, &chat));
    CHECK_OK(vlm_tokenizer_encode(tokenizer, cases[i].prompt, prompt_length, cases[i].adds, &plain));
    CHECK(chat.count == plain.count && (!chat.count || !memcmp(chat.ids, plain.ids, chat.count * 4)));
    vlm_token_ids_release(&chat);
    vlm_token_ids_release(&plain);
  }
  /* The processor adds the template's BOS in front of an unprefixed prompt. */
  check_encode(tokenizer, "hi", true, IDS(1, 11));
  vlm_tokenizer_release(tokenizer);
  /* No bos_token: the processor's tokenizer call adds whatever the
   * post-processor adds. */
  tokenizer = load_seed("bpe_sentencepiece.json");
  if (!tokenizer) return;
  CHECK(vlm_tokenizer_chat_adds_special_tokens(tokenizer, "<s>hi", 5, VLM_PROMPT_FLOW_PROCESSOR));
  vlm_tokenizer_release(tokenizer);
}

/* AutoTokenizer picks the tokenizer class from config.json's model_type
 * too: a LlamaTokenizer file of a llava or mistral checkpoint loads as the
 * generic TokenizersBackend (tokenizer.json's Metaspace "always"), of a llama
 * checkpoint (or none) as LlamaTokenizer (rebuilt: "first", legacy false).
 * Expected ids from transformers 5.23 AutoTokenizer on the same files with
 * config.json {"model_type": ...}, with and without the tokenizer_class. */
static void model_type_picks_the_tokenizer_class(void) {
  static const char tokenizer_json[] =
      "{\"version\": \"1.0\", \"truncation\": null, \"padding\": null, "
      "\"added_tokens\": [{\"id\": 0, \"content\": \"<unk>\", \"single_word\": false, "
      "\"lstrip\": false, \"rstrip\": false, \"normalized\": false, \"special\": true}, "
      "{\"id\": 1, \"content\": \"<s>\", \"single_word\": false, \"lstrip\": false, "
      "\"rstrip\": false, \"normalized\": false, \"special\": true}, {\"id\": 7, "
      "\"content\": \"<image>\", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, "
      "\"normalized\": false, \"special\": true}], \"normalizer\": null, "
      "\"pre_tokenizer\": {\"type\": \"Metaspace\", \"replacement\": \"▁\", "
      "\"prepend_scheme\": \"always\", \"split\": false}, \"post_processor\": null, "
      "\"decoder\": null, \"model\": {\"type\": \"BPE\", \"dropout\": null, "
      "\"unk_token\": \"<unk>\", \"continuing_subword_prefix\": null, "
      "\"end_of_word_suffix\": null, \"fuse_unk\": true, \"byte_fallback\": false, "
      "\"ignore_merges\": false, \"vocab\": {\"<unk>\": 0, \"<s>\": 1, \"▁\": 2, \"a\": 3, "
      "\"b\": 4, \"▁a\": 5, \"▁b\": 6, \"<image>\": 7}, \"merges\": [[\"▁\", \"a\"], [\"▁\", "
      "\"b\"]]}}";
  static const char config[] = "{\"tokenizer_class\": \"LlamaTokenizer\", \"bos_token\": \"<s>\", "
                               "\"unk_token\": \"<unk>\"}";
  static const char unnamed[] = "{\"bos_token\": \"<s>\", \"unk_token\": \"<unk>\"}";
  /* The ids of "a<image>b": the Llama class ("first": 5 "▁a" ... 4 "b"),
   * the generic one ("always": ... 6 "▁b"), or a class registered for the
   * model_type and rebuilt in code (Qwen2Tokenizer / GemmaTokenizer: 3 "a"
   * ... 4 "b"). Every model_type with a config record that registers a
   * class (TOKENIZER_MAPPING_NAMES) is here. */
  static const struct {
    const char *model_type;
    bool hub_class;   /* tokenizer_config.json names LlamaTokenizer */
    int32_t a, b;
  } cases[] = {{NULL, true, 5, 4},          {"llama", true, 5, 4},        {"llava", true, 5, 6},
               {"mistral", true, 5, 6},     {"gemma3", true, 5, 4},       {"molmo2", true, 5, 6},
               {"qwen2_5_vl", true, 5, 4},  {"phi4_multimodal", true, 5, 4}, {"qwen2", true, 3, 4},
               {NULL, false, 5, 6},         {"llama", false, 5, 6},       {"llava", false, 5, 6},
               {"mistral", false, 5, 6},    {"molmo2", false, 5, 6},      {"phi4_multimodal", false, 5, 6},
               {"qwen2", false, 3, 4},      {"qwen3", false, 3, 4},       {"qwen2_vl", false, 3, 4},
               {"qwen2_5_vl", false, 3, 4}, {"qwen3_vl", false, 3, 4},    {"qwen3_vl_moe", false, 3, 4},
               {"gemma3", false, 3, 4},     {"gemma3_text", false, 3, 4}, {"gemma3n", false, 3, 4},
               {"gemma3n_text", false, 3, 4}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    vlm_tokenizer_options options = {.model_type = cases[i].model_type};
    vlm_tokenizer *tokenizer = NULL;
    const char *file = cases[i].hub_class ? config : unnamed;
    CHECK_OK(vlm_tokenizer_create_from_json(tokenizer_json, strlen(tokenizer_json), file, strlen(file), "inline",
                                            &options, &tokenizer));
    if (!tokenizer) continue;
    const int32_t expected[] = {cases[i].a, 7, cases[i].b};
    check_encode(tokenizer, "a<image>b", false, expected, 3);
    vlm_tokenizer_release(tokenizer);
  }
}

static void normalizers_and_pre_tokenizers(void) {
  vlm_tokenizer *tokenizer = load_seed("metaspace_digits_lowercase.json");
  if (!tokenizer) return;
  check_encode(tokenizer, "  AB ab 12 ab1c  ", true, IDS(1, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 6, 0, 2));
  check_encode(tokenizer, "Ａｂ x y z q abc", false, IDS(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 9));
  vlm_tokenizer_release(tokenizer);
}

static void wordpiece_model(void) {
  vlm_tokenizer *tokenizer = load_seed("wordpiece.json");
  if (!tokenizer) return;
  check_encode(tokenizer, "Unaffable hello world !", true, IDS(1, 3, 4, 5, 6, 8, 9, 2));
  check_encode(tokenizer, "Hello, unknownword.", false, IDS(6, 0, 0, 7));
  check_decode(tokenizer, IDS(1, 3, 4, 5, 6, 8, 9, 2), false, "[CLS] unaffable hello world! [SEP]");
  check_decode(tokenizer, IDS(1, 6, 0, 0, 7, 2), true, "hello.");
  vlm_tokenizer_release(tokenizer);
}

static vlm_status load_text(const char *json) {
  vlm_tokenizer *tokenizer = NULL;
  vlm_status status = vlm_tokenizer_create_from_json(json, strlen(json), NULL, 0, "t.json", NULL,
                                                     &tokenizer);
  vlm_tokenizer_release(tokenizer);
  return status;
}

static void malformed_files_give_clear_errors(void) {
  CHECK_ERROR(load_text("{"), VLM_STATUS_DATA_LOSS, "t.json: invalid JSON");
  CHECK_ERROR(load_text("[]"), VLM_STATUS_INVALID_ARGUMENT, "expected a JSON object");
  CHECK_ERROR(load_text("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[\"a b\"]}}"),
              VLM_STATUS_INVALID_ARGUMENT, "model.merges[0]: \"a\" + \"b\": token not in the vocabulary");
  CHECK_ERROR(load_text("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":-1},\"merges\":[]}}"),
              VLM_STATUS_INVALID_ARGUMENT, "model.vocab[\"a\"]");
  CHECK_ERROR(load_text("{\"model\":{\"type\":\"Unigram\",\"vocab\":[]}}"),
              VLM_STATUS_UNIMPLEMENTED, "unsupported model type 'Unigram'");
  CHECK_ERROR(load_text("{\"model\":{\"type\":\"BPE\",\"vocab\":{},\"merges\":[]},"
                        "\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Foo\"}]}}"),
              VLM_STATUS_UNIMPLEMENTED, "pre_tokenizer.pretokenizers[0]: unsupported pre-tokenizer type 'Foo'");
  CHECK_ERROR(load_text("{\"model\":{\"type\":\"BPE\",\"vocab\":{},\"merges\":[]},"
                        "\"pre_tokenizer\":{\"type\":\"Split\",\"pattern\":{\"Regex\":\"(x\"},"
                        "\"behavior\":\"Isolated\"}}"),
              VLM_STATUS_INVALID_ARGUMENT, "invalid regex /(x/");
  CHECK_ERROR(load_text("{\"model\":{\"type\":\"BPE\",\"vocab\":{},\"merges\":[]},"
                        "\"added_tokens\":[{\"content\":\"x\"}]}"),
              VLM_STATUS_INVALID_ARGUMENT, "added_tokens[0]");
}

static void invalid_utf8_is_replaced(void) {
  vlm_tokenizer *tokenizer = load_seed("bpe_byte_level.json");
  if (!tokenizer) return;
  /* "h\x80" tokenizes like "h\uFFFD": h, then the three bytes of U+FFFD. */
  vlm_token_ids raw = {0}, replaced = {0};
  CHECK_OK(vlm_tokenizer_encode(tokenizer, "h\x80", 2, false, &raw));
  CHECK_OK(vlm_tokenizer_encode(tokenizer, "h\xEF\xBF\xBD", 4, false, &replaced));
  CHECK_INT_EQ(raw.count, replaced.count);
  CHECK(raw.count == replaced.count && memcmp(raw.ids, replaced.ids, raw.count * 4) == 0);
  vlm_token_ids_release(&raw);
  vlm_token_ids_release(&replaced);
  vlm_tokenizer_release(tokenizer);
}

static void streaming_waits_for_whole_characters(void) {
  vlm_tokenizer *tokenizer = load_seed("bpe_sentencepiece.json");
  if (!tokenizer) return;
  vlm_detokenizer *stream = NULL;
  CHECK_OK(vlm_detokenizer_create(tokenizer, false, &stream));
  /* A run of byte tokens is final only once a token that is not a byte ends
   * it (below: one more byte turns the whole run into U+FFFD). */
  const int32_t ids[] = {11, 4, 5, 6, 17};
  const char *expected[] = {"hi", "", "", "", "€ caf"};
  for (size_t i = 0; i < 5; i++) {
    const char *text;
    size_t length;
    CHECK_OK(vlm_detokenizer_push(stream, ids[i], &text, &length));
    CHECK_INT_EQ(length, strlen(expected[i]));
    CHECK(memcmp(text, expected[i], length) == 0);
  }
  const char *text;
  size_t length;
  CHECK_OK(vlm_detokenizer_finish(stream, &text, &length));
  CHECK_INT_EQ(length, 0);
  vlm_detokenizer_release(stream);
  /* tokenizers' ByteFallback: a run that is not valid UTF-8 becomes U+FFFD
   * byte for byte, the € it began with included. The stream must not have
   * let the € out. */
  CHECK_OK(vlm_detokenizer_create(tokenizer, false, &stream));
  const int32_t broken[] = {11, 4, 5, 6, 4, 17};
  char streamed[64] = "";
  size_t streamed_length = 0;
  for (size_t i = 0; i <= 6; i++) {
    if (i < 6) CHECK_OK(vlm_detokenizer_push(stream, broken[i], &text, &length));
    else CHECK_OK(vlm_detokenizer_finish(stream, &text, &length));
    if (streamed_length + length < sizeof(streamed)) {
      memcpy(streamed + streamed_length, text, length);
      streamed_length += length;
    }
  }
  streamed[streamed_length] = 0;
  check_decode(tokenizer, broken, 6, false, "hi\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD caf");
  CHECK_STR_EQ(streamed, "hi\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD caf");
  vlm_detokenizer_release(stream);
  /* A byte that never completes is released as U+FFFD by finish. */
  CHECK_OK(vlm_detokenizer_create(tokenizer, false, &stream));
  CHECK_OK(vlm_detokenizer_push(stream, 11, &text, &length));
  CHECK_OK(vlm_detokenizer_push(stream, 4, &text, &length));
  CHECK_INT_EQ(length, 0);
  CHECK_OK(vlm_detokenizer_finish(stream, &text, &length));
  CHECK_INT_EQ(length, 3);
  CHECK(memcmp(text, "\xEF\xBF\xBD", 3) == 0);
  vlm_detokenizer_release(stream);
  vlm_tokenizer_release(tokenizer);
}

static void stop_strings_across_pieces(void) {
  const char *stops[] = {"<|end|>", "STOP"};
  vlm_stop_matcher *matcher = NULL;
  CHECK_OK(vlm_stop_matcher_create(stops, 2, &matcher));
  const char *text;
  size_t length;
  CHECK(!vlm_stop_matcher_push(matcher, "Hello <", 7, &text, &length));
  CHECK_INT_EQ(length, 6); /* "<" is held back */
  CHECK(!vlm_stop_matcher_push(matcher, "|e", 2, &text, &length));
  CHECK_INT_EQ(length, 0);
  CHECK(!vlm_stop_matcher_push(matcher, "x", 1, &text, &length));
  CHECK_INT_EQ(length, 4);
  CHECK(memcmp(text, "<|ex", 4) == 0);
  CHECK(vlm_stop_matcher_push(matcher, " ok <|en", 8, &text, &length) == false);
  CHECK_INT_EQ(length, 4);
  CHECK(memcmp(text, " ok ", 4) == 0);
  CHECK(vlm_stop_matcher_push(matcher, "d|> tail", 8, &text, &length));
  CHECK_INT_EQ(length, 0);
  CHECK_INT_EQ(vlm_stop_matcher_matched(matcher), 0);
  CHECK(vlm_stop_matcher_push(matcher, "more", 4, &text, &length));
  CHECK_INT_EQ(length, 0);
  vlm_stop_matcher_release(matcher);

  CHECK_OK(vlm_stop_matcher_create(stops, 2, &matcher));
  CHECK(!vlm_stop_matcher_push(matcher, "no ST", 5, &text, &length));
  CHECK_INT_EQ(length, 3);
  vlm_stop_matcher_finish(matcher, &text, &length);
  CHECK_INT_EQ(length, 2);
  CHECK(memcmp(text, "ST", 2) == 0);
  CHECK_INT_EQ(vlm_stop_matcher_matched(matcher), -1);
  vlm_stop_matcher_release(matcher);
}

TEST_MAIN(TEST(byte_level_bpe_with_added_tokens), TEST(sentencepiece_bpe_with_byte_fallback),
          TEST(chat_flows_add_special_tokens_as_transformers_does), TEST(model_type_picks_the_tokenizer_class),
          TEST(normalizers_and_pre_tokenizers), TEST(wordpiece_model),
          TEST(malformed_files_give_clear_errors), TEST(invalid_utf8_is_replaced),
          TEST(streaming_waits_for_whole_characters), TEST(stop_strings_across_pieces))
