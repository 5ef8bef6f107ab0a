/* A Hugging Face checkpoint's weights: one `model.safetensors`, or the shards
 * named by `model.safetensors.index.json`, all memory-mapped, with one table
 * from tensor name to its bytes.
 *
 * Tensor names can be normalised on load with prefix renames, because the same
 * model is saved under different names by different Transformers versions
 * (v4 wrote LLaVA's decoder as "language_model.model.layers.*", v5 writes
 * "model.language_model.layers.*"). Families declare their renames; the
 * table then holds canonical names and remembers each file's own spelling
 * for messages. */
#ifndef VLM_IO_CHECKPOINT_H
#define VLM_IO_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"
#include "io/safetensors.h"
#include "vlm.h"

typedef struct vlm_tensor_info {
  const char *name;          /* canonical name */
  const char *stored_name;   /* name in the file */
  int shard;                 /* index into the checkpoint's shards */
  vlm_dtype dtype;
  int rank;
  int64_t shape[VLM_MAX_DIMS];
  const uint8_t *data;
  uint64_t byte_size;
} vlm_tensor_info;

typedef struct vlm_name_rename {
  const char *from_prefix;
  const char *to_prefix;
} vlm_name_rename;

/* A further safetensors file of the model directory whose tensors join the
 * table under a prefix of their own (a PEFT adapter's
 * "vision-lora/adapter_model.safetensors": "base_model.model.x" becomes
 * "adapters.vision-lora.x"). Every tensor of the file must start with
 * `from_prefix`. */
typedef struct vlm_checkpoint_extra_file {
  const char *path;                /* relative to the model directory */
  const char *from_prefix, *to_prefix;
} vlm_checkpoint_extra_file;

typedef struct vlm_checkpoint_options {
  const vlm_allocator *allocator;
  /* Applied in order; the first matching prefix wins. May be NULL. */
  const vlm_name_rename *renames;
  size_t rename_count;
  const vlm_checkpoint_extra_file *extra_files; /* may be NULL */
  size_t extra_file_count;
} vlm_checkpoint_options;

typedef struct vlm_checkpoint vlm_checkpoint;

/* Opens the weights of `model_dir`. Prefers model.safetensors.index.json
 * (sharded) and falls back to model.safetensors. Every shard's header is
 * validated; the index and the shards must agree exactly. */
vlm_status vlm_checkpoint_open(const char *model_dir, const vlm_checkpoint_options *options,
                               vlm_checkpoint **out_checkpoint);
void vlm_checkpoint_release(vlm_checkpoint *checkpoint);

size_t vlm_checkpoint_tensor_count(const vlm_checkpoint *checkpoint);
/* Tensors sorted by canonical name. */
const vlm_tensor_info *vlm_checkpoint_tensor_at(const vlm_checkpoint *checkpoint,
                                                size_t index);
const vlm_tensor_info *vlm_checkpoint_find(const vlm_checkpoint *checkpoint,
                                           const char *name);
size_t vlm_checkpoint_shard_count(const vlm_checkpoint *checkpoint);
const char *vlm_checkpoint_shard_path(const vlm_checkpoint *checkpoint, size_t shard);
uint64_t vlm_checkpoint_total_bytes(const vlm_checkpoint *checkpoint);
/* Shards [0, main) are the model's own; the rest are the options' extra
 * files, in order (their stored names may repeat another file's: a PEFT
 * adapter stores every module under the same names). */
size_t vlm_checkpoint_main_shard_count(const vlm_checkpoint *checkpoint);
const char *vlm_checkpoint_directory(const vlm_checkpoint *checkpoint);

/* Tells the kernel that bytes [data, data + size) of a mapped shard will not
 * be read soon: the whole pages inside the range leave this process's
 * resident set (a backend that keeps its own repacked copy of a tensor calls
 * this, so the weights are not resident twice). Reading them later faults
 * them back from the file: correct, only slower. Does nothing for a range
 * outside the shards' maps. */
void vlm_checkpoint_evict(const vlm_checkpoint *checkpoint, const void *data, size_t size);

/* Looks a tensor up and checks it: `dtype` VLM_DTYPE_INVALID accepts any
 * dtype; `shape` entries of -1 accept any extent; `rank` -1 skips the shape
 * check. On success `out_view` borrows the mapped bytes. Errors name the
 * tensor, the checkpoint and what differs. */
vlm_status vlm_checkpoint_get(const vlm_checkpoint *checkpoint, const char *name,
                              vlm_dtype dtype, int rank, const int64_t *shape,
                              vlm_tensor *out_view);

#endif
