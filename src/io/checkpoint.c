#include "io/checkpoint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/status.h"
#include "io/file.h"
#include "io/json.h"

#define INDEX_FILE_NAME "model.safetensors.index.json"
#define SINGLE_FILE_NAME "model.safetensors"
/* Index files list one line per tensor; even 100k-tensor models stay far
 * below this. */
#define MAX_INDEX_BYTES ((size_t)64 * 1024 * 1024)
#define MAX_SHARDS 4096

struct vlm_checkpoint {
  const vlm_allocator *allocator;
  char *directory;
  vlm_safetensors_file *shards;
  size_t shard_count;
  size_t main_shard_count;  /* shards from here on are options->extra_files */
  vlm_tensor_info *tensors; /* sorted by name */
  size_t tensor_count;
  size_t *hash_slots;       /* open addressing: index + 1, 0 = empty */
  size_t hash_capacity;
  vlm_arena names;          /* renamed names */
  uint64_t total_bytes;
};

static uint64_t hash_name(const char *name) {
  uint64_t hash = 1469598103934665603ull; /* FNV-1a */
  for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
    hash ^= *c;
    hash *= 1099511628211ull;
  }
  return hash;
}

static int compare_tensor_names(const void *a, const void *b) {
  return strcmp(((const vlm_tensor_info *)a)->name, ((const vlm_tensor_info *)b)->name);
}

const vlm_tensor_info *vlm_checkpoint_find(const vlm_checkpoint *checkpoint,
                                           const char *name) {
  if (!checkpoint->hash_capacity) return NULL;
  size_t mask = checkpoint->hash_capacity - 1;
  for (size_t slot = hash_name(name) & mask;; slot = (slot + 1) & mask) {
    size_t entry = checkpoint->hash_slots[slot];
    if (!entry) return NULL;
    if (strcmp(checkpoint->tensors[entry - 1].name, name) == 0)
      return &checkpoint->tensors[entry - 1];
  }
}

static const char *canonical_name(vlm_checkpoint *checkpoint,
                                  const vlm_checkpoint_options *options, const char *stored) {
  for (size_t i = 0; options && i < options->rename_count; i++) {
    const vlm_name_rename *rename = &options->renames[i];
    size_t prefix_length = strlen(rename->from_prefix);
    if (strncmp(stored, rename->from_prefix, prefix_length) != 0) continue;
    size_t to_length = strlen(rename->to_prefix);
    size_t rest_length = strlen(stored + prefix_length);
    char *renamed = vlm_arena_allocate(&checkpoint->names, to_length + rest_length + 1, 1);
    if (!renamed) return NULL;
    memcpy(renamed, rename->to_prefix, to_length);
    memcpy(renamed + to_length, stored + prefix_length, rest_length + 1);
    return renamed;
  }
  return stored;
}

/* Builds the sorted table and hash index; refuses a name that two tensors
 * (in one shard after renaming, or across shards) claim. */
static vlm_status build_table(vlm_checkpoint *checkpoint,
                              const vlm_checkpoint_options *options) {
  size_t total = 0;
  for (size_t s = 0; s < checkpoint->shard_count; s++) total += checkpoint->shards[s].entry_count;
  checkpoint->tensors = calloc(total ? total : 1, sizeof(*checkpoint->tensors));
  size_t capacity = 16;
  while (capacity < total * 2) capacity *= 2;
  checkpoint->hash_slots = calloc(capacity, sizeof(*checkpoint->hash_slots));
  if (!checkpoint->tensors || !checkpoint->hash_slots)
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory indexing %zu tensors", total);
  checkpoint->hash_capacity = capacity;
  size_t count = 0;
  for (size_t s = 0; s < checkpoint->shard_count; s++) {
    const vlm_safetensors_file *shard = &checkpoint->shards[s];
    for (size_t e = 0; e < shard->entry_count; e++) {
      const vlm_safetensors_entry *entry = &shard->entries[e];
      vlm_tensor_info *info = &checkpoint->tensors[count++];
      info->stored_name = entry->name;
      if (s >= checkpoint->main_shard_count) {
        const vlm_checkpoint_extra_file *extra = &options->extra_files[s - checkpoint->main_shard_count];
        if (strncmp(entry->name, extra->from_prefix, strlen(extra->from_prefix)) != 0)
          return VLM_ERROR(DATA_LOSS, "%s: tensor '%s' does not start with '%s'", shard->path, entry->name,
                           extra->from_prefix);
        vlm_name_rename rename = {extra->from_prefix, extra->to_prefix};
        vlm_checkpoint_options one = {.renames = &rename, .rename_count = 1};
        info->name = canonical_name(checkpoint, &one, entry->name);
      } else {
        info->name = canonical_name(checkpoint, options, entry->name);
      }
      if (!info->name) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
      info->shard = (int)s;
      info->dtype = entry->dtype;
      info->rank = entry->rank;
      memcpy(info->shape, entry->shape, sizeof(info->shape));
      info->data = entry->data;
      info->byte_size = entry->data_end - entry->data_begin;
      checkpoint->total_bytes += info->byte_size;
    }
  }
  qsort(checkpoint->tensors, count, sizeof(*checkpoint->tensors), compare_tensor_names);
  checkpoint->tensor_count = count;
  for (size_t i = 0; i < count; i++) {
    const vlm_tensor_info *info = &checkpoint->tensors[i];
    if (i && strcmp(checkpoint->tensors[i - 1].name, info->name) == 0)
      return VLM_ERROR(DATA_LOSS, "tensor '%s' appears twice (in %s and %s)", info->name,
                       checkpoint->shards[checkpoint->tensors[i - 1].shard].path,
                       checkpoint->shards[info->shard].path);
    size_t mask = capacity - 1, slot = hash_name(info->name) & mask;
    while (checkpoint->hash_slots[slot]) slot = (slot + 1) & mask;
    checkpoint->hash_slots[slot] = i + 1;
  }
  return VLM_OK;
}

/* A shard name from the index must be a plain file name in the model
 * directory: no path separators, no "..", nothing hidden. */
static bool is_plain_file_name(const char *name) {
  return name[0] && name[0] != '.' && !strchr(name, '/') && !strchr(name, '\\');
}

typedef struct index_entry {
  const char *tensor;
  const char *shard_file;
} index_entry;

static int compare_index_tensor(const void *a, const void *b) {
  return strcmp(((const index_entry *)a)->tensor, ((const index_entry *)b)->tensor);
}

static vlm_status open_shard(vlm_checkpoint *checkpoint, const char *file_name) {
  char *path = vlm_path_join(checkpoint->directory, file_name);
  if (!path) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_status status = vlm_safetensors_open(path, checkpoint->allocator,
                                           &checkpoint->shards[checkpoint->shard_count]);
  free(path);
  if (!status) checkpoint->shard_count++;
  return status;
}

static vlm_status read_weight_map(const vlm_json_document *index, const char *index_path,
                                  index_entry **out_entries, size_t *out_count) {
  const vlm_json_value *weight_map = vlm_json_object_get(index->root, "weight_map");
  if (!weight_map || weight_map->type != VLM_JSON_OBJECT)
    return VLM_ERROR(DATA_LOSS, "%s: \"weight_map\" must be an object", index_path);
  const char *duplicate = NULL;
  if (vlm_json_object_has_duplicates(weight_map, &duplicate))
    return VLM_ERROR(DATA_LOSS, "%s: tensor '%s' is listed twice in \"weight_map\"",
                     index_path, duplicate ? duplicate : "?");
  size_t count = weight_map->as.object.count;
  index_entry *entries = calloc(count ? count : 1, sizeof(*entries));
  if (!entries) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (size_t i = 0; i < count; i++) {
    const vlm_json_member *member = &weight_map->as.object.members[i];
    const char *file_name = vlm_json_get_string(&member->value);
    if (!file_name || !is_plain_file_name(file_name) ||
        strlen(file_name) != member->value.as.string.length) {
      free(entries);
      return VLM_ERROR(DATA_LOSS,
                       "%s: tensor '%s' maps to an invalid shard file name (must be a "
                       "plain file name in the model directory)",
                       index_path, member->key);
    }
    entries[i].tensor = member->key;
    entries[i].shard_file = file_name;
  }
  *out_entries = entries;
  *out_count = count;
  return VLM_OK;
}

/* Opens each distinct shard named by the index once. */
static vlm_status open_indexed_shards(vlm_checkpoint *checkpoint, const index_entry *entries,
                                      size_t count, const char *index_path) {
  const char **names = calloc(count ? count : 1, sizeof(*names));
  if (!names) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  size_t distinct = 0;
  for (size_t i = 0; i < count; i++) {
    bool seen = false;
    for (size_t j = 0; j < distinct && !seen; j++) seen = strcmp(names[j], entries[i].shard_file) == 0;
    if (!seen) names[distinct++] = entries[i].shard_file;
  }
  vlm_status status = VLM_OK;
  if (distinct > MAX_SHARDS)
    status = VLM_ERROR(OUT_OF_RANGE, "%s: %zu shards exceed the limit of %d", index_path,
                       distinct, MAX_SHARDS);
  if (!status) {
    checkpoint->shards = calloc(distinct ? distinct : 1, sizeof(*checkpoint->shards));
    if (!checkpoint->shards) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  for (size_t i = 0; i < distinct && !status; i++) status = open_shard(checkpoint, names[i]);
  free(names);
  return status;
}

/* The index and the shards must agree: every listed tensor is in the shard
 * it names, and every shard tensor is listed. */
static vlm_status check_index_agrees(vlm_checkpoint *checkpoint, index_entry *entries,
                                     size_t count, const char *index_path) {
  size_t in_shards = 0;
  for (size_t s = 0; s < checkpoint->shard_count; s++) in_shards += checkpoint->shards[s].entry_count;
  qsort(entries, count, sizeof(*entries), compare_index_tensor);
  for (size_t s = 0; s < checkpoint->shard_count; s++) {
    const vlm_safetensors_file *shard = &checkpoint->shards[s];
    const char *shard_file = strrchr(shard->path, '/') ? strrchr(shard->path, '/') + 1 : shard->path;
    for (size_t e = 0; e < shard->entry_count; e++) {
      index_entry key = {shard->entries[e].name, NULL};
      index_entry *found = bsearch(&key, entries, count, sizeof(*entries), compare_index_tensor);
      if (!found)
        return VLM_ERROR(DATA_LOSS, "%s: tensor '%s' is in %s but not in the index",
                         index_path, key.tensor, shard_file);
      if (strcmp(found->shard_file, shard_file) != 0)
        return VLM_ERROR(DATA_LOSS, "%s: tensor '%s' is listed in %s but stored in %s",
                         index_path, key.tensor, found->shard_file, shard_file);
    }
  }
  if (in_shards != count) {
    for (size_t i = 0; i < count; i++) {
      bool found = false;
      for (size_t s = 0; s < checkpoint->shard_count && !found; s++) {
        const vlm_safetensors_file *shard = &checkpoint->shards[s];
        for (size_t e = 0; e < shard->entry_count && !found; e++)
          found = strcmp(shard->entries[e].name, entries[i].tensor) == 0;
      }
      if (!found)
        return VLM_ERROR(DATA_LOSS, "%s: tensor '%s' is listed in %s but missing there",
                         index_path, entries[i].tensor, entries[i].shard_file);
    }
  }
  return VLM_OK;
}

static vlm_status open_sharded(vlm_checkpoint *checkpoint, const char *index_path) {
  vlm_json_document index;
  vlm_status status = VLM_OK;
  char *contents = NULL;
  size_t length = 0;
  VLM_RETURN_IF_ERROR(vlm_file_read_all(index_path, MAX_INDEX_BYTES, &contents, &length));
  status = vlm_json_parse(contents, length, NULL, checkpoint->allocator, index_path, &index);
  free(contents);
  if (status) return status;
  index_entry *entries = NULL;
  size_t count = 0;
  status = read_weight_map(&index, index_path, &entries, &count);
  if (!status) status = open_indexed_shards(checkpoint, entries, count, index_path);
  if (!status) status = check_index_agrees(checkpoint, entries, count, index_path);
  free(entries);
  vlm_json_document_release(&index);
  return status;
}

/* The options' extra files, after the model's own shards. */
static vlm_status open_extra_files(vlm_checkpoint *checkpoint, const vlm_checkpoint_options *options) {
  if (!options || !options->extra_file_count) return VLM_OK;
  vlm_safetensors_file *grown =
      realloc(checkpoint->shards, (checkpoint->shard_count + options->extra_file_count) * sizeof(*grown));
  if (!grown) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  checkpoint->shards = grown;
  for (size_t i = 0; i < options->extra_file_count; i++) {
    const char *path = options->extra_files[i].path;
    if (!path || !path[0] || path[0] == '/' || strstr(path, ".."))
      return VLM_ERROR(INVALID_ARGUMENT, "checkpoint: extra file '%s' is not a path inside the model directory",
                       path ? path : "");
    memset(&checkpoint->shards[checkpoint->shard_count], 0, sizeof(*grown));
    VLM_RETURN_IF_ERROR(open_shard(checkpoint, path));
  }
  return VLM_OK;
}

vlm_status vlm_checkpoint_open(const char *model_dir, const vlm_checkpoint_options *options,
                               vlm_checkpoint **out_checkpoint) {
  *out_checkpoint = NULL;
  vlm_checkpoint *checkpoint = calloc(1, sizeof(*checkpoint));
  if (!checkpoint) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  checkpoint->allocator = options ? options->allocator : NULL;
  checkpoint->directory = strdup(model_dir);
  vlm_arena_init(&checkpoint->names, checkpoint->allocator, 16 * 1024);
  char *index_path = vlm_path_join(model_dir, INDEX_FILE_NAME);
  char *single_path = vlm_path_join(model_dir, SINGLE_FILE_NAME);
  vlm_status status = VLM_OK;
  if (!checkpoint->directory || !index_path || !single_path) {
    status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  } else if (vlm_path_exists(index_path)) {
    status = open_sharded(checkpoint, index_path);
  } else if (vlm_path_exists(single_path)) {
    checkpoint->shards = calloc(1, sizeof(*checkpoint->shards));
    status = checkpoint->shards ? open_shard(checkpoint, SINGLE_FILE_NAME)
                                : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  } else {
    status = VLM_ERROR(NOT_FOUND, "%s: no %s or %s (is this a Hugging Face model directory?)",
                       model_dir, SINGLE_FILE_NAME, INDEX_FILE_NAME);
  }
  free(index_path);
  free(single_path);
  checkpoint->main_shard_count = checkpoint->shard_count;
  if (!status) status = open_extra_files(checkpoint, options);
  if (!status) status = build_table(checkpoint, options);
  if (status) {
    vlm_checkpoint_release(checkpoint);
    return status;
  }
  *out_checkpoint = checkpoint;
  return VLM_OK;
}

void vlm_checkpoint_release(vlm_checkpoint *checkpoint) {
  if (!checkpoint) return;
  for (size_t s = 0; s < checkpoint->shard_count; s++) vlm_safetensors_close(&checkpoint->shards[s]);
  free(checkpoint->shards);
  free(checkpoint->tensors);
  free(checkpoint->hash_slots);
  vlm_arena_reset(&checkpoint->names);
  free(checkpoint->directory);
  free(checkpoint);
}

size_t vlm_checkpoint_tensor_count(const vlm_checkpoint *checkpoint) {
  return checkpoint->tensor_count;
}

const vlm_tensor_info *vlm_checkpoint_tensor_at(const vlm_checkpoint *checkpoint,
                                                size_t index) {
  return index < checkpoint->tensor_count ? &checkpoint->tensors[index] : NULL;
}

size_t vlm_checkpoint_main_shard_count(const vlm_checkpoint *checkpoint) { return checkpoint->main_shard_count; }

size_t vlm_checkpoint_shard_count(const vlm_checkpoint *checkpoint) {
  return checkpoint->shard_count;
}

const char *vlm_checkpoint_shard_path(const vlm_checkpoint *checkpoint, size_t shard) {
  return shard < checkpoint->shard_count ? checkpoint->shards[shard].path : NULL;
}

uint64_t vlm_checkpoint_total_bytes(const vlm_checkpoint *checkpoint) {
  return checkpoint->total_bytes;
}

void vlm_checkpoint_evict(const vlm_checkpoint *checkpoint, const void *data, size_t size) {
  const uint8_t *begin = data, *end = begin + size;
  for (size_t i = 0; i < checkpoint->shard_count; i++) {
    const vlm_file_map *map = &checkpoint->shards[i].map;
    if (begin < map->data || end > map->data + map->size) continue;
    /* Whole pages only: a page shared with a neighbouring tensor stays. The
     * map is private and read-only, so no page was ever copied on write and
     * MADV_DONTNEED only drops the mapping (a later read refills it from the
     * page cache or the file). */
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t first = ((uintptr_t)begin + page - 1) / page * page, last = (uintptr_t)end / page * page;
    if (last > first) madvise((void *)first, last - first, MADV_DONTNEED);
    return;
  }
}

const char *vlm_checkpoint_directory(const vlm_checkpoint *checkpoint) {
  return checkpoint->directory;
}

vlm_status vlm_checkpoint_get(const vlm_checkpoint *checkpoint, const char *name,
                              vlm_dtype dtype, int rank, const int64_t *shape,
                              vlm_tensor *out_view) {
  memset(out_view, 0, sizeof(*out_view));
  const vlm_tensor_info *info = vlm_checkpoint_find(checkpoint, name);
  if (!info)
    return VLM_ERROR(NOT_FOUND, "%s: tensor '%s' not found in the checkpoint",
                     checkpoint->directory, name);
  if (dtype != VLM_DTYPE_INVALID && info->dtype != dtype)
    return VLM_ERROR(INVALID_ARGUMENT, "%s: tensor '%s' has dtype %s, expected %s",
                     checkpoint->directory, name, vlm_dtype_name(info->dtype),
                     vlm_dtype_name(dtype));
  if (rank >= 0) {
    bool matches = info->rank == rank;
    for (int i = 0; matches && i < rank; i++) matches = shape[i] < 0 || shape[i] == info->shape[i];
    if (!matches) {
      char actual[160], expected[160];
      return VLM_ERROR(INVALID_ARGUMENT, "%s: tensor '%s' has shape %s, expected %s",
                       checkpoint->directory, name,
                       vlm_shape_format(info->shape, info->rank, actual, sizeof(actual)),
                       vlm_shape_format(shape, rank, expected, sizeof(expected)));
    }
  }
  return vlm_tensor_borrow(info->dtype, info->rank, info->shape, (void *)info->data, out_view);
}
