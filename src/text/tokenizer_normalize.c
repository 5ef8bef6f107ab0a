/* Normalizers: Unicode normalization forms through utf8proc, and the simple
 * string rewrites of `tokenizers` (Prepend, Replace, Lowercase, Strip,
 * StripAccents), each applied to a whole piece of text. */
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "core/status.h"
#include "text/tokenizer_internal.h"

static vlm_status out_of_memory(void) {
  return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory normalizing text");
}

static bool all_ascii(const char *text, size_t length) {
  unsigned char any = 0;
  for (size_t i = 0; i < length; i++) any |= (unsigned char)text[i];
  return any < 0x80;
}

static vlm_status unicode_form(const char *text, size_t length, int options, byte_buffer *out) {
  if (length == 0) return VLM_OK;
  /* Every normalization form maps ASCII to itself (no ASCII character has
   * a decomposition or composes with another): a copy, without utf8proc's
   * four bytes per character of working space. */
  if (all_ascii(text, length)) return byte_buffer_append(out, text, length) ? VLM_OK : out_of_memory();
  /* Nor does any form act across two ASCII characters (both are starters
   * of combining class 0, and no composition joins two of them): the text
   * is normalized span by span between such pairs, ASCII spans copied, so
   * utf8proc's working space is a span's, not the text's. */
  size_t position = 0;
  while (position < length) {
    size_t run = position;
    while (run < length && (unsigned char)text[run] < 0x80) run++;
    /* The ASCII character before a non-ASCII one may be its base (e + a
     * combining accent): it goes with the span. */
    size_t first = run < length && run > position ? run - 1 : run;
    if (!byte_buffer_append(out, text + position, first - position)) return out_of_memory();
    if (run == length) break;
    size_t last = run + 1;
    while (last < length && !((unsigned char)text[last - 1] < 0x80 && (unsigned char)text[last] < 0x80)) last++;
    utf8proc_uint8_t *mapped = NULL;
    utf8proc_ssize_t mapped_length = utf8proc_map((const utf8proc_uint8_t *)text + first,
                                                  (utf8proc_ssize_t)(last - first), &mapped,
                                                  (utf8proc_option_t)(UTF8PROC_STABLE | options));
    if (mapped_length < 0) return VLM_ERROR(INTERNAL, "utf8proc: %s", utf8proc_errmsg(mapped_length));
    bool appended = byte_buffer_append(out, (const char *)mapped, (size_t)mapped_length);
    free(mapped);
    if (!appended) return out_of_memory();
    position = last;
  }
  return VLM_OK;
}

/* Per character, like Rust's char::to_lowercase: U+0130 is the one
 * unconditional mapping to two characters. */
static vlm_status lowercase(const char *text, size_t length, byte_buffer *out) {
  for (size_t position = 0; position < length;) {
    uint32_t codepoint;
    position += utf8_decode(text + position, length - position, &codepoint);
    char encoded[8];
    size_t encoded_length;
    if (codepoint == 0x130) {
      memcpy(encoded, "i\xCC\x87", 3);
      encoded_length = 3;
    } else {
      encoded_length = utf8_encode((uint32_t)utf8proc_tolower((utf8proc_int32_t)codepoint), encoded);
    }
    if (!byte_buffer_append(out, encoded, encoded_length)) return out_of_memory();
  }
  return VLM_OK;
}

static vlm_status strip(const tokenizer_normalizer *normalizer, const char *text, size_t length,
                        byte_buffer *out, bool *dropped_start) {
  size_t start = 0, end = length;
  while (normalizer->strip_left && start < end) {
    uint32_t codepoint;
    size_t width = utf8_decode(text + start, end - start, &codepoint);
    if (!unicode_is_whitespace(codepoint)) break;
    start += width;
  }
  while (normalizer->strip_right && end > start) {
    size_t back = end - 1;
    while (back > start && ((unsigned char)text[back] & 0xC0) == 0x80) back--;
    uint32_t codepoint;
    utf8_decode(text + back, end - back, &codepoint);
    if (!unicode_is_whitespace(codepoint)) break;
    end = back;
  }
  if (start > 0 && dropped_start) *dropped_start = true;
  return byte_buffer_append(out, text + start, end - start) ? VLM_OK : out_of_memory();
}

static vlm_status strip_accents(const char *text, size_t length, byte_buffer *out,
                                bool *dropped_start) {
  for (size_t position = 0; position < length;) {
    uint32_t codepoint;
    size_t width = utf8_decode(text + position, length - position, &codepoint);
    utf8proc_category_t category = utf8proc_category((utf8proc_int32_t)codepoint);
    bool mark = category == UTF8PROC_CATEGORY_MN || category == UTF8PROC_CATEGORY_MC ||
                category == UTF8PROC_CATEGORY_ME;
    if (mark && out->length == 0 && dropped_start) *dropped_start = true;
    if (!mark && !byte_buffer_append(out, text + position, width)) return out_of_memory();
    position += width;
  }
  return VLM_OK;
}

static vlm_status replace(const tokenizer_normalizer *normalizer, const char *text, size_t length,
                          byte_buffer *out) {
  match_list matches = {0};
  vlm_status status =
      normalizer->pattern.regex
          ? tokenizer_regex_find_all(normalizer->pattern.regex, text, length, &matches)
          : literal_find_all(normalizer->pattern.literal, normalizer->pattern.literal_length, text,
                             length, &matches);
  size_t position = 0;
  for (size_t i = 0; !status && i < matches.count; i++) {
    if (!byte_buffer_append(out, text + position, matches.items[i].start - position) ||
        !byte_buffer_append(out, normalizer->content, normalizer->content_length))
      status = out_of_memory();
    position = matches.items[i].end;
  }
  if (!status && !byte_buffer_append(out, text + position, length - position))
    status = out_of_memory();
  match_list_release(&matches);
  return status;
}

static vlm_status apply_one(const tokenizer_normalizer *normalizer, const char *text,
                            size_t length, byte_buffer *out, bool *dropped_start) {
  out->length = 0;
  if (!byte_buffer_append(out, "", 0)) return out_of_memory();
  switch (normalizer->kind) {
    case NORMALIZER_NFC: return unicode_form(text, length, UTF8PROC_COMPOSE, out);
    case NORMALIZER_NFD: return unicode_form(text, length, UTF8PROC_DECOMPOSE, out);
    case NORMALIZER_NFKC:
      return unicode_form(text, length, UTF8PROC_COMPOSE | UTF8PROC_COMPAT, out);
    case NORMALIZER_NFKD:
      return unicode_form(text, length, UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT, out);
    case NORMALIZER_LOWERCASE: return lowercase(text, length, out);
    case NORMALIZER_PREPEND:
      /* Only non-empty text gets the prefix. */
      if (length && !byte_buffer_append(out, normalizer->content, normalizer->content_length))
        return out_of_memory();
      return byte_buffer_append(out, text, length) ? VLM_OK : out_of_memory();
    case NORMALIZER_REPLACE: return replace(normalizer, text, length, out);
    case NORMALIZER_STRIP: return strip(normalizer, text, length, out, dropped_start);
    case NORMALIZER_STRIP_ACCENTS: return strip_accents(text, length, out, dropped_start);
    case NORMALIZER_SEQUENCE: break;
  }
  return VLM_ERROR(INTERNAL, "normalizer kind %d", (int)normalizer->kind);
}

vlm_status normalizer_apply(const tokenizer_normalizer *normalizer, const char *text,
                            size_t length, byte_buffer *out, bool *dropped_start) {
  if (normalizer->kind != NORMALIZER_SEQUENCE)
    return apply_one(normalizer, text, length, out, dropped_start);
  /* A sequence ping-pongs between the output and a scratch buffer. */
  out->length = 0;
  if (!byte_buffer_append(out, text, length)) return out_of_memory();
  byte_buffer scratch = {0};
  vlm_status status = VLM_OK;
  for (size_t i = 0; i < normalizer->child_count && !status; i++) {
    status = normalizer_apply(&normalizer->children[i], out->data, out->length, &scratch,
                              dropped_start);
    byte_buffer swap = *out;
    *out = scratch;
    scratch = swap;
  }
  byte_buffer_release(&scratch);
  return status;
}
