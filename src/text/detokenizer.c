/* Streaming detokenization and stop strings.
 *
 * The detokenizer is Hugging Face's DecodeStream: it keeps a small window of
 * recent ids, decodes the window with and without the newest id, and emits
 * the difference once it no longer ends in U+FFFD (an incomplete character:
 * the rest of its bytes are in tokens still to come). Decoding a window
 * rather than single tokens keeps decoders with context (Metaspace's first
 * token, Strip) right. */
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "text/tokenizer_internal.h"

/* A character has at most 4 bytes, so after this many held tokens the
 * U+FFFD is real (an invalid byte sequence) and is emitted as such. */
#define MAX_HELD_TOKENS 8

struct vlm_detokenizer {
  const vlm_tokenizer *tokenizer;
  bool skip_special_tokens;
  vlm_token_ids ids;       /* the window */
  char *prefix;            /* decode of ids[0 .. prefix_index) */
  size_t prefix_length;
  size_t prefix_index;
  size_t held;             /* ids pushed since text was last emitted */
  bool byte_fallback;      /* the decoder has a ByteFallback step */
  byte_buffer output;
};

static bool has_byte_fallback(const tokenizer_decoder *decoder) {
  if (!decoder) return false;
  if (decoder->kind == DECODER_BYTE_FALLBACK) return true;
  for (size_t i = 0; i < decoder->child_count; i++)
    if (has_byte_fallback(&decoder->children[i])) return true;
  return false;
}

vlm_status vlm_detokenizer_create(const vlm_tokenizer *tokenizer, bool skip_special_tokens,
                                  vlm_detokenizer **out_detokenizer) {
  *out_detokenizer = NULL;
  if (!tokenizer) return VLM_ERROR(INVALID_ARGUMENT, "vlm_detokenizer_create: no tokenizer");
  vlm_detokenizer *detokenizer = calloc(1, sizeof(*detokenizer));
  if (!detokenizer) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for a detokenizer");
  detokenizer->tokenizer = tokenizer;
  detokenizer->skip_special_tokens = skip_special_tokens;
  detokenizer->byte_fallback = has_byte_fallback(tokenizer->decoder);
  *out_detokenizer = detokenizer;
  return VLM_OK;
}

void vlm_detokenizer_release(vlm_detokenizer *detokenizer) {
  if (!detokenizer) return;
  vlm_token_ids_release(&detokenizer->ids);
  free(detokenizer->prefix);
  byte_buffer_release(&detokenizer->output);
  free(detokenizer);
}

static bool ends_with_replacement(const char *text, size_t length) {
  return length >= 3 && memcmp(text + length - 3, "\xEF\xBF\xBD", 3) == 0;
}

static vlm_status decode_window(const vlm_detokenizer *detokenizer, size_t from, char **text,
                                size_t *length) {
  return vlm_tokenizer_decode(detokenizer->tokenizer, detokenizer->ids.ids + from,
                              detokenizer->ids.count - from, detokenizer->skip_special_tokens,
                              text, length);
}

/* Emits string[prefix_length ..] and slides the window so the ids that
 * produced the old prefix drop out. */
static vlm_status emit(vlm_detokenizer *detokenizer, const char *string, size_t length) {
  /* Hugging Face's DecodeStream fails here with InvalidPrefix. That happens
   * when bytes released as U+FFFD after MAX_HELD_TOKENS later combine with
   * new bytes into a valid character, so the window's text no longer starts
   * with what was already streamed. A stream cannot take text back, and a
   * server must not fail a request over it: we stream what follows the old
   * prefix's length. Callers that need the exact text decode the whole
   * completion at the end (the generator does). */
  if (length < detokenizer->prefix_length) return VLM_OK;
  detokenizer->output.length = 0;
  if (!byte_buffer_append(&detokenizer->output, string + detokenizer->prefix_length,
                          length - detokenizer->prefix_length))
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory in the detokenizer");
  size_t new_prefix_index = detokenizer->ids.count - detokenizer->prefix_index;
  memmove(detokenizer->ids.ids, detokenizer->ids.ids + detokenizer->prefix_index,
          new_prefix_index * sizeof(int32_t));
  detokenizer->ids.count = new_prefix_index;
  free(detokenizer->prefix);
  detokenizer->prefix = NULL;
  VLM_RETURN_IF_ERROR(decode_window(detokenizer, 0, &detokenizer->prefix,
                                    &detokenizer->prefix_length));
  detokenizer->prefix_index = new_prefix_index;
  detokenizer->held = 0;
  return VLM_OK;
}

/* ByteFallback decodes a run of <0xHH> tokens together and, when the run's
 * bytes are not valid UTF-8, turns every byte of it into U+FFFD: a byte that
 * reads as a whole character now (0x0F) becomes U+FFFD once an invalid byte
 * follows. So nothing of an open run is final until a token that is not a
 * byte ends it. */
static bool opens_byte_run(const vlm_detokenizer *detokenizer, int32_t id) {
  const vlm_tokenizer *tokenizer = detokenizer->tokenizer;
  if (!detokenizer->byte_fallback || id < 0 || (size_t)id >= tokenizer->id_count) return false;
  const char *text = tokenizer->id_strings[id];
  return text && tokenizer->id_lengths[id] == 6 && !memcmp(text, "<0x", 3) && text[5] == '>';
}

vlm_status vlm_detokenizer_push(vlm_detokenizer *detokenizer, int32_t id, const char **out_text,
                                size_t *out_length) {
  *out_text = "";
  *out_length = 0;
  if (!detokenizer->prefix) {
    detokenizer->prefix = calloc(1, 1);
    if (!detokenizer->prefix) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  if (!token_ids_push(&detokenizer->ids, id))
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory in the detokenizer");
  detokenizer->held++;
  char *string = NULL;
  size_t length = 0;
  VLM_RETURN_IF_ERROR(decode_window(detokenizer, 0, &string, &length));
  vlm_status status = VLM_OK;
  bool complete = !opens_byte_run(detokenizer, id) &&
                  (!ends_with_replacement(string, length) || detokenizer->held >= MAX_HELD_TOKENS);
  if (length > detokenizer->prefix_length && complete) {
    status = emit(detokenizer, string, length);
    if (!status) {
      *out_text = detokenizer->output.data;
      *out_length = detokenizer->output.length;
    }
  }
  free(string);
  return status;
}

vlm_status vlm_detokenizer_finish(vlm_detokenizer *detokenizer, const char **out_text,
                                  size_t *out_length) {
  *out_text = "";
  *out_length = 0;
  if (!detokenizer->held || !detokenizer->prefix) return VLM_OK;
  char *string = NULL;
  size_t length = 0;
  VLM_RETURN_IF_ERROR(decode_window(detokenizer, 0, &string, &length));
  vlm_status status = VLM_OK;
  if (length > detokenizer->prefix_length) {
    status = emit(detokenizer, string, length);
    if (!status) {
      *out_text = detokenizer->output.data;
      *out_length = detokenizer->output.length;
    }
  }
  free(string);
  return status;
}

/* ---- Stop strings --------------------------------------------------------- */

struct vlm_stop_matcher {
  char **stops;
  size_t *lengths;
  size_t count;
  byte_buffer pending;  /* held back: might be the start of a stop string */
  byte_buffer output;
  int matched;
};

vlm_status vlm_stop_matcher_create(const char *const *stop_strings, size_t count,
                                   vlm_stop_matcher **out_matcher) {
  *out_matcher = NULL;
  vlm_stop_matcher *matcher = calloc(1, sizeof(*matcher));
  if (!matcher) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for stop strings");
  matcher->matched = -1;
  matcher->stops = calloc(count ? count : 1, sizeof(char *));
  matcher->lengths = calloc(count ? count : 1, sizeof(size_t));
  if (!matcher->stops || !matcher->lengths) {
    vlm_stop_matcher_release(matcher);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for stop strings");
  }
  for (size_t i = 0; i < count; i++) {
    if (!stop_strings[i] || !stop_strings[i][0]) continue; /* empty stops never match */
    matcher->stops[matcher->count] = strdup(stop_strings[i]);
    if (!matcher->stops[matcher->count]) {
      vlm_stop_matcher_release(matcher);
      return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for stop strings");
    }
    matcher->lengths[matcher->count++] = strlen(stop_strings[i]);
  }
  *out_matcher = matcher;
  return VLM_OK;
}

void vlm_stop_matcher_release(vlm_stop_matcher *matcher) {
  if (!matcher) return;
  for (size_t i = 0; i < matcher->count; i++) free(matcher->stops[i]);
  free(matcher->stops);
  free(matcher->lengths);
  byte_buffer_release(&matcher->pending);
  byte_buffer_release(&matcher->output);
  free(matcher);
}

/* Longest suffix of text that is a proper prefix of some stop string. */
static size_t held_suffix(const vlm_stop_matcher *matcher, const char *text, size_t length) {
  size_t best = 0;
  for (size_t i = 0; i < matcher->count; i++) {
    size_t limit = matcher->lengths[i] - 1 < length ? matcher->lengths[i] - 1 : length;
    for (size_t n = limit; n > best; n--) {
      if (memcmp(text + length - n, matcher->stops[i], n) == 0) {
        best = n;
        break;
      }
    }
  }
  return best;
}

bool vlm_stop_matcher_push(vlm_stop_matcher *matcher, const char *text, size_t length,
                           const char **out_text, size_t *out_length) {
  *out_text = "";
  *out_length = 0;
  if (matcher->matched >= 0) return true;
  matcher->output.length = 0;
  if (!byte_buffer_append(&matcher->pending, text, length) ||
      !byte_buffer_append(&matcher->output, "", 0))
    return false;
  const char *pending = matcher->pending.data;
  size_t pending_length = matcher->pending.length;
  /* The earliest stop string wins; at equal positions the first listed. */
  size_t earliest = pending_length;
  for (size_t i = 0; i < matcher->count; i++) {
    const char *found = memmem(pending, pending_length, matcher->stops[i], matcher->lengths[i]);
    if (found && (size_t)(found - pending) < earliest) {
      earliest = (size_t)(found - pending);
      matcher->matched = (int)i;
    }
  }
  size_t emit = matcher->matched >= 0 ? earliest
                                      : pending_length - held_suffix(matcher, pending, pending_length);
  if (!byte_buffer_append(&matcher->output, pending, emit)) return false;
  memmove(matcher->pending.data, pending + emit, pending_length - emit);
  matcher->pending.length = pending_length - emit;
  *out_text = matcher->output.data;
  *out_length = matcher->output.length;
  return matcher->matched >= 0;
}

void vlm_stop_matcher_finish(vlm_stop_matcher *matcher, const char **out_text,
                             size_t *out_length) {
  *out_text = "";
  *out_length = 0;
  if (matcher->matched >= 0) return;
  matcher->output.length = 0;
  if (!byte_buffer_append(&matcher->output, matcher->pending.data ? matcher->pending.data : "",
                          matcher->pending.length))
    return;
  matcher->pending.length = 0;
  *out_text = matcher->output.data;
  *out_length = matcher->output.length;
}

int vlm_stop_matcher_matched(const vlm_stop_matcher *matcher) { return matcher->matched; }
