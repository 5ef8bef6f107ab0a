/* The reasoning split (src/server/reasoning.c): where the reasoning starts
 * and ends, that streamed pieces concatenate to the whole-text split
 * whatever the piece boundaries, and the same over the Qwen3 tokenizer's
 * own tokens, decoded one by one as the server streams them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/reasoning.h"
#include "test.h"
#include "vlm/tokenizer.h"

typedef struct split_result {
  char *reasoning, *content;
} split_result;

/* Splits `text` fed in pieces of `step` bytes (0: at once). */
static split_result run_split(reasoning_kind kind, const char *prompt_tail, const char *text, size_t step) {
  reasoning_split split;
  reasoning_split_init(&split, kind, prompt_tail);
  vlm_string_builder reasoning = {0}, content = {0};
  size_t length = strlen(text);
  if (!step) step = length ? length : 1;
  for (size_t at = 0; at < length; at += step)
    reasoning_split_push(&split, text + at, at + step <= length ? step : length - at, &reasoning, &content);
  reasoning_split_finish(&split, &reasoning, &content);
  reasoning_split_release(&split);
  split_result result = {vlm_sb_finish(&reasoning), vlm_sb_finish(&content)};
  return result;
}

static void check_split_at(int line, reasoning_kind kind, const char *prompt_tail, const char *text,
                           const char *reasoning, const char *content) {
  for (size_t step = 0; step <= 3; step++) {
    split_result result = run_split(kind, prompt_tail, text, step);
    if (strcmp(result.reasoning, reasoning) || strcmp(result.content, content)) {
      fprintf(stderr, "  line %d: %s (step %zu): got reasoning '%s' content '%s', expected '%s' / '%s'\n", line,
              test_current, step, result.reasoning, result.content, reasoning, content);
      test_failures++;
    }
    free(result.reasoning);
    free(result.content);
  }
}
#define CHECK_SPLIT(kind, tail, text, reasoning, content) \
  check_split_at(__LINE__, (kind), (tail), (text), (reasoning), (content))

static void qwen3_model_writes_the_start_tag(void) {
  const char *tail = "<|im_start|>assistant\n";
  CHECK_SPLIT(REASONING_QWEN3, tail, "<think>\nPlan.\n</think>\n\nAnswer.", "\nPlan.\n", "\n\nAnswer.");
  CHECK_SPLIT(REASONING_QWEN3, tail, "\n<think>a</think>b", "a", "b");
  /* No start tag: all content (vLLM's Qwen3 parser), also a lone </think>. */
  CHECK_SPLIT(REASONING_QWEN3, tail, "Just an answer.", "", "Just an answer.");
  CHECK_SPLIT(REASONING_QWEN3, tail, "x</think>y", "", "x</think>y");
  CHECK_SPLIT(REASONING_QWEN3, tail, "<thin", "", "<thin");
  /* Never closed: stays reasoning; a later start tag is text. */
  CHECK_SPLIT(REASONING_QWEN3, tail, "<think>still thinking</thi", "still thinking</thi", "");
  CHECK_SPLIT(REASONING_QWEN3, tail, "<think>a</think>b<think>c</think>", "a", "b<think>c</think>");
  CHECK_SPLIT(REASONING_QWEN3, tail, "", "", "");
}

static void the_prompt_can_open_or_close_the_block(void) {
  /* Qwen3-VL thinking's template opens it: the completion starts inside. */
  CHECK_SPLIT(REASONING_QWEN3, "assistant\n<think>\n", "Plan.\n</think>\n\nAnswer.", "Plan.\n", "\n\nAnswer.");
  /* enable_thinking false closes it in the prompt: no reasoning at all. */
  CHECK_SPLIT(REASONING_QWEN3, "<think>\n\n</think>\n\n", "<think>x</think>y", "", "<think>x</think>y");
  /* deepseek_r1: reasoning until </think> even without a start tag. */
  CHECK_SPLIT(REASONING_DEEPSEEK_R1, "assistant\n", "Plan.</think>Answer.", "Plan.", "Answer.");
  CHECK_SPLIT(REASONING_DEEPSEEK_R1, "assistant\n", "<think>Plan.</think>Answer.", "Plan.", "Answer.");
  CHECK_SPLIT(REASONING_DEEPSEEK_R1, NULL, "no end", "no end", "");
}

static void parser_names(void) {
  reasoning_kind kind = REASONING_OFF;
  CHECK(reasoning_kind_parse("qwen3", &kind) && kind == REASONING_QWEN3);
  CHECK(reasoning_kind_parse("deepseek_r1", &kind) && kind == REASONING_DEEPSEEK_R1);
  CHECK(reasoning_kind_parse("none", &kind) && kind == REASONING_OFF);
  CHECK(!reasoning_kind_parse("granite", &kind));
  CHECK_INT_EQ(reasoning_kind_detect("{% if x %}<think>{{ r }}</think>{% endif %}"), REASONING_QWEN3);
  CHECK_INT_EQ(reasoning_kind_detect("{{ messages }}"), REASONING_OFF);
  CHECK_STR_EQ(reasoning_kind_name(REASONING_DEEPSEEK_R1), "deepseek_r1");
}

/* Token by token as the server streams a Qwen3 answer: <think> and
 * </think> are single added tokens there. */
static void qwen3_tokens_split_as_the_whole_text(void) {
  const char *fixtures = test_require_fixtures();
  if (!fixtures) return;
  char directory[1024];
  snprintf(directory, sizeof(directory), "%s/tokenizers/qwen3", fixtures);
  vlm_tokenizer *tokenizer = NULL;
  CHECK_OK(vlm_tokenizer_create(directory, NULL, &tokenizer));
  if (!tokenizer) return;
  const char *answer = "<think>\nThe user asks 2+2. That is 4, é.\n</think>\n\nIt is **4**.";
  vlm_token_ids ids = {0};
  CHECK_OK(vlm_tokenizer_encode(tokenizer, answer, strlen(answer), false, &ids));
  vlm_detokenizer *detokenizer = NULL;
  CHECK_OK(vlm_detokenizer_create(tokenizer, true, &detokenizer));
  reasoning_split split;
  reasoning_split_init(&split, REASONING_QWEN3, "<|im_start|>assistant\n");
  vlm_string_builder reasoning = {0}, content = {0};
  for (size_t i = 0; i < ids.count; i++) {
    const char *piece = NULL;
    size_t length = 0;
    CHECK_OK(vlm_detokenizer_push(detokenizer, ids.ids[i], &piece, &length));
    reasoning_split_push(&split, piece, length, &reasoning, &content);
  }
  const char *tail = NULL;
  size_t tail_length = 0;
  CHECK_OK(vlm_detokenizer_finish(detokenizer, &tail, &tail_length));
  reasoning_split_push(&split, tail, tail_length, &reasoning, &content);
  reasoning_split_finish(&split, &reasoning, &content);
  char *streamed_reasoning = vlm_sb_finish(&reasoning), *streamed_content = vlm_sb_finish(&content);
  CHECK_STR_EQ(streamed_reasoning, "\nThe user asks 2+2. That is 4, é.\n");
  CHECK_STR_EQ(streamed_content, "\n\nIt is **4**.");
  free(streamed_reasoning);
  free(streamed_content);
  reasoning_split_release(&split);
  vlm_detokenizer_release(detokenizer);
  vlm_token_ids_release(&ids);
  vlm_tokenizer_release(tokenizer);
}

TEST_MAIN(TEST(qwen3_model_writes_the_start_tag), TEST(the_prompt_can_open_or_close_the_block), TEST(parser_names),
          TEST(qwen3_tokens_split_as_the_whole_text))
