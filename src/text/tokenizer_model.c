/* Models: one pre-token in, token ids out.
 *
 * BPE follows `tokenizers`' Word::merge_all: start from one symbol per
 * character (or byte-fallback bytes, or a fused unknown), then repeatedly
 * apply the lowest-ranked merge among adjacent pairs, leftmost first, using a
 * binary heap so long words stay O(n log n). */
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "text/tokenizer_internal.h"

static vlm_status out_of_memory(void) {
  return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory tokenizing text");
}

typedef struct symbol {
  int32_t id;
  int32_t previous; /* index, -1 at the start */
  int32_t next;     /* index, -1 at the end */
  bool removed;
} symbol;

typedef struct merge_candidate {
  uint32_t rank;
  uint32_t position; /* index of the left symbol */
  uint32_t new_id;
} merge_candidate;

typedef struct bpe_word {
  symbol *symbols;
  size_t count, capacity;
  merge_candidate *heap;
  size_t heap_count, heap_capacity;
} bpe_word;

static bool word_add(bpe_word *word, int32_t id) {
  if (word->count == word->capacity) {
    size_t capacity = word->capacity ? word->capacity * 2 : 32;
    symbol *grown = realloc(word->symbols, capacity * sizeof(*grown));
    if (!grown) return false;
    word->symbols = grown;
    word->capacity = capacity;
  }
  int32_t index = (int32_t)word->count;
  word->symbols[word->count++] = (symbol){id, index - 1, -1, false};
  if (index > 0) word->symbols[index - 1].next = index;
  return true;
}

static bool candidate_less(const merge_candidate *a, const merge_candidate *b) {
  return a->rank != b->rank ? a->rank < b->rank : a->position < b->position;
}

static bool heap_push(bpe_word *word, merge_candidate candidate) {
  if (word->heap_count == word->heap_capacity) {
    size_t capacity = word->heap_capacity ? word->heap_capacity * 2 : 32;
    merge_candidate *grown = realloc(word->heap, capacity * sizeof(*grown));
    if (!grown) return false;
    word->heap = grown;
    word->heap_capacity = capacity;
  }
  size_t child = word->heap_count++;
  while (child > 0) {
    size_t parent = (child - 1) / 2;
    if (!candidate_less(&candidate, &word->heap[parent])) break;
    word->heap[child] = word->heap[parent];
    child = parent;
  }
  word->heap[child] = candidate;
  return true;
}

static merge_candidate heap_pop(bpe_word *word) {
  merge_candidate top = word->heap[0];
  merge_candidate last = word->heap[--word->heap_count];
  size_t parent = 0, count = word->heap_count;
  for (;;) {
    size_t child = parent * 2 + 1;
    if (child >= count) break;
    if (child + 1 < count && candidate_less(&word->heap[child + 1], &word->heap[child])) child++;
    if (!candidate_less(&word->heap[child], &last)) break;
    word->heap[parent] = word->heap[child];
    parent = child;
  }
  if (count) word->heap[parent] = last;
  return top;
}

static bool lookup_merge(const tokenizer_model *model, int32_t left, int32_t right,
                         uint32_t *rank, uint32_t *new_id) {
  return pair_table_get(&model->merges, ((uint64_t)(uint32_t)left << 32) | (uint32_t)right, rank,
                        new_id);
}

static bool queue_pair(const tokenizer_model *model, bpe_word *word, int32_t left_index) {
  const symbol *left = &word->symbols[left_index];
  if (left->next < 0) return true;
  uint32_t rank, new_id;
  if (!lookup_merge(model, left->id, word->symbols[left->next].id, &rank, &new_id)) return true;
  return heap_push(word, (merge_candidate){rank, (uint32_t)left_index, new_id});
}

static bool merge_all(const tokenizer_model *model, bpe_word *word) {
  for (size_t i = 0; i + 1 < word->count; i++)
    if (!queue_pair(model, word, (int32_t)i)) return false;
  while (word->heap_count) {
    merge_candidate top = heap_pop(word);
    symbol *left = &word->symbols[top.position];
    if (left->removed || left->next < 0) continue;
    symbol *right = &word->symbols[left->next];
    uint32_t rank, new_id;
    /* Stale entry: the pair changed since it was queued. */
    if (!lookup_merge(model, left->id, right->id, &rank, &new_id) || new_id != top.new_id)
      continue;
    left->id = (int32_t)top.new_id;
    right->removed = true;
    left->next = right->next;
    if (right->next >= 0) word->symbols[right->next].previous = (int32_t)top.position;
    if (left->previous >= 0 && !queue_pair(model, word, left->previous)) return false;
    if (!queue_pair(model, word, (int32_t)top.position)) return false;
  }
  return true;
}

/* Looks up one character, with the continuing prefix / end suffix when the
 * model has them. */
static int32_t character_id(const tokenizer_model *model, const char *text, size_t width,
                            bool first, bool last, byte_buffer *scratch) {
  if ((first || !model->continuing_prefix_length) && (!last || !model->end_of_word_suffix_length))
    return string_table_get(&model->vocabulary, text, width);
  scratch->length = 0;
  if ((!first && !byte_buffer_append(scratch, model->continuing_prefix,
                                     model->continuing_prefix_length)) ||
      !byte_buffer_append(scratch, text, width) ||
      (last && !byte_buffer_append(scratch, model->end_of_word_suffix,
                                   model->end_of_word_suffix_length)))
    return -2;
  return string_table_get(&model->vocabulary, scratch->data, scratch->length);
}

static bool byte_fallback(const tokenizer_model *model, const char *text, size_t length,
                          bpe_word *word) {
  for (size_t i = 0; i < length; i++)
    if (model->byte_fallback_ids[(unsigned char)text[i]] < 0) return false;
  for (size_t i = 0; i < length; i++)
    if (!word_add(word, model->byte_fallback_ids[(unsigned char)text[i]])) return false;
  return true;
}

static vlm_status bpe_build_word(const tokenizer_model *model, const char *text, size_t length,
                                 bpe_word *word) {
  byte_buffer scratch = {0};
  bool pending_unknown = false;
  vlm_status status = VLM_OK;
  for (size_t position = 0; position < length && !status;) {
    uint32_t codepoint;
    size_t width = utf8_decode(text + position, length - position, &codepoint);
    bool first = position == 0, last = position + width >= length;
    int32_t id = character_id(model, text + position, width, first, last, &scratch);
    if (id == -2) {
      status = out_of_memory();
    } else if (id >= 0) {
      if (pending_unknown && !word_add(word, model->unknown_id)) status = out_of_memory();
      pending_unknown = false;
      if (!status && !word_add(word, id)) status = out_of_memory();
    } else if (model->byte_fallback && (first || !model->continuing_prefix_length) &&
               byte_fallback(model, text + position, width, word)) {
      /* As in `tokenizers`, a pending unknown is not flushed first. */
    } else if (model->unknown_id >= 0) {
      if (pending_unknown && !model->fuse_unknown && !word_add(word, model->unknown_id))
        status = out_of_memory();
      pending_unknown = true;
    }
    position += width;
  }
  if (!status && pending_unknown && !word_add(word, model->unknown_id)) status = out_of_memory();
  byte_buffer_release(&scratch);
  return status;
}

static vlm_status bpe_tokenize(const tokenizer_model *model, const char *text, size_t length,
                               vlm_token_ids *out) {
  if (length == 0) return VLM_OK;
  if (model->ignore_merges) {
    int32_t whole = string_table_get(&model->vocabulary, text, length);
    if (whole >= 0) return token_ids_push(out, whole) ? VLM_OK : out_of_memory();
  }
  bpe_word word = {0};
  vlm_status status = bpe_build_word(model, text, length, &word);
  if (!status && !merge_all(model, &word)) status = out_of_memory();
  for (size_t i = 0; !status && i < word.count; i++)
    if (!word.symbols[i].removed && !token_ids_push(out, word.symbols[i].id)) status = out_of_memory();
  free(word.symbols);
  free(word.heap);
  return status;
}

/* WordPiece: greedy longest match from the left; any unmatched rest makes
 * the whole word the unknown token. */
static vlm_status wordpiece_tokenize(const tokenizer_model *model, const char *text, size_t length,
                                     vlm_token_ids *out) {
  if (length == 0) return VLM_OK;
  if (model->unknown_id < 0)
    return VLM_ERROR(INVALID_ARGUMENT, "WordPiece model without an unk_token in its vocabulary");
  size_t characters = 0;
  for (size_t i = 0; i < length; i++) characters += ((unsigned char)text[i] & 0xC0) != 0x80;
  if (characters > model->max_input_chars_per_word)
    return token_ids_push(out, model->unknown_id) ? VLM_OK : out_of_memory();
  size_t mark = out->count, start = 0;
  byte_buffer candidate = {0};
  vlm_status status = VLM_OK;
  while (start < length && !status) {
    size_t end = length;
    int32_t found = -1;
    while (start < end) {
      candidate.length = 0;
      if ((start > 0 && !byte_buffer_append(&candidate, model->continuing_prefix,
                                            model->continuing_prefix_length)) ||
          !byte_buffer_append(&candidate, text + start, end - start)) {
        status = out_of_memory();
        break;
      }
      found = string_table_get(&model->vocabulary, candidate.data, candidate.length);
      if (found >= 0) break;
      do end--; while (end > start && ((unsigned char)text[end] & 0xC0) == 0x80);
    }
    if (status) break;
    if (found < 0) {
      out->count = mark;
      status = token_ids_push(out, model->unknown_id) ? VLM_OK : out_of_memory();
      break;
    }
    if (!token_ids_push(out, found)) status = out_of_memory();
    start = end;
  }
  byte_buffer_release(&candidate);
  return status;
}

vlm_status model_tokenize(const tokenizer_model *model, const char *text, size_t length,
                          vlm_token_ids *out) {
  return model->kind == MODEL_WORDPIECE ? wordpiece_tokenize(model, text, length, out)
                                        : bpe_tokenize(model, text, length, out);
}
