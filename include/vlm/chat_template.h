/*
 * Chat templates: the model's own Jinja template turned into a prompt, byte
 * for byte as Transformers' `apply_chat_template(..., tokenize=False)`
 * renders it (transformers 5.23.0, jinja2 3.1.6).
 *
 * The template comes from the model directory: `chat_template.jinja`, else
 * `chat_template.json` ({"chat_template": "..."}), else the `chat_template`
 * key of `tokenizer_config.json` (a string, or a list of {name, template}
 * of which "default" is used). The special tokens bos_token, eos_token,
 * unk_token, sep_token, pad_token, cls_token and mask_token are read from
 * tokenizer_config.json (a string or an {"content": ...} object) and passed
 * to the template as Transformers does.
 *
 * The template is parsed when it is loaded: a construct outside the
 * supported Jinja subset is an error then, never a wrong prompt later.
 * Errors name the template source with line and column. Rendering is
 * bounded (output size, loop iterations, call depth) because templates
 * are untrusted input. A loaded template is immutable and may be rendered
 * from several threads at once.
 */
#ifndef VLM_CHAT_TEMPLATE_H
#define VLM_CHAT_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vlm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vlm_chat_template vlm_chat_template;

typedef struct vlm_chat_template_options {
  /* Appends the header that starts the assistant's reply. */
  bool add_generation_prompt;
  /* JSON array of tool schemas, exposed as `tools` (NULL: tools is none). */
  const char *tools_json;
  /* Transformers' continue_final_message=True: the final message is
   * left open for the model to continue (rendered with a tag appended to
   * its content, or to its last text part, and the prompt cut where the
   * tag starts). Errors as Transformers raises them (INVALID_ARGUMENT).
   * Use it with add_generation_prompt false. */
  bool continue_final_message;
  /* JSON object of further template variables, e.g. {"enable_thinking":
   * false}; they override the special tokens (NULL: none). */
  const char *extra_variables_json;
  /* Seconds since the epoch that strftime_now() formats in local time;
   * 0 means "now" (tests pin it for reproducible prompts). */
  int64_t fixed_time;
  /* Upper bound on all the text rendering writes (the prompt and what the
   * template captures in macros and set blocks) in bytes; 0: 64 MiB. */
  size_t max_output_bytes;
  /* Optional early refusal: the rendered prompt itself may not exceed this
   * many bytes (0: no limit but max_output_bytes). Rendering stops as soon
   * as it would, fails with OUT_OF_RANGE "the rendered prompt exceeds N
   * bytes" and sets *prompt_limit_reached when that is not NULL, so a
   * caller can refuse a prompt too long for its context without rendering
   * (or tokenizing) all of it. */
  size_t max_prompt_bytes;
  bool *prompt_limit_reached;
  /* A message whose content is a string gets it as one text part
   * ([{"type": "text", "text": S}]), as `transformers serve` hands a
   * multimodal model's processor its messages: multimodal templates (LLaVA's)
   * read content as parts and render a plain string as nothing. The engine
   * sets it for the processor-flow families. */
  bool string_content_as_parts;
  /* For a template that reads content as a string (VLM_CHAT_CONTENT_STRING,
   * below): the text one image (audio) part stands for, NULL when the
   * model has none. A message whose content is a list of text parts and
   * media parts of kinds that have one is then rendered with it as one
   * string, as vLLM's "string" content format makes it: each placeholder
   * the text does not already hold on a line of its own, then the text
   * parts joined with newlines (a text holding more of a placeholder than
   * the message has parts of its kind fails, INVALID_ARGUMENT). Lists
   * without media, and with other parts, are left as given (Transformers
   * renders them as given). The engine sets them from the family's
   * placeholders. */
  const char *image_placeholder;
  const char *audio_placeholder;
} vlm_chat_template_options;

/* Loads and parses the chat template of a model directory. Fails with
 * VLM_STATUS_NOT_FOUND ("... has no chat template") when there is none. */
vlm_status vlm_chat_template_load(const char *model_dir, vlm_chat_template **out_template);

/* Parses template text directly; bos/eos may be NULL (then undefined in the
 * template). `source_name` prefixes error messages. */
vlm_status vlm_chat_template_create(const char *template_text, size_t length,
                                    const char *bos_token, const char *eos_token,
                                    const char *source_name,
                                    vlm_chat_template **out_template);

/* Renders a conversation: `messages_json` is a JSON array of messages
 * ({"role": ..., "content": string or list of parts such as {"type":
 * "text", "text": ...}, {"type": "image"}, {"type": "audio"}, {"type":
 * "video"}}), or an object {"messages": [...], "tools": [...]}. As in
 * Transformers, message keys whose value is null are dropped and reasoning
 * fields (reasoning_content, thinking, reasoning) are aliased. On success
 * *out_prompt is malloc'd and NUL-terminated (free() it); *out_length may be
 * NULL. A template's raise_exception("...") fails with that message.
 * Failures that depend only on the conversation and the template (a
 * raise_exception, a type error, the output, step, memory or call-depth
 * bounds, an arithmetic overflow) are VLM_STATUS_INVALID_ARGUMENT: they
 * are the same on every retry, so a server answers them as a bad request. */
vlm_status vlm_chat_template_render(const vlm_chat_template *chat_template,
                                    const char *messages_json, size_t messages_length,
                                    const vlm_chat_template_options *options,
                                    char **out_prompt, size_t *out_length);

/* How the template reads a message's content, detected from its syntax
 * tree as vLLM does (resolve_chat_template_content_format, "auto"): OPENAI
 * when some loop iterates a message's content (`{% for part in
 * message['content'] %}`, also through filters, tests and slices, and
 * through variables assigned from `messages`), STRING otherwise. A server
 * should hand STRING templates content as one string and OPENAI templates
 * a list of parts, or the template drops (or garbles) the text: LLaVA's
 * template renders "content": "Hi" as nothing at all. */
typedef enum vlm_chat_content_format {
  VLM_CHAT_CONTENT_STRING,
  VLM_CHAT_CONTENT_OPENAI, /* [{"type": "text", "text": ...}, {"type": "image"}, ...] */
} vlm_chat_content_format;

vlm_chat_content_format vlm_chat_template_content_format(const vlm_chat_template *chat_template);

/* The template text and where it came from (e.g. ".../tokenizer_config.json"). */
const char *vlm_chat_template_text(const vlm_chat_template *chat_template);
const char *vlm_chat_template_source(const vlm_chat_template *chat_template);

void vlm_chat_template_release(vlm_chat_template *chat_template);

#ifdef __cplusplus
}
#endif

#endif /* VLM_CHAT_TEMPLATE_H */
