/* The image processor registry: the classes AutoProcessor resolves to in
 * the pinned Transformers (by the config's image_processor_type, without
 * the Fast/Pil suffix), each turning a decoded image into a media item
 * exactly as that class's default (torchvision) backend does.
 *
 * Adding a processor means one entry here and its own file; nothing in the
 * engine names a processor class. */
#ifndef VLM_MEDIA_IMAGE_PROCESSORS_H
#define VLM_MEDIA_IMAGE_PROCESSORS_H

#include <stdint.h>

#include "io/config.h"
#include "media/media_item.h"
#include "vlm/media.h"

/* Which of Transformers' two implementations of a class to reproduce: the
 * default torchvision-backed one (what AutoProcessor loads) or the Pil one
 * (`<Class>Pil`), within the tolerance each processor's file states. */
typedef enum vlm_image_backend {
  VLM_IMAGE_BACKEND_TORCHVISION = 0,
  VLM_IMAGE_BACKEND_PIL = 1,
} vlm_image_backend;

typedef struct vlm_image_processor_class {
  const char *name; /* "CLIPImageProcessor" */
  /* The grid an image of width x height gets (media_item.h), from its
   * size alone, so placeholder tokens can be counted before decoding;
   * NOT_FOUND when the class cannot tell without the pixels. */
  vlm_status (*grid)(const vlm_processor_config *config, int64_t width, int64_t height, int64_t out_grid[3]);
  /* The processor's tensors (under Transformers' names: pixel_values,
   * image_grid_thw, ...) and grid into `out`; the caller sets the kind
   * and the token count. */
  vlm_status (*preprocess)(const vlm_processor_config *config, const vlm_image *image, vlm_image_backend backend,
                           const vlm_allocator *allocator, vlm_media_item *out);
  /* Transformers' name for this class's pixels ("pixel_values"): whether
   * a batch (media_item.h) holds its outputs at all. */
  const char *pixels_name;
  /* Image `index` of a batch of this class's outputs, as `preprocess`
   * makes it for that image alone (tensors and grid; the caller sets the
   * kind and the token count); DATA_LOSS when the batch is not laid out as
   * the class lays it out. */
  vlm_status (*item_from_batch)(const vlm_processor_outputs *batch, int64_t index, vlm_media_item *out);
} vlm_image_processor_class;

/* The class for `config` (its image_processor_type), or UNIMPLEMENTED
 * naming it and the supported ones. */
vlm_status vlm_image_processor_find(const vlm_processor_config *config, const vlm_image_processor_class **out);

#endif
