/* A request's prompt as the family's Transformers processor builds it
 * (SPEC 2.3): the chat template rendered (or the raw prompt), each media
 * placeholder in the text replaced by the family's expansion (what e.g.
 * LlavaProcessor and Qwen2VLProcessor do to the text before tokenizing),
 * the result tokenized, then the RoPE positions where the family's are
 * not consecutive (M-RoPE), which rows take encoder features and which
 * attend to each other both ways in prefill (the family's attention
 * blocks: Gemma 3's images).
 *
 * The logical ids (placeholders included) are what usage counts, what the
 * sampler's penalties and stop matching see, and what prefill feeds (the
 * backend replaces the feature rows' embeddings). */
#ifndef VLM_ENGINE_PROMPT_H
#define VLM_ENGINE_PROMPT_H

#include <stdbool.h>
#include <stdint.h>

#include "media/media_item.h"
#include "models/model.h"
#include "vlm/chat_template.h"
#include "vlm/tokenizer.h"

typedef struct engine_prompt {
  int32_t *ids;                   /* [count] the expanded prompt */
  int64_t count;
  int64_t *positions;             /* [axes, count] or NULL: consecutive */
  int position_axes;
  int64_t position_delta;         /* decode RoPE position = slot length + delta */
  uint8_t *feature_rows;          /* [count]: 1 where the row takes the next feature row; NULL: none */
  int64_t feature_row_count;
  /* [count]: the row's bidirectional block (>= 0) or -1 (causal only);
   * NULL when no row has one (vlm_family_attention_blocks_fn). */
  int32_t *attention_blocks;
  int64_t *attention_reach;       /* [count] with blocks: the last row each row sees (vlm_attention_blocks_reach) */
  int64_t media_tokens[VLM_MEDIA_KIND_COUNT];
  /* [item_count]: the source items in the order their placeholders take
   * in the prompt (features are laid out in that order); NULL: none. */
  int *item_order;
} engine_prompt;

typedef struct engine_prompt_source {
  const char *messages_json;      /* rendered with the chat template, or */
  const char *raw_prompt;         /* tokenized with the tokenizer's special tokens */
  /* Each kind's items in the order of that kind's placeholders (images and
   * audio clips may come in any order relative to each other). */
  const vlm_media_item *items;
  int item_count;
  /* raw_prompt is a chat prompt already rendered (vlm compare's golden
   * prompts): it gets special tokens as the family's chat flow adds them
   * (vlm_tokenizer_encode_chat), not as a raw prompt does. */
  bool raw_prompt_is_rendered_chat;
  /* The rendered chat prompt may not exceed this many bytes (0: no bound
   * but the template's own): rendering stops there, fails, and sets
   * *prompt_limit_reached (vlm_chat_template_options.max_prompt_bytes). */
  size_t max_prompt_bytes;
  bool *prompt_limit_reached;
  /* The prompt may not have more than this many ids (0: no bound):
   * tokenizing stops as soon as it has more (vlm_tokenizer_encode_bounded),
   * fails, and sets *token_limit_reached. */
  size_t max_ids;
  bool *token_limit_reached;
  /* Only the text's ids (items must be none): each placeholder stays one
   * id, and no positions are computed (admission before decoding). */
  bool ids_only;
  /* Chat only (vlm_engine_request_options): extra template variables, no
   * assistant header, the last message left open. */
  const char *chat_template_kwargs_json;
  bool no_generation_prompt;
  bool continue_final_message;
  /* Instead of a text: the prompt's ids as given (/v1/completions' token
   * prompts), nothing added; no media. */
  const int32_t *prompt_ids;
  int64_t prompt_id_count;
} engine_prompt_source;

vlm_status engine_prompt_build(const vlm_model *model, const vlm_tokenizer *tokenizer,
                               const vlm_chat_template *chat_template, const engine_prompt_source *source,
                               engine_prompt *out);
void engine_prompt_release(engine_prompt *prompt);

#endif
