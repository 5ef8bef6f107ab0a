#include "io/safetensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/log.h"
#include "core/status.h"

static uint64_t read_u64_le(const uint8_t *bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; i--) value = (value << 8) | bytes[i];
  return value;
}

static vlm_status parse_shape(const vlm_json_value *shape, const char *source,
                              const char *name, vlm_safetensors_entry *entry) {
  if (!shape || shape->type != VLM_JSON_ARRAY)
    return VLM_ERROR(DATA_LOSS, "%s: tensor '%s': \"shape\" must be an array", source, name);
  if (shape->as.array.count > VLM_MAX_DIMS)
    return VLM_ERROR(DATA_LOSS, "%s: tensor '%s': rank %zu exceeds the maximum of %d",
                     source, name, shape->as.array.count, VLM_MAX_DIMS);
  entry->rank = (int)shape->as.array.count;
  for (int i = 0; i < entry->rank; i++) {
    int64_t dimension;
    if (!vlm_json_get_int(&shape->as.array.items[i], &dimension) || dimension < 0 ||
        !shape->as.array.items[i].as.number.is_integer)
      return VLM_ERROR(DATA_LOSS,
                       "%s: tensor '%s': shape[%d] is not a non-negative integer",
                       source, name, i);
    entry->shape[i] = dimension;
  }
  return VLM_OK;
}

static vlm_status parse_offsets(const vlm_json_value *offsets, const char *source,
                                const char *name, vlm_safetensors_entry *entry) {
  int64_t begin, end;
  if (!offsets || offsets->type != VLM_JSON_ARRAY || offsets->as.array.count != 2 ||
      !offsets->as.array.items[0].as.number.is_integer ||
      !offsets->as.array.items[1].as.number.is_integer ||
      !vlm_json_get_int(&offsets->as.array.items[0], &begin) ||
      !vlm_json_get_int(&offsets->as.array.items[1], &end) || begin < 0 || end < 0)
    return VLM_ERROR(DATA_LOSS,
                     "%s: tensor '%s': \"data_offsets\" must be two non-negative integers",
                     source, name);
  if (end < begin)
    return VLM_ERROR(DATA_LOSS, "%s: tensor '%s': data_offsets [%lld, %lld] end before begin",
                     source, name, (long long)begin, (long long)end);
  entry->data_begin = (uint64_t)begin;
  entry->data_end = (uint64_t)end;
  return VLM_OK;
}

static vlm_status parse_entry(const vlm_json_member *member, const char *source,
                              vlm_safetensors_entry *entry) {
  const char *name = member->key;
  memset(entry, 0, sizeof(*entry));
  entry->name = name;
  if (member->key_length == 0 || strlen(name) != member->key_length)
    return VLM_ERROR(DATA_LOSS, "%s: a tensor name is empty or contains NUL", source);
  const vlm_json_value *info = &member->value;
  if (info->type != VLM_JSON_OBJECT)
    return VLM_ERROR(DATA_LOSS, "%s: tensor '%s': entry must be an object", source, name);
  for (size_t i = 0; i < info->as.object.count; i++) {
    const char *key = info->as.object.members[i].key;
    if (strcmp(key, "dtype") && strcmp(key, "shape") && strcmp(key, "data_offsets"))
      return VLM_ERROR(DATA_LOSS, "%s: tensor '%s': unknown field \"%s\"", source, name, key);
  }
  const vlm_json_value *dtype = vlm_json_object_get(info, "dtype");
  if (!vlm_json_is_string(dtype))
    return VLM_ERROR(DATA_LOSS, "%s: tensor '%s': \"dtype\" must be a string", source, name);
  entry->dtype = vlm_dtype_from_safetensors(dtype->as.string.chars, dtype->as.string.length);
  if (entry->dtype == VLM_DTYPE_INVALID)
    return VLM_ERROR(DATA_LOSS, "%s: tensor '%s': unknown dtype \"%.32s\"", source, name,
                     dtype->as.string.chars);
  VLM_RETURN_IF_ERROR(parse_shape(vlm_json_object_get(info, "shape"), source, name, entry));
  VLM_RETURN_IF_ERROR(
      parse_offsets(vlm_json_object_get(info, "data_offsets"), source, name, entry));
  int64_t elements;
  uint64_t bytes;
  if (!vlm_shape_element_count(entry->shape, entry->rank, &elements) ||
      __builtin_mul_overflow((uint64_t)elements, (uint64_t)vlm_dtype_size(entry->dtype), &bytes))
    return VLM_ERROR(DATA_LOSS, "%s: tensor '%s': shape element count overflows", source, name);
  if (bytes != entry->data_end - entry->data_begin) {
    char shape_text[160];
    return VLM_ERROR(DATA_LOSS,
                     "%s: tensor '%s': shape %s x %s needs %llu bytes but data_offsets "
                     "[%llu, %llu] span %llu",
                     source, name, vlm_shape_format(entry->shape, entry->rank, shape_text,
                                                    sizeof(shape_text)),
                     vlm_dtype_safetensors_name(entry->dtype), (unsigned long long)bytes,
                     (unsigned long long)entry->data_begin, (unsigned long long)entry->data_end,
                     (unsigned long long)(entry->data_end - entry->data_begin));
  }
  return VLM_OK;
}

static vlm_status parse_metadata(const vlm_json_value *metadata, const char *source,
                                 const char **out_format) {
  if (metadata->type != VLM_JSON_OBJECT)
    return VLM_ERROR(DATA_LOSS, "%s: \"__metadata__\" must be an object of strings", source);
  for (size_t i = 0; i < metadata->as.object.count; i++) {
    const vlm_json_member *member = &metadata->as.object.members[i];
    if (member->value.type != VLM_JSON_STRING)
      return VLM_ERROR(DATA_LOSS, "%s: \"__metadata__\".\"%s\" must be a string", source,
                       member->key);
    if (strcmp(member->key, "format") == 0) *out_format = member->value.as.string.chars;
  }
  return VLM_OK;
}

static int compare_by_offset(const void *a, const void *b) {
  const vlm_safetensors_entry *left = *(const vlm_safetensors_entry *const *)a;
  const vlm_safetensors_entry *right = *(const vlm_safetensors_entry *const *)b;
  if (left->data_begin != right->data_begin)
    return left->data_begin < right->data_begin ? -1 : 1;
  /* Zero-byte tensors share a begin with their neighbour; put them first so
   * the contiguity walk below sees begin == end == previous end. */
  return (left->data_end > right->data_end) - (left->data_end < right->data_end);
}

/* Ranges must tile the data area exactly: sorted by offset, each begins where
 * the previous ended, and the last ends at the end of the file. */
static vlm_status check_ranges(vlm_safetensors_entry *entries, size_t count,
                               uint64_t data_area_bytes, const char *source) {
  const vlm_safetensors_entry **sorted = malloc((count ? count : 1) * sizeof(*sorted));
  if (!sorted) return VLM_ERROR(RESOURCE_EXHAUSTED, "%s: out of memory", source);
  for (size_t i = 0; i < count; i++) sorted[i] = &entries[i];
  qsort(sorted, count, sizeof(*sorted), compare_by_offset);
  vlm_status status = VLM_OK;
  uint64_t expected_begin = 0;
  const char *previous = NULL;
  for (size_t i = 0; i < count && !status; i++) {
    const vlm_safetensors_entry *entry = sorted[i];
    if (entry->data_end > data_area_bytes) {
      status = VLM_ERROR(DATA_LOSS,
                         "%s: tensor '%s': data_offsets [%llu, %llu] run past the end of "
                         "the file (data area is %llu bytes; truncated file?)",
                         source, entry->name, (unsigned long long)entry->data_begin,
                         (unsigned long long)entry->data_end,
                         (unsigned long long)data_area_bytes);
    } else if (entry->data_begin < expected_begin) {
      status = VLM_ERROR(DATA_LOSS, "%s: tensor '%s' overlaps tensor '%s'", source,
                         entry->name, previous);
    } else if (entry->data_begin > expected_begin) {
      status = VLM_ERROR(DATA_LOSS,
                         "%s: tensor '%s' starts at %llu, leaving a gap after byte %llu",
                         source, entry->name, (unsigned long long)entry->data_begin,
                         (unsigned long long)expected_begin);
    }
    expected_begin = entry->data_end;
    previous = entry->name;
  }
  if (!status && expected_begin != data_area_bytes)
    status = VLM_ERROR(DATA_LOSS,
                       "%s: tensors cover %llu bytes but the data area holds %llu "
                       "(trailing bytes not described by the header)",
                       source, (unsigned long long)expected_begin,
                       (unsigned long long)data_area_bytes);
  free(sorted);
  return status;
}

vlm_status vlm_safetensors_parse_header(const char *header_text, size_t header_length,
                                        uint64_t data_area_bytes,
                                        const vlm_allocator *allocator,
                                        const char *source_name,
                                        vlm_json_document *out_header,
                                        vlm_safetensors_entry **out_entries,
                                        size_t *out_entry_count,
                                        const char **out_format) {
  *out_entries = NULL;
  *out_entry_count = 0;
  *out_format = NULL;
  memset(out_header, 0, sizeof(*out_header));
  if (header_length == 0 || header_text[0] != '{')
    return VLM_ERROR(DATA_LOSS, "%s: safetensors header does not start with '{'", source_name);
  vlm_json_limits limits = {.max_depth = 8};
  VLM_RETURN_IF_ERROR(vlm_status_annotate(
      vlm_json_parse(header_text, header_length, &limits, allocator, "header", out_header),
      "%s", source_name));
  const vlm_json_value *root = out_header->root;
  vlm_status status = VLM_OK;
  const char *duplicate = NULL;
  if (vlm_json_object_has_duplicates(root, &duplicate))
    status = VLM_ERROR(DATA_LOSS, "%s: tensor '%s' is listed twice in the header",
                       source_name, duplicate ? duplicate : "?");
  size_t count = 0;
  vlm_safetensors_entry *entries = NULL;
  if (!status) {
    entries = vlm_arena_allocate(&out_header->arena,
                                 (root->as.object.count + 1) * sizeof(*entries),
                                 _Alignof(vlm_safetensors_entry));
    if (!entries) status = VLM_ERROR(RESOURCE_EXHAUSTED, "%s: out of memory", source_name);
  }
  for (size_t i = 0; !status && i < root->as.object.count; i++) {
    const vlm_json_member *member = &root->as.object.members[i];
    if (strcmp(member->key, "__metadata__") == 0)
      status = parse_metadata(&member->value, source_name, out_format);
    else
      status = parse_entry(member, source_name, &entries[count++]);
  }
  if (!status) status = check_ranges(entries, count, data_area_bytes, source_name);
  if (status) {
    vlm_json_document_release(out_header);
    *out_format = NULL;
    return status;
  }
  *out_entries = entries;
  *out_entry_count = count;
  return VLM_OK;
}

static bool is_aligned(const vlm_safetensors_entry *entry) {
  size_t element = vlm_dtype_size(entry->dtype);
  return element <= 1 || (uintptr_t)entry->data % element == 0;
}

/* The reference writer pads the header so the data area starts 8-byte
 * aligned, but a reader must accept any header length, and one padded with
 * a single extra space leaves every tensor at an odd address: loading a
 * float from it is undefined behaviour (UBSan aborted in cpu_embedding).
 * Such tensors are copied once into one aligned buffer the file owns; the
 * others stay in the mapping. */
static vlm_status align_tensor_data(vlm_safetensors_file *file, const char *source_name) {
  uint64_t total = 0;
  size_t misaligned = 0;
  for (size_t i = 0; i < file->entry_count; i++) {
    const vlm_safetensors_entry *entry = &file->entries[i];
    if (is_aligned(entry)) continue;
    total += (entry->data_end - entry->data_begin + VLM_DEFAULT_ALIGNMENT - 1) / VLM_DEFAULT_ALIGNMENT *
             VLM_DEFAULT_ALIGNMENT; /* within the file's size: no overflow */
    misaligned++;
  }
  if (!misaligned) return VLM_OK;
  if (total > SIZE_MAX) return VLM_ERROR(RESOURCE_EXHAUSTED, "%s: misaligned tensors too large to copy", source_name);
  file->aligned_copy = vlm_allocate(file->allocator, (size_t)total, VLM_DEFAULT_ALIGNMENT);
  if (!file->aligned_copy)
    return VLM_ERROR(RESOURCE_EXHAUSTED, "%s: out of memory copying %zu misaligned tensors (%llu bytes)",
                     source_name, misaligned, (unsigned long long)total);
  file->aligned_copy_bytes = total;
  uint64_t offset = 0;
  for (size_t i = 0; i < file->entry_count; i++) {
    vlm_safetensors_entry *entry = &file->entries[i];
    if (is_aligned(entry)) continue;
    uint64_t bytes = entry->data_end - entry->data_begin;
    memcpy(file->aligned_copy + offset, entry->data, (size_t)bytes);
    entry->data = file->aligned_copy + offset;
    offset += (bytes + VLM_DEFAULT_ALIGNMENT - 1) / VLM_DEFAULT_ALIGNMENT * VLM_DEFAULT_ALIGNMENT;
  }
  vlm_log(VLM_LOG_WARN, "%s: %zu tensor(s) are not aligned to their element size in the file (header of %llu "
          "bytes); copied %llu bytes to aligned memory", source_name, misaligned,
          (unsigned long long)file->header_bytes, (unsigned long long)total);
  return VLM_OK;
}

vlm_status vlm_safetensors_parse_buffer(const uint8_t *bytes, size_t length,
                                        const vlm_allocator *allocator,
                                        const char *source_name,
                                        vlm_safetensors_file *out_file) {
  if (length < 8)
    return VLM_ERROR(DATA_LOSS, "%s: file is %zu bytes, too short for a safetensors header",
                     source_name, length);
  uint64_t header_bytes = read_u64_le(bytes);
  if (header_bytes > VLM_SAFETENSORS_MAX_HEADER_BYTES)
    return VLM_ERROR(DATA_LOSS, "%s: header length %llu exceeds the limit of %llu bytes",
                     source_name, (unsigned long long)header_bytes,
                     (unsigned long long)VLM_SAFETENSORS_MAX_HEADER_BYTES);
  if (header_bytes > length - 8)
    return VLM_ERROR(DATA_LOSS,
                     "%s: header length %llu runs past the end of the %zu-byte file "
                     "(truncated file?)",
                     source_name, (unsigned long long)header_bytes, length);
  out_file->header_bytes = header_bytes;
  out_file->data_area = bytes + 8 + header_bytes;
  out_file->data_area_bytes = length - 8 - header_bytes;
  VLM_RETURN_IF_ERROR(vlm_safetensors_parse_header(
      (const char *)bytes + 8, (size_t)header_bytes, out_file->data_area_bytes, allocator,
      source_name, &out_file->header, &out_file->entries, &out_file->entry_count,
      &out_file->format));
  for (size_t i = 0; i < out_file->entry_count; i++)
    out_file->entries[i].data = out_file->data_area + out_file->entries[i].data_begin;
  out_file->allocator = allocator;
  return align_tensor_data(out_file, source_name);
}

vlm_status vlm_safetensors_open(const char *path, const vlm_allocator *allocator,
                                vlm_safetensors_file *out_file) {
  memset(out_file, 0, sizeof(*out_file));
  out_file->map.descriptor = -1;
  out_file->path = strdup(path);
  if (!out_file->path) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_status status = vlm_file_map_open(path, &out_file->map);
  if (!status)
    status = vlm_safetensors_parse_buffer(out_file->map.data, out_file->map.size, allocator,
                                          path, out_file);
  if (status) vlm_safetensors_close(out_file);
  return status;
}

void vlm_safetensors_release_parsed(vlm_safetensors_file *file) {
  if (file->aligned_copy) vlm_release(file->allocator, file->aligned_copy);
  file->aligned_copy = NULL;
  file->aligned_copy_bytes = 0;
  vlm_json_document_release(&file->header);
}

void vlm_safetensors_close(vlm_safetensors_file *file) {
  vlm_safetensors_release_parsed(file);
  vlm_file_map_close(&file->map);
  free(file->path);
  memset(file, 0, sizeof(*file));
  file->map.descriptor = -1;
}

vlm_status vlm_safetensors_write(const char *path,
                                 const vlm_safetensors_write_entry *entries,
                                 size_t entry_count, const char *format) {
  vlm_string_builder header = {0};
  vlm_sb_append_literal(&header, "{");
  if (format) {
    vlm_sb_append_literal(&header, "\"__metadata__\":{\"format\":");
    vlm_sb_append_json_string(&header, format, strlen(format));
    vlm_sb_append_literal(&header, "}");
  }
  uint64_t offset = 0;
  for (size_t i = 0; i < entry_count; i++) {
    int64_t elements;
    if (!vlm_shape_element_count(entries[i].shape, entries[i].rank, &elements)) {
      vlm_sb_release(&header);
      return VLM_ERROR(INVALID_ARGUMENT, "%s: tensor '%s' has an invalid shape", path,
                       entries[i].name);
    }
    uint64_t bytes = (uint64_t)elements * vlm_dtype_size(entries[i].dtype);
    if (format || i) vlm_sb_append_literal(&header, ",");
    vlm_sb_append_json_string(&header, entries[i].name, strlen(entries[i].name));
    vlm_sb_appendf(&header, ":{\"dtype\":\"%s\",\"shape\":[",
                   vlm_dtype_safetensors_name(entries[i].dtype));
    for (int d = 0; d < entries[i].rank; d++)
      vlm_sb_appendf(&header, "%s%lld", d ? "," : "", (long long)entries[i].shape[d]);
    vlm_sb_appendf(&header, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)offset,
                   (unsigned long long)(offset + bytes));
    offset += bytes;
  }
  vlm_sb_append_literal(&header, "}");
  while (!header.failed && (header.length + 8) % 8 != 0) vlm_sb_append_literal(&header, " ");
  if (header.failed) {
    vlm_sb_release(&header);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "%s: out of memory building the header", path);
  }
  FILE *file = fopen(path, "wb");
  if (!file) {
    vlm_sb_release(&header);
    return VLM_ERROR(IO, "%s: cannot create file", path);
  }
  uint8_t length_bytes[8];
  for (int i = 0; i < 8; i++) length_bytes[i] = (uint8_t)((uint64_t)header.length >> (8 * i));
  bool ok = fwrite(length_bytes, 1, 8, file) == 8 &&
            fwrite(header.data, 1, header.length, file) == header.length;
  for (size_t i = 0; ok && i < entry_count; i++) {
    int64_t elements = 0;
    vlm_shape_element_count(entries[i].shape, entries[i].rank, &elements);
    size_t bytes = (size_t)elements * vlm_dtype_size(entries[i].dtype);
    ok = bytes == 0 || fwrite(entries[i].data, 1, bytes, file) == bytes;
  }
  ok = (fclose(file) == 0) && ok;
  vlm_sb_release(&header);
  return ok ? VLM_OK : VLM_ERROR(IO, "%s: write failed", path);
}
