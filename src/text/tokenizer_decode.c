/* Decoding: ids -> token strings -> the decoder chain -> text.
 *
 * As in `tokenizers`, every decoder maps a list of strings to a list of
 * strings (decode_chain) and the final list is concatenated. Without a
 * decoder the tokens are joined with spaces. */
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "text/tokenizer_internal.h"

typedef struct string_list {
  byte_buffer *items;
  size_t count, capacity;
} string_list;

static vlm_status out_of_memory(void) {
  return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory decoding tokens");
}

static byte_buffer *list_add(string_list *list) {
  if (list->count == list->capacity) {
    size_t capacity = list->capacity ? list->capacity * 2 : 16;
    byte_buffer *grown = realloc(list->items, capacity * sizeof(*grown));
    if (!grown) return NULL;
    list->items = grown;
    list->capacity = capacity;
  }
  byte_buffer *item = &list->items[list->count++];
  memset(item, 0, sizeof(*item));
  if (!byte_buffer_append(item, "", 0)) {
    list->count--;
    return NULL;
  }
  return item;
}

static bool list_add_text(string_list *list, const char *text, size_t length) {
  byte_buffer *item = list_add(list);
  return item && byte_buffer_append(item, text, length);
}

static void list_release(string_list *list) {
  for (size_t i = 0; i < list->count; i++) byte_buffer_release(&list->items[i]);
  free(list->items);
  memset(list, 0, sizeof(*list));
}

/* String::from_utf8_lossy: one U+FFFD per maximal invalid subsequence. */
static bool append_lossy(byte_buffer *out, const char *text, size_t length) {
  size_t sanitized_length;
  char *sanitized = utf8_sanitize(text, length, &sanitized_length);
  bool appended = sanitized ? byte_buffer_append(out, sanitized, sanitized_length)
                            : byte_buffer_append(out, text, length);
  free(sanitized);
  return appended;
}

/* ---- Decoders ------------------------------------------------------------ */

/* Tokens made only of byte-map characters become those bytes; any other
 * token (an added token such as "<|im_end|>") is kept as it is. */
static bool decode_byte_level(const string_list *in, string_list *out) {
  byte_buffer bytes = {0};
  bool ok = byte_buffer_append(&bytes, "", 0);
  for (size_t i = 0; ok && i < in->count; i++) {
    const byte_buffer *token = &in->items[i];
    size_t mark = bytes.length;
    bool all_mapped = true;
    for (size_t position = 0; ok && position < token->length;) {
      uint32_t codepoint;
      position += utf8_decode(token->data + position, token->length - position, &codepoint);
      int byte = byte_level_byte(codepoint);
      if (byte < 0) {
        all_mapped = false;
        break;
      }
      char value = (char)byte;
      ok = byte_buffer_append(&bytes, &value, 1);
    }
    if (ok && !all_mapped) {
      bytes.length = mark;
      ok = byte_buffer_append(&bytes, token->data, token->length);
    }
  }
  byte_buffer *item = ok ? list_add(out) : NULL;
  ok = item && append_lossy(item, bytes.data, bytes.length);
  byte_buffer_release(&bytes);
  return ok;
}

static int byte_token_value(const byte_buffer *token) {
  if (token->length != 6 || memcmp(token->data, "<0x", 3) != 0 || token->data[5] != '>') return -1;
  int value = 0;
  for (int i = 3; i < 5; i++) {
    char c = token->data[i];
    int digit = c >= '0' && c <= '9' ? c - '0'
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
              : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

/* A run of <0xXX> tokens becomes its text when it is valid UTF-8, and one
 * U+FFFD per byte when it is not. */
static bool flush_bytes(byte_buffer *pending, string_list *out) {
  if (!pending->length) return true;
  size_t unused;
  char *sanitized = utf8_sanitize(pending->data, pending->length, &unused);
  bool ok = true;
  if (!sanitized) {
    ok = list_add_text(out, pending->data, pending->length);
  } else {
    for (size_t i = 0; ok && i < pending->length; i++) ok = list_add_text(out, "\xEF\xBF\xBD", 3);
  }
  free(sanitized);
  pending->length = 0;
  return ok;
}

static bool decode_byte_fallback(const string_list *in, string_list *out) {
  byte_buffer pending = {0};
  bool ok = true;
  for (size_t i = 0; ok && i < in->count; i++) {
    int value = byte_token_value(&in->items[i]);
    if (value >= 0) {
      char byte = (char)value;
      ok = byte_buffer_append(&pending, &byte, 1);
    } else {
      ok = flush_bytes(&pending, out) &&
           list_add_text(out, in->items[i].data, in->items[i].length);
    }
  }
  ok = ok && flush_bytes(&pending, out);
  byte_buffer_release(&pending);
  return ok;
}

static bool decode_fuse(const string_list *in, string_list *out) {
  byte_buffer *item = list_add(out);
  for (size_t i = 0; item && i < in->count; i++)
    if (!byte_buffer_append(item, in->items[i].data, in->items[i].length)) return false;
  return item != NULL;
}

/* Removes up to `start` leading and `stop` trailing copies of a character. */
static bool decode_strip(const tokenizer_decoder *decoder, const string_list *in,
                         string_list *out) {
  char encoded[4];
  size_t width = utf8_encode(decoder->strip_char, encoded);
  for (size_t i = 0; i < in->count; i++) {
    const char *text = in->items[i].data;
    size_t begin = 0, end = in->items[i].length;
    for (size_t n = 0; n < decoder->strip_start && end - begin >= width &&
                       memcmp(text + begin, encoded, width) == 0; n++)
      begin += width;
    for (size_t n = 0; n < decoder->strip_stop && end - begin >= width &&
                       memcmp(text + end - width, encoded, width) == 0; n++)
      end -= width;
    if (!list_add_text(out, text + begin, end - begin)) return false;
  }
  return true;
}

static vlm_status decode_replace(const tokenizer_decoder *decoder, const string_list *in,
                                 string_list *out) {
  match_list matches = {0};
  vlm_status status = VLM_OK;
  for (size_t i = 0; !status && i < in->count; i++) {
    const byte_buffer *token = &in->items[i];
    status = decoder->pattern.regex
                 ? tokenizer_regex_find_all(decoder->pattern.regex, token->data, token->length,
                                            &matches)
                 : literal_find_all(decoder->pattern.literal, decoder->pattern.literal_length,
                                    token->data, token->length, &matches);
    byte_buffer *item = status ? NULL : list_add(out);
    if (!status && !item) status = out_of_memory();
    size_t position = 0;
    for (size_t m = 0; !status && m < matches.count; m++) {
      if (!byte_buffer_append(item, token->data + position, matches.items[m].start - position) ||
          !byte_buffer_append(item, decoder->content, decoder->content_length))
        status = out_of_memory();
      position = matches.items[m].end;
    }
    if (!status && !byte_buffer_append(item, token->data + position, token->length - position))
      status = out_of_memory();
  }
  match_list_release(&matches);
  return status;
}

/* Metaspace: the replacement character becomes a space, except the prefix
 * the pre-tokenizer added to the first token. */
static bool decode_metaspace(const tokenizer_decoder *decoder, const string_list *in,
                             string_list *out) {
  for (size_t i = 0; i < in->count; i++) {
    const byte_buffer *token = &in->items[i];
    byte_buffer *item = list_add(out);
    if (!item) return false;
    for (size_t position = 0; position < token->length;) {
      bool replacement = token->length - position >= decoder->replacement_length &&
                         memcmp(token->data + position, decoder->replacement,
                                decoder->replacement_length) == 0;
      if (replacement) {
        if (!(i == 0 && position == 0 && decoder->prepend != PREPEND_NEVER) &&
            !byte_buffer_append(item, " ", 1))
          return false;
        position += decoder->replacement_length;
      } else {
        uint32_t codepoint;
        size_t width = utf8_decode(token->data + position, token->length - position, &codepoint);
        if (!byte_buffer_append(item, token->data + position, width)) return false;
        position += width;
      }
    }
  }
  return true;
}

static bool append_cleaned(byte_buffer *out, const char *text, size_t length) {
  static const struct {
    const char *from, *to;
  } rules[] = {{" .", "."},   {" ?", "?"},     {" !", "!"},         {" ,", ","},
               {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},       {" do not", " don't"},
               {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  byte_buffer current = {0}, next = {0};
  bool ok = byte_buffer_append(&current, text, length);
  for (size_t r = 0; ok && r < sizeof(rules) / sizeof(rules[0]); r++) {
    size_t from_length = strlen(rules[r].from), position = 0;
    next.length = 0;
    ok = byte_buffer_append(&next, "", 0);
    while (ok && position < current.length) {
      const char *found = memmem(current.data + position, current.length - position,
                                 rules[r].from, from_length);
      size_t stop = found ? (size_t)(found - current.data) : current.length;
      ok = byte_buffer_append(&next, current.data + position, stop - position);
      if (found && ok) ok = byte_buffer_append(&next, rules[r].to, strlen(rules[r].to));
      position = found ? stop + from_length : current.length;
    }
    byte_buffer swap = current;
    current = next;
    next = swap;
  }
  ok = ok && byte_buffer_append(out, current.data, current.length);
  byte_buffer_release(&current);
  byte_buffer_release(&next);
  return ok;
}

static bool decode_wordpiece(const tokenizer_decoder *decoder, const string_list *in,
                             string_list *out) {
  for (size_t i = 0; i < in->count; i++) {
    const byte_buffer *token = &in->items[i];
    byte_buffer joined = {0};
    bool ok;
    if (i != 0 && token->length >= decoder->content_length &&
        memcmp(token->data, decoder->content, decoder->content_length) == 0) {
      ok = byte_buffer_append(&joined, token->data + decoder->content_length,
                              token->length - decoder->content_length);
    } else {
      ok = (i == 0 || byte_buffer_append(&joined, " ", 1)) &&
           byte_buffer_append(&joined, token->data, token->length);
    }
    byte_buffer *item = ok ? list_add(out) : NULL;
    ok = item && (decoder->cleanup ? append_cleaned(item, joined.data, joined.length)
                                   : byte_buffer_append(item, joined.data, joined.length));
    byte_buffer_release(&joined);
    if (!ok) return false;
  }
  return true;
}

static vlm_status decode_chain(const tokenizer_decoder *decoder, string_list *tokens) {
  if (decoder->kind == DECODER_SEQUENCE) {
    for (size_t i = 0; i < decoder->child_count; i++)
      VLM_RETURN_IF_ERROR(decode_chain(&decoder->children[i], tokens));
    return VLM_OK;
  }
  string_list out = {0};
  vlm_status status = VLM_OK;
  bool ok = true;
  switch (decoder->kind) {
    case DECODER_BYTE_LEVEL: ok = decode_byte_level(tokens, &out); break;
    case DECODER_BYTE_FALLBACK: ok = decode_byte_fallback(tokens, &out); break;
    case DECODER_FUSE: ok = decode_fuse(tokens, &out); break;
    case DECODER_STRIP: ok = decode_strip(decoder, tokens, &out); break;
    case DECODER_REPLACE: status = decode_replace(decoder, tokens, &out); break;
    case DECODER_METASPACE: ok = decode_metaspace(decoder, tokens, &out); break;
    case DECODER_WORDPIECE: ok = decode_wordpiece(decoder, tokens, &out); break;
    case DECODER_SEQUENCE: break;
  }
  if (!ok && !status) status = out_of_memory();
  if (status) {
    list_release(&out);
    return status;
  }
  list_release(tokens);
  *tokens = out;
  return VLM_OK;
}

vlm_status vlm_tokenizer_decode(const vlm_tokenizer *tokenizer, const int32_t *ids, size_t count,
                                bool skip_special_tokens, char **out_text, size_t *out_length) {
  *out_text = NULL;
  if (out_length) *out_length = 0;
  if (!tokenizer || (!ids && count))
    return VLM_ERROR(INVALID_ARGUMENT, "vlm_tokenizer_decode: no tokenizer or ids");
  string_list tokens = {0};
  vlm_status status = VLM_OK;
  for (size_t i = 0; i < count && !status; i++) {
    int32_t id = ids[i];
    if (id < 0 || (size_t)id >= tokenizer->id_count || !tokenizer->id_strings[id]) continue;
    if (skip_special_tokens && tokenizer->id_special[id]) continue;
    if (!list_add_text(&tokens, tokenizer->id_strings[id], tokenizer->id_lengths[id]))
      status = out_of_memory();
  }
  if (!status && tokenizer->decoder) status = decode_chain(tokenizer->decoder, &tokens);
  byte_buffer text = {0};
  if (!status && !byte_buffer_append(&text, "", 0)) status = out_of_memory();
  for (size_t i = 0; !status && i < tokens.count; i++) {
    bool ok = (tokenizer->decoder || i == 0 || byte_buffer_append(&text, " ", 1)) &&
              append_lossy(&text, tokens.items[i].data, tokens.items[i].length);
    if (!ok) status = out_of_memory();
  }
  list_release(&tokens);
  if (status) {
    byte_buffer_release(&text);
    return status;
  }
  *out_text = text.data;
  if (out_length) *out_length = text.length;
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* One token's bytes mid-text (for constrained decoding, text/grammar.c):  */
/* the decoder chain on that token alone, without the replacement of       */
/* partial UTF-8 (a token may hold half a character) and without what the  */
/* chain does only at the start of a text (Metaspace's prefix, a Strip     */
/* after Fuse).                                                            */
/* ---------------------------------------------------------------------- */

static vlm_status token_bytes_step(const tokenizer_decoder *decoder, byte_buffer *token, bool *fused) {
  switch (decoder->kind) {
    case DECODER_SEQUENCE:
      for (size_t i = 0; i < decoder->child_count; i++)
        VLM_RETURN_IF_ERROR(token_bytes_step(&decoder->children[i], token, fused));
      return VLM_OK;
    case DECODER_BYTE_LEVEL: {
      byte_buffer bytes = {0};
      bool ok = byte_buffer_append(&bytes, "", 0);
      for (size_t position = 0; ok && position < token->length;) {
        uint32_t codepoint;
        position += utf8_decode(token->data + position, token->length - position, &codepoint);
        int byte = byte_level_byte(codepoint);
        if (byte < 0) {
          byte_buffer_release(&bytes);
          return VLM_OK; /* an added token kept as it is */
        }
        char value = (char)byte;
        ok = byte_buffer_append(&bytes, &value, 1);
      }
      if (!ok) {
        byte_buffer_release(&bytes);
        return out_of_memory();
      }
      byte_buffer_release(token);
      *token = bytes;
      return VLM_OK;
    }
    case DECODER_BYTE_FALLBACK: {
      int value = byte_token_value(token);
      if (value >= 0) {
        token->data[0] = (char)value;
        token->length = 1;
      }
      return VLM_OK;
    }
    case DECODER_FUSE: *fused = true; return VLM_OK;
    case DECODER_STRIP:
    case DECODER_REPLACE:
    case DECODER_METASPACE: {
      if (decoder->kind == DECODER_STRIP && *fused) return VLM_OK; /* the text's start only */
      string_list in = {0}, out = {0};
      if (!list_add_text(&in, token->data, token->length)) return out_of_memory();
      /* Metaspace keeps a leading replacement only past the first token:
       * give it a first token to skip. */
      bool padded = decoder->kind == DECODER_METASPACE;
      string_list padded_in = {0};
      vlm_status status = VLM_OK;
      if (padded) {
        if (!list_add_text(&padded_in, "x", 1) || !list_add_text(&padded_in, token->data, token->length))
          status = out_of_memory();
      }
      if (!status) {
        if (decoder->kind == DECODER_REPLACE) status = decode_replace(decoder, &in, &out);
        else if (decoder->kind == DECODER_STRIP) status = decode_strip(decoder, &in, &out) ? VLM_OK : out_of_memory();
        else status = decode_metaspace(decoder, &padded_in, &out) ? VLM_OK : out_of_memory();
      }
      size_t which = padded ? 1 : 0;
      if (!status && out.count > which) {
        token->length = 0;
        if (!byte_buffer_append(token, out.items[which].data, out.items[which].length)) status = out_of_memory();
      }
      list_release(&in);
      list_release(&padded_in);
      list_release(&out);
      return status;
    }
    case DECODER_WORDPIECE:
      return VLM_ERROR(UNIMPLEMENTED, "token bytes: WordPiece decoders are not supported for constrained decoding");
  }
  return VLM_OK;
}

vlm_status vlm_tokenizer_token_bytes(const vlm_tokenizer *tokenizer, int32_t id, char *buffer, size_t capacity,
                                     size_t *out_length) {
  *out_length = 0;
  if (id < 0 || (size_t)id >= tokenizer->id_count || !tokenizer->id_strings[id])
    return VLM_ERROR(OUT_OF_RANGE, "token bytes: unknown id %d", id);
  byte_buffer token = {0};
  if (!byte_buffer_append(&token, tokenizer->id_strings[id], tokenizer->id_lengths[id])) return out_of_memory();
  bool fused = false;
  vlm_status status = tokenizer->decoder ? token_bytes_step(tokenizer->decoder, &token, &fused) : VLM_OK;
  if (!status && token.length > capacity)
    status = VLM_ERROR(OUT_OF_RANGE, "token bytes: token %d is %zu bytes", id, token.length);
  if (!status) {
    if (token.length) memcpy(buffer, token.data, token.length);
    *out_length = token.length;
  }
  byte_buffer_release(&token);
  return status;
}
