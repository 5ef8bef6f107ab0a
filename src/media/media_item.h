/* A media item: one image or audio clip (later a video) after its
 * processor (image processor or feature extractor), owned, ready for the
 * family's encoder.
 *
 * It carries the processor's outputs as named tensors under the names
 * Transformers gives them ("pixel_values", "image_grid_thw", ...), the
 * processor's grid (the extent the item covers: for Qwen2-VL t, h, w in
 * patches; for fixed-size processors 1, height, width in pixels), and the
 * number of placeholder tokens it expands to in the prompt (the family
 * decides that count; see vlm_family_image). Engine, encoders and prompt
 * expansion read items only through these fields, so a family with other
 * tensors (crops, pooling indices, audio features and masks) needs no
 * change outside its own files. */
#ifndef VLM_MEDIA_MEDIA_ITEM_H
#define VLM_MEDIA_MEDIA_ITEM_H

#include <stdint.h>

#include "core/tensor_list.h"
#include "vlm.h"

typedef enum vlm_media_kind {
  VLM_MEDIA_IMAGE = 0,
  VLM_MEDIA_AUDIO,
  VLM_MEDIA_VIDEO,
  VLM_MEDIA_KIND_COUNT
} vlm_media_kind;

/* "image", "audio", "video" (stable: usage and metrics keys). */
const char *vlm_media_kind_name(vlm_media_kind kind);

/* Memory an item's tensors hold against a budget of its owner's (the
 * engine's media memory budget), given back by vlm_media_item_release:
 * an item keeps its features charged from preprocessing until the request
 * that took it is done, refused or cancelled. Not part of the digest. */
typedef struct vlm_media_charge {
  void (*release)(void *owner, uint64_t bytes);
  void *owner;
  uint64_t bytes;
} vlm_media_charge;

typedef struct vlm_media_item {
  vlm_media_kind kind;
  vlm_tensor_list tensors;     /* the processor's outputs, by Transformers' names */
  int64_t grid[3];             /* the processor's grid (see above) */
  int64_t token_count;         /* placeholder tokens in the expanded prompt */
  const char *processor;       /* the class that made it (static string) */
  int64_t source_width, source_height; /* the decoded image's size */
  /* An audio clip's file: rate, channels, and its duration in seconds. */
  int64_t source_sample_rate, source_channels;
  double source_seconds;
  double preprocess_seconds;   /* decode + processor */
  /* The kinds of media of the request the item belongs to (bit 1 << kind),
   * set by the engine when a request takes the item (0 before): an encoder
   * may depend on them, as Phi-4-multimodal's audio projection does on
   * whether the request also has an image. Part of the digest. */
  uint32_t request_kinds;
  /* The OR over the request's images of what their family says each
   * image's encoding depends on in the others (vlm_family_image's
   * item_traits: Phi-4-multimodal's tower runs causally unless some image
   * of the call has a padded patch), set with request_kinds. Part of the
   * digest. */
  uint32_t request_traits;
  /* SHA-256 of what the encoder reads (vlm_media_item_digest), set by the
   * engine when a request takes the item: the prefix and encoder caches' key. */
  uint8_t content_digest[32];
  vlm_media_charge charge;     /* zero: charged to nothing */
} vlm_media_item;

/* A batch of processor outputs as Transformers' processor returns them for
 * several items at once (its __call__ keys: pixel_values [images, ...],
 * image_grid_thw [images, 3], ...), read by name through `get` (NOT_FOUND
 * when the batch has no such tensor). Each processor class says how item
 * `index` of such a batch is laid out (its item_from_batch), so items made
 * elsewhere (the oracle's goldens) come back as vlm's own without anyone
 * else knowing a class's layout. */
typedef struct vlm_processor_outputs {
  void *context;
  vlm_status (*get)(void *context, const char *name, vlm_tensor *out);
} vlm_processor_outputs;

/* The tensor `name`, or NULL. */
const vlm_named_tensor *vlm_media_item_tensor(const vlm_media_item *item, const char *name);
/* SHA-256 over everything an encoder can read of the item: its kind, the
 * processor class, grid, token count, request_kinds and request_traits, and every tensor's name, dtype,
 * shape and bytes. The processor's outputs already reflect its config, so
 * two items with equal digests give the same features on one model; a
 * different image with the same placeholder count differs in its pixels. */
void vlm_media_item_digest(const vlm_media_item *item, uint8_t out_digest[32]);
/* Bytes of the item's tensors' data. */
uint64_t vlm_media_item_bytes(const vlm_media_item *item);
/* Gives back the item's charge, frees the tensors and zeroes the item
 * (NULL: nothing). */
void vlm_media_item_release(vlm_media_item *item);

#endif
