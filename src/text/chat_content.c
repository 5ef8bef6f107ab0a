/* vLLM's "string" content format for a message with media parts
 * (vllm/entrypoints/chat_utils.py: _parse_chat_message_content_parts with
 * content_format "string", then _get_full_multimodal_text_prompt without
 * interleave_strings). A template that prints message['content'] (Phi-4's
 * '<|user|>' + message['content'] + '<|end|>') has no place for a list of
 * parts, so the message reaches it as one string:
 *
 *   text     = the text parts joined with "\n"
 *   for each distinct placeholder, in the order its kind first appears
 *   among the parts: missing = (parts of that kind) - text.count(placeholder),
 *   refused when negative
 *   content  = "\n".join(missing placeholders + [text]), the text left out
 *              when empty
 *
 * so a placeholder the user wrote in the text stays where it is and the
 * others go first, one per line. See chat_content.h. */
#include "text/chat_content.h"

#include <string.h>

/* Which kind a part is: 0 text, 1 image, 2 audio, -1 anything else. */
static int part_kind(const vlm_json_value *part) {
  const vlm_json_value *type = vlm_json_object_get(part, "type");
  if (vlm_json_string_equals(type, "text")) return 0;
  if (vlm_json_string_equals(type, "image") || vlm_json_string_equals(type, "image_url")) return 1;
  if (vlm_json_string_equals(type, "audio") || vlm_json_string_equals(type, "input_audio") ||
      vlm_json_string_equals(type, "audio_url"))
    return 2;
  return -1;
}

/* Non-overlapping occurrences, as Python's str.count. */
static int64_t count_in(const char *text, size_t length, const char *pattern) {
  size_t pattern_length = strlen(pattern);
  int64_t count = 0;
  if (!pattern_length) return 0;
  for (size_t at = 0; at + pattern_length <= length;) {
    if (memcmp(text + at, pattern, pattern_length) == 0) {
      count++;
      at += pattern_length;
    } else {
      at++;
    }
  }
  return count;
}

/* Whether the parts can be made one string: all text or media with a
 * placeholder, and at least one media part. */
static bool convertible(const vlm_json_value *content, const chat_content_placeholders *placeholders) {
  bool media = false;
  for (size_t i = 0; i < content->as.array.count; i++) {
    const vlm_json_value *part = &content->as.array.items[i];
    int kind = part->type == VLM_JSON_OBJECT ? part_kind(part) : -1;
    if (kind == 0) {
      const vlm_json_value *text = vlm_json_object_get(part, "text");
      if (!text || text->type != VLM_JSON_STRING) return false;
      continue;
    }
    const char *placeholder = kind == 1 ? placeholders->image : kind == 2 ? placeholders->audio : NULL;
    if (!placeholder || !placeholder[0]) return false;
    media = true;
  }
  return media;
}

vlm_status chat_content_parts_as_string(vlm_arena *arena, const vlm_json_value *content,
                                        const chat_content_placeholders *placeholders, vlm_json_value *out,
                                        bool *out_converted) {
  *out = *content;
  *out_converted = false;
  if (!placeholders || content->type != VLM_JSON_ARRAY || !convertible(content, placeholders)) return VLM_OK;
  vlm_string_builder text = {0};
  bool first = true;
  /* The kinds in the order they first appear, with their part counts. */
  const char *order[2] = {NULL, NULL};
  int64_t counts[2] = {0, 0};
  int kinds = 0;
  for (size_t i = 0; i < content->as.array.count; i++) {
    const vlm_json_value *part = &content->as.array.items[i];
    int kind = part_kind(part);
    if (kind == 0) {
      const vlm_json_value *value = vlm_json_object_get(part, "text");
      if (!first) vlm_sb_append_literal(&text, "\n");
      vlm_sb_append(&text, value->as.string.chars, value->as.string.length);
      first = false;
      continue;
    }
    const char *placeholder = kind == 1 ? placeholders->image : placeholders->audio;
    int slot = 0;
    while (slot < kinds && strcmp(order[slot], placeholder) != 0) slot++;
    if (slot == kinds) order[kinds++] = placeholder; /* a kind sharing another's text counts with it */
    counts[slot]++;
  }
  vlm_string_builder joined = {0};
  vlm_status status = text.failed ? VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory preparing messages") : VLM_OK;
  for (int k = 0; k < kinds && !status; k++) {
    int64_t missing = counts[k] - count_in(text.data ? text.data : "", text.length, order[k]);
    if (missing < 0) {
      status = VLM_ERROR(INVALID_ARGUMENT, "Found more '%s' placeholders in input prompt than actual multimodal "
                                           "data items.", order[k]);
      break;
    }
    for (int64_t m = 0; m < missing; m++) {
      if (joined.length) vlm_sb_append_literal(&joined, "\n");
      vlm_sb_append(&joined, order[k], strlen(order[k]));
    }
  }
  if (!status && text.length) {
    if (joined.length) vlm_sb_append_literal(&joined, "\n");
    vlm_sb_append(&joined, text.data, text.length);
  }
  if (!status && joined.failed) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory preparing messages");
  if (!status) {
    char *copy = vlm_arena_strndup(arena, joined.data ? joined.data : "", joined.length);
    if (!copy) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory preparing messages");
    else {
      *out = (vlm_json_value){.type = VLM_JSON_STRING};
      out->as.string.chars = copy;
      out->as.string.length = joined.length;
      *out_converted = true;
    }
  }
  vlm_sb_release(&text);
  vlm_sb_release(&joined);
  return status;
}
