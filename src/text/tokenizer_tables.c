/* Data structures and UTF-8 helpers under the tokenizer: open-addressing hash
 * tables (a 262k-token vocabulary and 500k merges must load in well under a
 * second), the added-token trie, growable buffers and the GPT-2 byte map. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "core/status.h"
#include "text/tokenizer_internal.h"

/* ---- UTF-8 ------------------------------------------------------------- */

size_t utf8_decode(const char *text, size_t length, uint32_t *out_codepoint) {
  const unsigned char *bytes = (const unsigned char *)text;
  if (bytes[0] < 0x80 || length < 2) {
    *out_codepoint = bytes[0];
    return 1;
  }
  if (bytes[0] < 0xE0) {
    *out_codepoint = ((uint32_t)(bytes[0] & 0x1F) << 6) | (bytes[1] & 0x3F);
    return 2;
  }
  if (bytes[0] < 0xF0 || length < 4) {
    if (length < 3) {
      *out_codepoint = bytes[0];
      return 1;
    }
    *out_codepoint = ((uint32_t)(bytes[0] & 0x0F) << 12) |
                     ((uint32_t)(bytes[1] & 0x3F) << 6) | (bytes[2] & 0x3F);
    return 3;
  }
  *out_codepoint = ((uint32_t)(bytes[0] & 0x07) << 18) | ((uint32_t)(bytes[1] & 0x3F) << 12) |
                   ((uint32_t)(bytes[2] & 0x3F) << 6) | (bytes[3] & 0x3F);
  return 4;
}

size_t utf8_encode(uint32_t codepoint, char *out) {
  unsigned char *bytes = (unsigned char *)out;
  if (codepoint < 0x80) {
    bytes[0] = (unsigned char)codepoint;
    return 1;
  }
  if (codepoint < 0x800) {
    bytes[0] = (unsigned char)(0xC0 | (codepoint >> 6));
    bytes[1] = (unsigned char)(0x80 | (codepoint & 0x3F));
    return 2;
  }
  if (codepoint < 0x10000) {
    bytes[0] = (unsigned char)(0xE0 | (codepoint >> 12));
    bytes[1] = (unsigned char)(0x80 | ((codepoint >> 6) & 0x3F));
    bytes[2] = (unsigned char)(0x80 | (codepoint & 0x3F));
    return 3;
  }
  bytes[0] = (unsigned char)(0xF0 | (codepoint >> 18));
  bytes[1] = (unsigned char)(0x80 | ((codepoint >> 12) & 0x3F));
  bytes[2] = (unsigned char)(0x80 | ((codepoint >> 6) & 0x3F));
  bytes[3] = (unsigned char)(0x80 | (codepoint & 0x3F));
  return 4;
}

/* The Unicode "maximal subpart" rule (Python's and Rust's lossy decoders):
 * an invalid sequence is replaced by one U+FFFD covering the longest prefix
 * that could still have begun a valid character. */
size_t utf8_valid_sequence(const unsigned char *text, size_t length,
                           size_t *out_invalid_length) {
  unsigned char lead = text[0];
  *out_invalid_length = 1;
  if (lead < 0x80) return 1;
  size_t needed;
  unsigned char low = 0x80, high = 0xBF; /* allowed range of the 2nd byte */
  if (lead >= 0xC2 && lead <= 0xDF) {
    needed = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    needed = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    needed = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  for (size_t i = 1; i < needed; i++) {
    unsigned char lower = i == 1 ? low : 0x80, upper = i == 1 ? high : 0xBF;
    if (i >= length || text[i] < lower || text[i] > upper) {
      *out_invalid_length = i;
      return 0;
    }
  }
  return needed;
}

char *utf8_sanitize(const char *text, size_t length, size_t *out_length) {
  size_t position = 0, invalid = 0;
  while (position < length) {
    size_t valid = utf8_valid_sequence((const unsigned char *)text + position,
                                       length - position, &invalid);
    if (!valid) break;
    position += valid;
  }
  if (position == length) return NULL;
  /* Each invalid byte becomes at most 3 bytes. */
  char *copy = malloc(length * 3 + 1);
  if (!copy) return NULL;
  memcpy(copy, text, position);
  size_t written = position;
  while (position < length) {
    size_t valid = utf8_valid_sequence((const unsigned char *)text + position,
                                       length - position, &invalid);
    if (valid) {
      memcpy(copy + written, text + position, valid);
      written += valid;
      position += valid;
    } else {
      memcpy(copy + written, "\xEF\xBF\xBD", 3);
      written += 3;
      position += invalid;
    }
  }
  copy[written] = '\0';
  *out_length = written;
  return copy;
}

bool unicode_is_whitespace(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

bool unicode_is_numeric(uint32_t c) {
  utf8proc_category_t category = utf8proc_category((utf8proc_int32_t)c);
  return category == UTF8PROC_CATEGORY_ND || category == UTF8PROC_CATEGORY_NL ||
         category == UTF8PROC_CATEGORY_NO;
}

bool unicode_is_alphanumeric(uint32_t c) {
  utf8proc_category_t category = utf8proc_category((utf8proc_int32_t)c);
  return (category >= UTF8PROC_CATEGORY_LU && category <= UTF8PROC_CATEGORY_LO) ||
         unicode_is_numeric(c);
}

/* ---- Buffers ----------------------------------------------------------- */

bool byte_buffer_append(byte_buffer *buffer, const char *data, size_t length) {
  if (buffer->length + length + 1 > buffer->capacity) {
    size_t capacity = buffer->capacity ? buffer->capacity : 64;
    while (capacity < buffer->length + length + 1) capacity *= 2;
    char *grown = realloc(buffer->data, capacity);
    if (!grown) return false;
    buffer->data = grown;
    buffer->capacity = capacity;
  }
  if (length) memcpy(buffer->data + buffer->length, data, length);
  buffer->length += length;
  buffer->data[buffer->length] = '\0';
  return true;
}

void byte_buffer_release(byte_buffer *buffer) {
  free(buffer->data);
  memset(buffer, 0, sizeof(*buffer));
}

bool piece_list_push(piece_list *list, const char *text, size_t length, int32_t token_id,
                     bool at_start) {
  if (list->count == list->capacity) {
    size_t capacity = list->capacity ? list->capacity * 2 : 16;
    text_piece *grown = realloc(list->items, capacity * sizeof(*grown));
    if (!grown) return false;
    list->items = grown;
    list->capacity = capacity;
  }
  list->items[list->count++] = (text_piece){text, length, token_id, at_start};
  return true;
}

void piece_list_release(piece_list *list) {
  free(list->items);
  memset(list, 0, sizeof(*list));
}

bool token_ids_push(vlm_token_ids *ids, int32_t id) {
  if (ids->count == ids->capacity) {
    size_t capacity = ids->capacity ? ids->capacity * 2 : 64;
    int32_t *grown = realloc(ids->ids, capacity * sizeof(*grown));
    if (!grown) return false;
    ids->ids = grown;
    ids->capacity = capacity;
  }
  ids->ids[ids->count++] = id;
  return true;
}

void vlm_token_ids_release(vlm_token_ids *ids) {
  if (!ids) return;
  free(ids->ids);
  memset(ids, 0, sizeof(*ids));
}

/* ---- Hash tables ------------------------------------------------------- */

static uint64_t hash_bytes(const char *data, size_t length) {
  uint64_t hash = 0xcbf29ce484222325ULL ^ length;
  for (size_t i = 0; i < length; i++) hash = (hash ^ (unsigned char)data[i]) * 0x100000001b3ULL;
  return hash ^ (hash >> 29);
}

static uint64_t hash_integer(uint64_t key) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  key *= 0xc4ceb9fe1a85ec53ULL;
  return key ^ (key >> 33);
}

static size_t slot_count_for(size_t expected) {
  size_t slots = 16;
  while (slots < expected * 2 + 16) slots *= 2;
  return slots;
}

vlm_status string_table_init(string_table *table, size_t expected) {
  memset(table, 0, sizeof(*table));
  table->slot_count = slot_count_for(expected);
  table->strings = calloc(table->slot_count, sizeof(*table->strings));
  table->lengths = calloc(table->slot_count, sizeof(*table->lengths));
  table->ids = calloc(table->slot_count, sizeof(*table->ids));
  if (!table->strings || !table->lengths || !table->ids) {
    string_table_release(table);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for a token table");
  }
  return VLM_OK;
}

static vlm_status string_table_grow(string_table *table) {
  string_table bigger;
  VLM_RETURN_IF_ERROR(string_table_init(&bigger, table->slot_count));
  for (size_t i = 0; i < table->slot_count; i++)
    if (table->strings[i])
      (void)string_table_put(&bigger, table->strings[i], table->lengths[i], table->ids[i]);
  string_table_release(table);
  *table = bigger;
  return VLM_OK;
}

vlm_status string_table_put(string_table *table, const char *string, size_t length,
                            int32_t id) {
  if ((table->used + 1) * 2 > table->slot_count) VLM_RETURN_IF_ERROR(string_table_grow(table));
  size_t mask = table->slot_count - 1;
  for (size_t slot = hash_bytes(string, length) & mask;; slot = (slot + 1) & mask) {
    if (!table->strings[slot]) {
      table->strings[slot] = string;
      table->lengths[slot] = (uint32_t)length;
      table->ids[slot] = id;
      table->used++;
      return VLM_OK;
    }
    if (table->lengths[slot] == length && memcmp(table->strings[slot], string, length) == 0) {
      table->ids[slot] = id;
      return VLM_OK;
    }
  }
}

int32_t string_table_get(const string_table *table, const char *string, size_t length) {
  if (!table->slot_count) return -1;
  size_t mask = table->slot_count - 1;
  for (size_t slot = hash_bytes(string, length) & mask;; slot = (slot + 1) & mask) {
    if (!table->strings[slot]) return -1;
    if (table->lengths[slot] == length && memcmp(table->strings[slot], string, length) == 0)
      return table->ids[slot];
  }
}

void string_table_release(string_table *table) {
  free(table->strings);
  free(table->lengths);
  free(table->ids);
  memset(table, 0, sizeof(*table));
}

vlm_status pair_table_init(pair_table *table, size_t expected) {
  memset(table, 0, sizeof(*table));
  table->slot_count = slot_count_for(expected);
  table->keys = calloc(table->slot_count, sizeof(*table->keys));
  table->first = calloc(table->slot_count, sizeof(*table->first));
  table->second = calloc(table->slot_count, sizeof(*table->second));
  if (!table->keys || !table->first || !table->second) {
    pair_table_release(table);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for a merge table");
  }
  return VLM_OK;
}

static vlm_status pair_table_grow(pair_table *table) {
  pair_table bigger;
  VLM_RETURN_IF_ERROR(pair_table_init(&bigger, table->slot_count));
  for (size_t i = 0; i < table->slot_count; i++)
    if (table->keys[i])
      (void)pair_table_put(&bigger, table->keys[i] - 1, table->first[i], table->second[i]);
  pair_table_release(table);
  *table = bigger;
  return VLM_OK;
}

vlm_status pair_table_put(pair_table *table, uint64_t key, uint32_t first, uint32_t second) {
  if ((table->used + 1) * 2 > table->slot_count) VLM_RETURN_IF_ERROR(pair_table_grow(table));
  size_t mask = table->slot_count - 1;
  for (size_t slot = hash_integer(key) & mask;; slot = (slot + 1) & mask) {
    if (!table->keys[slot] || table->keys[slot] == key + 1) {
      if (!table->keys[slot]) table->used++;
      table->keys[slot] = key + 1;
      table->first[slot] = first;
      table->second[slot] = second;
      return VLM_OK;
    }
  }
}

bool pair_table_get(const pair_table *table, uint64_t key, uint32_t *first, uint32_t *second) {
  if (!table->slot_count) return false;
  size_t mask = table->slot_count - 1;
  for (size_t slot = hash_integer(key) & mask;; slot = (slot + 1) & mask) {
    if (!table->keys[slot]) return false;
    if (table->keys[slot] == key + 1) {
      *first = table->first[slot];
      *second = table->second[slot];
      return true;
    }
  }
}

void pair_table_release(pair_table *table) {
  free(table->keys);
  free(table->first);
  free(table->second);
  memset(table, 0, sizeof(*table));
}

/* ---- Trie -------------------------------------------------------------- */

static bool trie_add_node(token_trie *trie) {
  if (trie->node_count == trie->node_capacity) {
    size_t capacity = trie->node_capacity ? trie->node_capacity * 2 : 64;
    int32_t *grown = realloc(trie->terminal, capacity * sizeof(*grown));
    if (!grown) return false;
    trie->terminal = grown;
    trie->node_capacity = capacity;
  }
  trie->terminal[trie->node_count++] = -1;
  return true;
}

vlm_status token_trie_init(token_trie *trie) {
  memset(trie, 0, sizeof(*trie));
  VLM_RETURN_IF_ERROR(pair_table_init(&trie->edges, 64));
  if (!trie_add_node(trie)) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for a trie");
  return VLM_OK;
}

vlm_status token_trie_insert(token_trie *trie, const char *text, size_t length,
                             int32_t value) {
  if (length == 0) return VLM_OK; /* an empty token can never be matched */
  uint32_t node = 0, unused;
  for (size_t i = 0; i < length; i++) {
    uint64_t key = ((uint64_t)node << 8) | (unsigned char)text[i];
    uint32_t child;
    if (!pair_table_get(&trie->edges, key, &child, &unused)) {
      if (!trie_add_node(trie)) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for a trie");
      child = (uint32_t)(trie->node_count - 1);
      VLM_RETURN_IF_ERROR(pair_table_put(&trie->edges, key, child, 0));
    }
    node = child;
  }
  trie->first_byte[(unsigned char)text[0]] = true;
  /* The first token with a given content wins, like Hugging Face's
   * added-vocabulary map which ignores re-additions. */
  if (trie->terminal[node] < 0) trie->terminal[node] = value;
  return VLM_OK;
}

size_t token_trie_longest(const token_trie *trie, const char *text, size_t length,
                          int32_t *out_value) {
  if (!length || !trie->first_byte[(unsigned char)text[0]]) return 0;
  uint32_t node = 0, unused;
  size_t best = 0;
  for (size_t i = 0; i < length; i++) {
    uint64_t key = ((uint64_t)node << 8) | (unsigned char)text[i];
    if (!pair_table_get(&trie->edges, key, &node, &unused)) break;
    if (trie->terminal[node] >= 0) {
      best = i + 1;
      *out_value = trie->terminal[node];
    }
  }
  return best;
}

void token_trie_release(token_trie *trie) {
  pair_table_release(&trie->edges);
  free(trie->terminal);
  memset(trie, 0, sizeof(*trie));
}

/* ---- GPT-2 byte map ---------------------------------------------------- */

/* Printable bytes stand for themselves; the other 68 are shifted to U+0100..
 * in byte order, so every byte has a visible, non-space character. */
static uint32_t byte_to_codepoint(uint8_t byte) {
  if ((byte >= 33 && byte <= 126) || (byte >= 161 && byte <= 172) || byte >= 174) return byte;
  uint32_t shifted = 0;
  for (unsigned b = 0; b < byte; b++)
    if (!((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174)) shifted++;
  return 256 + shifted;
}

static struct {
  char text[256][3];
  uint8_t length[256];
  int16_t byte_of[512];
} byte_map;
static pthread_once_t byte_map_once = PTHREAD_ONCE_INIT;

static void byte_map_build(void) {
  for (int i = 0; i < 512; i++) byte_map.byte_of[i] = -1;
  for (int byte = 0; byte < 256; byte++) {
    uint32_t codepoint = byte_to_codepoint((uint8_t)byte);
    char encoded[4];
    size_t length = utf8_encode(codepoint, encoded);
    memcpy(byte_map.text[byte], encoded, length);
    byte_map.length[byte] = (uint8_t)length;
    byte_map.byte_of[codepoint] = (int16_t)byte;
  }
}

const char *byte_level_char(uint8_t byte, size_t *out_length) {
  pthread_once(&byte_map_once, byte_map_build);
  *out_length = byte_map.length[byte];
  return byte_map.text[byte];
}

int byte_level_byte(uint32_t codepoint) {
  pthread_once(&byte_map_once, byte_map_build);
  return codepoint < 512 ? byte_map.byte_of[codepoint] : -1;
}
