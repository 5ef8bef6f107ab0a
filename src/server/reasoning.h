/* Reasoning split from the answer, as vLLM's reasoning parsers do for
 * templates that think in <think>...</think> (Qwen3, Qwen3-VL thinking
 * checkpoints, DeepSeek-R1 style): the text between the tags becomes the
 * message's reasoning_content (streamed as delta.reasoning_content), the
 * rest its content; the tags themselves are dropped.
 *
 * Where the reasoning starts:
 *   - the prompt ends with the start tag (a template that opens the
 *     thinking block itself, as Qwen3-VL thinking's and DeepSeek-R1's do):
 *     the completion starts inside it;
 *   - the prompt ends with the end tag (Qwen3 with enable_thinking false):
 *     there is no reasoning, everything is content;
 *   - otherwise (Qwen3 with thinking on: the model writes the start tag):
 *     reasoning when the completion starts with the start tag (leading
 *     whitespace allowed), else content (vLLM's Qwen3 parser when no start
 *     tag appears). The "deepseek_r1" parser instead treats a completion
 *     without the start tag as reasoning until the end tag, as vLLM's
 *     DeepSeek-R1 parser does.
 * Reasoning never closed stays reasoning. As in vLLM, an answer that
 * entered a thinking block has reasoning_content (maybe "") and content
 * null when nothing follows the block; one that did not has no
 * reasoning_content and its whole text as content. Streamed pieces concatenate to
 * exactly the whole-text split: one state machine serves both. */
#ifndef VLM_SERVER_REASONING_H
#define VLM_SERVER_REASONING_H

#include <stdbool.h>
#include <stddef.h>

#include "io/json.h"

typedef enum reasoning_kind {
  REASONING_OFF = 0,
  REASONING_QWEN3,        /* "qwen3" */
  REASONING_DEEPSEEK_R1,  /* "deepseek_r1" */
} reasoning_kind;

/* "qwen3", "deepseek_r1", "none" -> the kind; false for another name. */
bool reasoning_kind_parse(const char *name, reasoning_kind *out);
const char *reasoning_kind_name(reasoning_kind kind);
/* What "auto" picks for a chat template's source: QWEN3 when it writes both
 * tags, else OFF. */
reasoning_kind reasoning_kind_detect(const char *template_text);

typedef enum reasoning_state {
  REASONING_AT_START,     /* maybe a start tag to come */
  REASONING_THINKING,
  REASONING_ANSWERING,
} reasoning_state;

typedef struct reasoning_split {
  reasoning_state state;
  bool start_implied;          /* deepseek_r1: no start tag means thinking */
  bool thought;                /* a thinking block was entered (reasoning_content is set) */
  vlm_string_builder held;     /* text that may be the start of a tag */
} reasoning_split;

/* `prompt_tail`: the end of the rendered prompt (its last tokens' text),
 * for where the reasoning starts; may be NULL. */
void reasoning_split_init(reasoning_split *split, reasoning_kind kind, const char *prompt_tail);
/* Classifies new completion text, appending to *reasoning and *content
 * (either may receive nothing; text that may be a tag is held back). */
void reasoning_split_push(reasoning_split *split, const char *text, size_t length, vlm_string_builder *reasoning,
                          vlm_string_builder *content);
/* The held-back text, at the end of the completion. */
void reasoning_split_finish(reasoning_split *split, vlm_string_builder *reasoning, vlm_string_builder *content);
void reasoning_split_release(reasoning_split *split);

#endif
