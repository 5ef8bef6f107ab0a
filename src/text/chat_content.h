/* A message's content parts as the one string a template that reads
 * content as a string gets (vLLM's "string" content format with media,
 * chat_content.c); used by vlm_chat_template_render. */
#ifndef VLM_TEXT_CHAT_CONTENT_H
#define VLM_TEXT_CHAT_CONTENT_H

#include "core/alloc.h"
#include "core/status.h"
#include "io/json.h"

/* The text one media part stands for, per kind; NULL: the kind has none. */
typedef struct chat_content_placeholders {
  const char *image;
  const char *audio;
} chat_content_placeholders;

/* When `content` is a list of parts holding at least one image or audio
 * part and only text parts besides, each media part with a placeholder:
 * *out is the string vLLM makes of it and *out_converted is set. Otherwise
 * *out is `content` as given. The string lives in `arena`. Fails with
 * INVALID_ARGUMENT when the text already holds more of a placeholder than
 * the message has parts of its kind. */
vlm_status chat_content_parts_as_string(vlm_arena *arena, const vlm_json_value *content,
                                        const chat_content_placeholders *placeholders, vlm_json_value *out,
                                        bool *out_converted);

#endif
