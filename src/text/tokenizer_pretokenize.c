/* Pre-tokenizers: split pieces of text into the words the model tokenizes
 * one by one. Mirrors `tokenizers`' NormalizedString::split: a pattern gives
 * (range, is_match) events covering the text, a behaviour decides how
 * matches attach to their neighbours, and empty pieces are dropped. */
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "text/tokenizer_internal.h"

static vlm_status out_of_memory(void) {
  return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory pre-tokenizing text");
}

typedef struct split_event {
  size_t start, end;
  bool is_match;
} split_event;

typedef struct event_list {
  split_event *items;
  size_t count, capacity;
} event_list;

static bool event_push(event_list *list, size_t start, size_t end, bool is_match) {
  if (list->count == list->capacity) {
    size_t capacity = list->capacity ? list->capacity * 2 : 32;
    split_event *grown = realloc(list->items, capacity * sizeof(*grown));
    if (!grown) return false;
    list->items = grown;
    list->capacity = capacity;
  }
  list->items[list->count++] = (split_event){start, end, is_match};
  return true;
}

/* Matches -> events covering [0, length). */
static bool events_from_matches(const match_list *matches, size_t length, event_list *events) {
  events->count = 0;
  size_t previous = 0;
  for (size_t i = 0; i < matches->count; i++) {
    if (previous != matches->items[i].start &&
        !event_push(events, previous, matches->items[i].start, false))
      return false;
    if (!event_push(events, matches->items[i].start, matches->items[i].end, true)) return false;
    previous = matches->items[i].end;
  }
  return previous == length || event_push(events, previous, length, false);
}

/* A character predicate as a pattern: every matching character is its own
 * match, runs of other characters one non-match. */
static bool events_from_predicate(const char *text, size_t length, bool (*predicate)(uint32_t),
                                  event_list *events) {
  events->count = 0;
  size_t last_offset = 0;
  for (size_t position = 0; position < length;) {
    uint32_t codepoint;
    size_t width = utf8_decode(text + position, length - position, &codepoint);
    if (predicate(codepoint)) {
      if (last_offset < position && !event_push(events, last_offset, position, false)) return false;
      if (!event_push(events, position, position + width, true)) return false;
      last_offset = position + width;
    }
    position += width;
  }
  return last_offset >= length || event_push(events, last_offset, length, false);
}

/* Applies the behaviour in place: afterwards is_match means "remove". */
static void apply_behavior(event_list *events, split_behavior behavior, bool invert) {
  if (invert)
    for (size_t i = 0; i < events->count; i++) events->items[i].is_match = !events->items[i].is_match;
  size_t kept = 0;
  split_event *items = events->items;
  switch (behavior) {
    case SPLIT_REMOVED:
      return; /* matches are removed: is_match already means that */
    case SPLIT_ISOLATED:
      for (size_t i = 0; i < events->count; i++) items[i].is_match = false;
      return;
    case SPLIT_MERGED_WITH_PREVIOUS: {
      bool previous_match = false;
      for (size_t i = 0; i < events->count; i++) {
        bool is_match = items[i].is_match;
        if (is_match && !previous_match && kept > 0) {
          items[kept - 1].end = items[i].end;
        } else {
          items[kept] = items[i];
          items[kept++].is_match = false;
        }
        previous_match = is_match;
      }
      break;
    }
    case SPLIT_MERGED_WITH_NEXT: {
      /* The same, walking backwards: a match joins the piece after it. */
      bool previous_match = false;
      size_t write = events->count;
      for (size_t i = events->count; i-- > 0;) {
        bool is_match = items[i].is_match;
        if (is_match && !previous_match && write < events->count) {
          items[write].start = items[i].start;
        } else {
          items[--write] = items[i];
          items[write].is_match = false;
        }
        previous_match = is_match;
      }
      kept = events->count - write;
      memmove(items, items + write, kept * sizeof(*items));
      break;
    }
    case SPLIT_CONTIGUOUS: {
      int previous = -1;
      for (size_t i = 0; i < events->count; i++) {
        bool is_match = items[i].is_match;
        if (previous == (int)is_match && kept > 0) {
          items[kept - 1].end = items[i].end;
        } else {
          items[kept] = items[i];
          items[kept++].is_match = false;
        }
        previous = is_match;
      }
      break;
    }
  }
  events->count = kept;
}

static bool push_events(const text_piece *piece, const event_list *events, piece_list *out) {
  for (size_t i = 0; i < events->count; i++) {
    const split_event *event = &events->items[i];
    if (event->is_match || event->start == event->end) continue;
    if (!piece_list_push(out, piece->text + event->start, event->end - event->start, -1,
                         piece->at_start && event->start == 0))
      return false;
  }
  return true;
}

static vlm_status split_by_pattern(const text_pattern *pattern, const text_piece *piece,
                                   split_behavior behavior, bool invert, piece_list *out) {
  match_list matches = {0};
  event_list events = {0};
  vlm_status status =
      pattern->regex ? tokenizer_regex_find_all(pattern->regex, piece->text, piece->length, &matches)
                     : literal_find_all(pattern->literal, pattern->literal_length, piece->text,
                                        piece->length, &matches);
  if (!status) {
    if (!events_from_matches(&matches, piece->length, &events)) {
      status = out_of_memory();
    } else {
      apply_behavior(&events, behavior, invert);
      if (!push_events(piece, &events, out)) status = out_of_memory();
    }
  }
  match_list_release(&matches);
  free(events.items);
  return status;
}

static vlm_status split_by_predicate(bool (*predicate)(uint32_t), const text_piece *piece,
                                     split_behavior behavior, piece_list *out) {
  event_list events = {0};
  vlm_status status = VLM_OK;
  if (!events_from_predicate(piece->text, piece->length, predicate, &events)) {
    status = out_of_memory();
  } else {
    apply_behavior(&events, behavior, false);
    if (!push_events(piece, &events, out)) status = out_of_memory();
  }
  free(events.items);
  return status;
}

/* ---- ByteLevel ------------------------------------------------------------ */

/* Maps every byte to its visible stand-in character. */
static vlm_status byte_level_map(const text_piece *piece, vlm_arena *arena, piece_list *out) {
  char *mapped = vlm_arena_allocate(arena, piece->length * 2 + 1, 1);
  if (!mapped) return out_of_memory();
  size_t written = 0;
  for (size_t i = 0; i < piece->length; i++) {
    size_t width;
    const char *character = byte_level_char((uint8_t)piece->text[i], &width);
    memcpy(mapped + written, character, width);
    written += width;
  }
  return piece_list_push(out, mapped, written, -1, piece->at_start) ? VLM_OK : out_of_memory();
}

static vlm_status byte_level(const tokenizer_pre_tokenizer *pre, const text_piece *input,
                             vlm_arena *arena, piece_list *out) {
  text_piece piece = *input;
  if (pre->add_prefix_space && (piece.length == 0 || piece.text[0] != ' ')) {
    char *prefixed = vlm_arena_allocate(arena, piece.length + 1, 1);
    if (!prefixed) return out_of_memory();
    prefixed[0] = ' ';
    memcpy(prefixed + 1, piece.text, piece.length);
    piece.text = prefixed;
    piece.length++;
  }
  if (!pre->use_regex) return byte_level_map(&piece, arena, out);
  piece_list words = {0};
  vlm_status status = split_by_pattern(&pre->pattern, &piece, SPLIT_ISOLATED, false, &words);
  for (size_t i = 0; !status && i < words.count; i++)
    status = byte_level_map(&words.items[i], arena, out);
  piece_list_release(&words);
  return status;
}

/* ---- Metaspace ------------------------------------------------------------ */

static vlm_status metaspace(const tokenizer_pre_tokenizer *pre, const text_piece *piece,
                            vlm_arena *arena, piece_list *out) {
  size_t spaces = 0;
  for (size_t i = 0; i < piece->length; i++) spaces += piece->text[i] == ' ';
  size_t room = piece->length + spaces * pre->replacement_length + pre->replacement_length + 1;
  char *text = vlm_arena_allocate(arena, room, 1);
  if (!text) return out_of_memory();
  size_t length = pre->replacement_length; /* leave room for a prefix */
  for (size_t i = 0; i < piece->length; i++) {
    if (piece->text[i] == ' ') {
      memcpy(text + length, pre->replacement, pre->replacement_length);
      length += pre->replacement_length;
    } else {
      text[length++] = piece->text[i];
    }
  }
  const char *start = text + pre->replacement_length;
  size_t body = length - pre->replacement_length;
  bool starts_with_replacement =
      body >= pre->replacement_length && memcmp(start, pre->replacement, pre->replacement_length) == 0;
  bool prepend = !starts_with_replacement &&
                 (pre->prepend == PREPEND_ALWAYS || (pre->prepend == PREPEND_FIRST && piece->at_start));
  if (prepend) {
    memcpy(text, pre->replacement, pre->replacement_length);
    start = text;
    body = length;
  }
  text_piece replaced = {start, body, -1, piece->at_start};
  if (!pre->split)
    return piece_list_push(out, start, body, -1, piece->at_start) ? VLM_OK : out_of_memory();
  text_pattern pattern = {pre->replacement, pre->replacement_length, NULL};
  return split_by_pattern(&pattern, &replaced, SPLIT_MERGED_WITH_NEXT, false, out);
}

static bool is_whitespace_predicate(uint32_t codepoint) { return unicode_is_whitespace(codepoint); }
static bool is_numeric_predicate(uint32_t codepoint) { return unicode_is_numeric(codepoint); }

/* ---- Dispatch ------------------------------------------------------------- */

static vlm_status pre_tokenize_piece(const tokenizer_pre_tokenizer *pre, const text_piece *piece,
                                     vlm_arena *arena, piece_list *out) {
  switch (pre->kind) {
    case PRE_TOKENIZER_SPLIT:
      return split_by_pattern(&pre->pattern, piece, pre->behavior, pre->invert, out);
    case PRE_TOKENIZER_BYTE_LEVEL: return byte_level(pre, piece, arena, out);
    case PRE_TOKENIZER_METASPACE: return metaspace(pre, piece, arena, out);
    case PRE_TOKENIZER_DIGITS:
      return split_by_predicate(is_numeric_predicate, piece,
                                pre->individual_digits ? SPLIT_ISOLATED : SPLIT_CONTIGUOUS, out);
    case PRE_TOKENIZER_WHITESPACE:
      return split_by_pattern(&pre->pattern, piece, SPLIT_REMOVED, true, out);
    case PRE_TOKENIZER_WHITESPACE_SPLIT:
      return split_by_predicate(is_whitespace_predicate, piece, SPLIT_REMOVED, out);
    case PRE_TOKENIZER_SEQUENCE: break;
  }
  return VLM_ERROR(INTERNAL, "pre-tokenizer kind %d", (int)pre->kind);
}

vlm_status pre_tokenizer_apply(const tokenizer_pre_tokenizer *pre, piece_list *pieces,
                               vlm_arena *arena) {
  if (pre->kind == PRE_TOKENIZER_SEQUENCE) {
    for (size_t i = 0; i < pre->child_count; i++)
      VLM_RETURN_IF_ERROR(pre_tokenizer_apply(&pre->children[i], pieces, arena));
    return VLM_OK;
  }
  piece_list result = {0};
  vlm_status status = VLM_OK;
  for (size_t i = 0; i < pieces->count && !status; i++) {
    const text_piece *piece = &pieces->items[i];
    if (piece->token_id >= 0) {
      /* Added tokens pass through untouched. */
      if (!piece_list_push(&result, piece->text, piece->length, piece->token_id, piece->at_start))
        status = out_of_memory();
      continue;
    }
    status = pre_tokenize_piece(pre, piece, arena, &result);
  }
  if (status) {
    piece_list_release(&result);
    return status;
  }
  piece_list_release(pieces);
  *pieces = result;
  return VLM_OK;
}

/* ---- Streaming (see pre_tokenizer_stream) ------------------------------- */

static bool isolates_matches(const tokenizer_pre_tokenizer *pre) {
  if (pre->kind == PRE_TOKENIZER_SPLIT)
    return pre->pattern.regex && pre->behavior == SPLIT_ISOLATED && !pre->invert;
  if (pre->kind == PRE_TOKENIZER_BYTE_LEVEL) return pre->use_regex && !pre->add_prefix_space && pre->pattern.regex;
  return false;
}

bool pre_tokenizer_stream_start(const tokenizer_pre_tokenizer *pre, const text_piece *piece,
                                pre_tokenizer_stream *out) {
  memset(out, 0, sizeof(*out));
  if (!pre || piece->token_id >= 0) return false;
  const tokenizer_pre_tokenizer *first = pre;
  if (pre->kind == PRE_TOKENIZER_SEQUENCE) {
    if (pre->child_count == 0) return false;
    first = &pre->children[0];
    out->rest = pre->children + 1;
    out->rest_count = pre->child_count - 1;
  }
  if (!isolates_matches(first)) return false;
  out->first = first;
  out->piece = *piece;
  return true;
}

vlm_status pre_tokenizer_stream_next(pre_tokenizer_stream *stream, size_t max_matches, vlm_arena *arena,
                                     piece_list *out) {
  if (stream->done) return VLM_OK;
  const text_piece *piece = &stream->piece;
  match_list matches = {0};
  VLM_RETURN_IF_ERROR(tokenizer_regex_find_some(stream->first->pattern.regex, piece->text, piece->length,
                                                &stream->cursor, max_matches, &matches));
  /* Gaps and matches alike are pieces (Isolated); the text after the last
   * match is one once the scan is done. */
  piece_list batch = {0};
  bool ok = true;
  size_t previous = stream->previous_end;
  for (size_t i = 0; ok && i < matches.count; i++) {
    const match_range *match = &matches.items[i];
    if (match->start > previous)
      ok = piece_list_push(&batch, piece->text + previous, match->start - previous, -1,
                           piece->at_start && previous == 0);
    if (ok && match->end > match->start)
      ok = piece_list_push(&batch, piece->text + match->start, match->end - match->start, -1,
                           piece->at_start && match->start == 0);
    previous = match->end;
  }
  if (ok && stream->cursor.done && piece->length > previous)
    ok = piece_list_push(&batch, piece->text + previous, piece->length - previous, -1,
                         piece->at_start && previous == 0);
  stream->previous_end = previous;
  stream->done = stream->cursor.done;
  match_list_release(&matches);
  vlm_status status = ok ? VLM_OK : out_of_memory();
  if (!status && stream->first->kind == PRE_TOKENIZER_BYTE_LEVEL) {
    piece_list mapped = {0};
    for (size_t i = 0; !status && i < batch.count; i++) status = byte_level_map(&batch.items[i], arena, &mapped);
    piece_list_release(&batch);
    batch = mapped;
  }
  for (size_t i = 0; !status && i < stream->rest_count; i++) status = pre_tokenizer_apply(&stream->rest[i], &batch, arena);
  for (size_t i = 0; !status && i < batch.count; i++)
    if (!piece_list_push(out, batch.items[i].text, batch.items[i].length, batch.items[i].token_id,
                         batch.items[i].at_start))
      status = out_of_memory();
  piece_list_release(&batch);
  return status;
}
