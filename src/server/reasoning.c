/* Reasoning split from the answer; see reasoning.h. */
#include "server/reasoning.h"

#include <string.h>

#define START_TAG "<think>"
#define END_TAG "</think>"

bool reasoning_kind_parse(const char *name, reasoning_kind *out) {
  if (!strcmp(name, "qwen3")) *out = REASONING_QWEN3;
  else if (!strcmp(name, "deepseek_r1")) *out = REASONING_DEEPSEEK_R1;
  else if (!strcmp(name, "none")) *out = REASONING_OFF;
  else return false;
  return true;
}

const char *reasoning_kind_name(reasoning_kind kind) {
  switch (kind) {
    case REASONING_QWEN3: return "qwen3";
    case REASONING_DEEPSEEK_R1: return "deepseek_r1";
    case REASONING_OFF: break;
  }
  return "none";
}

reasoning_kind reasoning_kind_detect(const char *template_text) {
  return template_text && strstr(template_text, START_TAG) && strstr(template_text, END_TAG) ? REASONING_QWEN3
                                                                                             : REASONING_OFF;
}

static bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

/* Whether `text` (trailing whitespace ignored) ends with `tag`. */
static bool ends_with_tag(const char *text, const char *tag) {
  size_t length = strlen(text), tag_length = strlen(tag);
  while (length && is_space(text[length - 1])) length--;
  return length >= tag_length && !memcmp(text + length - tag_length, tag, tag_length);
}

void reasoning_split_init(reasoning_split *split, reasoning_kind kind, const char *prompt_tail) {
  memset(split, 0, sizeof(*split));
  split->start_implied = kind == REASONING_DEEPSEEK_R1;
  split->state = REASONING_AT_START;
  if (prompt_tail && ends_with_tag(prompt_tail, START_TAG)) split->state = REASONING_THINKING, split->thought = true;
  else if (prompt_tail && ends_with_tag(prompt_tail, END_TAG)) split->state = REASONING_ANSWERING;
}

/* The length of the longest suffix of text[0..length) that is a proper
 * prefix of `tag` (text that may become the tag with what comes next). */
static size_t partial_tag_suffix(const char *text, size_t length, const char *tag) {
  size_t tag_length = strlen(tag);
  for (size_t keep = tag_length - 1; keep > 0; keep--)
    if (keep <= length && !memcmp(text + length - keep, tag, keep)) return keep;
  return 0;
}

static const char *find_bytes(const char *text, size_t length, const char *needle) {
  size_t needle_length = strlen(needle);
  for (size_t i = 0; i + needle_length <= length; i++)
    if (!memcmp(text + i, needle, needle_length)) return text + i;
  return NULL;
}

/* Drops the first `used` bytes of split->held. */
static void consume(reasoning_split *split, size_t used) {
  if (!used) return;
  memmove(split->held.data, split->held.data + used, split->held.length - used);
  split->held.length -= used;
}

/* Runs the state machine over split->held, leaving in it only what may
 * still be part of a tag (nothing when `final`). */
static void advance(reasoning_split *split, vlm_string_builder *reasoning, vlm_string_builder *content, bool final) {
  for (bool changed = true; changed;) {
    changed = false;
    const char *text = split->held.data;
    size_t length = split->held.length, used = 0;
    if (!text) return;
    if (split->state == REASONING_AT_START) {
      size_t lead = 0, tag_length = strlen(START_TAG);
      while (lead < length && is_space(text[lead])) lead++;
      size_t rest = length - lead;
      if (rest >= tag_length && !memcmp(text + lead, START_TAG, tag_length)) {
        used = lead + tag_length; /* whitespace before the tag is dropped with it */
        split->state = REASONING_THINKING;
        split->thought = true;
      } else if (!final && rest < tag_length && !memcmp(text + lead, START_TAG, rest)) {
        return; /* may still become the tag */
      } else {
        split->state = split->start_implied ? REASONING_THINKING : REASONING_ANSWERING;
        split->thought = split->start_implied;
      }
      changed = true;
    } else if (split->state == REASONING_THINKING) {
      const char *end = find_bytes(text, length, END_TAG);
      if (end) {
        vlm_sb_append(reasoning, text, (size_t)(end - text));
        used = (size_t)(end - text) + strlen(END_TAG);
        split->state = REASONING_ANSWERING;
        changed = true;
      } else {
        used = length - (final ? 0 : partial_tag_suffix(text, length, END_TAG));
        vlm_sb_append(reasoning, text, used);
      }
    } else {
      vlm_sb_append(content, text, length);
      used = length;
    }
    consume(split, used);
  }
}

void reasoning_split_push(reasoning_split *split, const char *text, size_t length, vlm_string_builder *reasoning,
                          vlm_string_builder *content) {
  if (length) vlm_sb_append(&split->held, text, length);
  advance(split, reasoning, content, false);
}

void reasoning_split_finish(reasoning_split *split, vlm_string_builder *reasoning, vlm_string_builder *content) {
  advance(split, reasoning, content, true);
}

void reasoning_split_release(reasoning_split *split) { vlm_sb_release(&split->held); }
