/* Regular expressions for Split pre-tokenizers and Replace normalizers.
 *
 * Hugging Face `tokenizers` compiles these patterns with Oniguruma (the Rust
 * `onig` crate, Ruby syntax), so we use the same engine from Debian's
 * libonig: \p{L}, (?i:...), (?!\S) and every other construct in these files
 * then mean exactly what they mean to Hugging Face. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <oniguruma.h>

#include "core/status.h"
#include "text/tokenizer_internal.h"

struct tokenizer_regex {
  OnigRegex regex;
};

static pthread_once_t oniguruma_once = PTHREAD_ONCE_INIT;

static void oniguruma_initialize(void) {
  OnigEncoding encodings[1] = {ONIG_ENCODING_UTF8};
  onig_initialize(encodings, 1);
}

vlm_status tokenizer_regex_compile(const char *pattern, size_t length,
                                   tokenizer_regex **out_regex) {
  *out_regex = NULL;
  pthread_once(&oniguruma_once, oniguruma_initialize);
  tokenizer_regex *regex = calloc(1, sizeof(*regex));
  if (!regex) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for a regex");
  OnigErrorInfo error_info;
  const OnigUChar *start = (const OnigUChar *)pattern;
  int result = onig_new(&regex->regex, start, start + length, ONIG_OPTION_NONE,
                        ONIG_ENCODING_UTF8, ONIG_SYNTAX_RUBY, &error_info);
  if (result != ONIG_NORMAL) {
    OnigUChar message[ONIG_MAX_ERROR_MESSAGE_LEN];
    onig_error_code_to_str(message, result, &error_info);
    free(regex);
    return VLM_ERROR(INVALID_ARGUMENT, "invalid regex /%.*s/: %s",
                     (int)(length > 200 ? 200 : length), pattern, (const char *)message);
  }
  *out_regex = regex;
  return VLM_OK;
}

void tokenizer_regex_release(tokenizer_regex *regex) {
  if (!regex) return;
  onig_free(regex->regex);
  free(regex);
}

static bool match_list_push(match_list *list, size_t start, size_t end) {
  if (list->count == list->capacity) {
    size_t capacity = list->capacity ? list->capacity * 2 : 16;
    match_range *grown = realloc(list->items, capacity * sizeof(*grown));
    if (!grown) return false;
    list->items = grown;
    list->capacity = capacity;
  }
  list->items[list->count++] = (match_range){start, end};
  return true;
}

void match_list_release(match_list *list) {
  free(list->items);
  memset(list, 0, sizeof(*list));
}

/* Like the onig crate's find_iter: an empty match right where the previous
 * match ended is skipped by advancing one character. Resumable: up to
 * `max` matches (0: all) per call, the cursor remembering where the scan
 * is, so a caller can stop early and the matches so far are the first
 * ones of the whole text's (each search sees the whole text). */
vlm_status tokenizer_regex_find_some(const tokenizer_regex *regex, const char *text, size_t length,
                                     regex_cursor *cursor, size_t max, match_list *out) {
  out->count = 0;
  if (cursor->done) return VLM_OK;
  OnigRegion *region = onig_region_new();
  if (!region) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for a regex match");
  const OnigUChar *begin = (const OnigUChar *)text, *end = begin + length;
  vlm_status status = VLM_OK;
  while (!max || out->count < max) {
    if (cursor->position > length) {
      cursor->done = true;
      break;
    }
    onig_region_clear(region);
    int found = onig_search(regex->regex, begin, end, begin + cursor->position, end, region, ONIG_OPTION_NONE);
    if (found == ONIG_MISMATCH) {
      cursor->done = true;
      break;
    }
    if (found < 0) {
      status = VLM_ERROR(INTERNAL, "regex search failed (code %d)", found);
      break;
    }
    size_t match_start = (size_t)region->beg[0], match_end = (size_t)region->end[0];
    if (match_start == match_end && cursor->have_last && cursor->last_match_end == match_end) {
      uint32_t unused;
      cursor->position += cursor->position < length
                              ? utf8_decode(text + cursor->position, length - cursor->position, &unused) : 1;
      continue;
    }
    cursor->position = match_end;
    cursor->have_last = true;
    cursor->last_match_end = match_end;
    if (!match_list_push(out, match_start, match_end)) {
      status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for regex matches");
      break;
    }
    if (match_start == match_end) {
      /* Advance past the empty match so the next search makes progress. */
      uint32_t unused;
      if (cursor->position >= length) {
        cursor->done = true;
        break;
      }
      cursor->position += utf8_decode(text + cursor->position, length - cursor->position, &unused);
    }
  }
  onig_region_free(region, 1);
  return status;
}

vlm_status tokenizer_regex_find_all(const tokenizer_regex *regex, const char *text,
                                    size_t length, match_list *out) {
  regex_cursor cursor = {0};
  return tokenizer_regex_find_some(regex, text, length, &cursor, 0, out);
}

vlm_status literal_find_all(const char *needle, size_t needle_length, const char *text,
                            size_t length, match_list *out) {
  out->count = 0;
  if (needle_length == 0) return VLM_OK;
  size_t position = 0;
  while (position + needle_length <= length) {
    const char *found = memmem(text + position, length - position, needle, needle_length);
    if (!found) break;
    size_t start = (size_t)(found - text);
    if (!match_list_push(out, start, start + needle_length))
      return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for matches");
    position = start + needle_length;
  }
  return VLM_OK;
}
