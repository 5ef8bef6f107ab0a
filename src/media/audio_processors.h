/* The audio feature extractor registry: the classes AutoFeatureExtractor /
 * AutoProcessor resolve to in the pinned Transformers (the config's
 * feature_extractor_type, src/io/feature_extractor_config.h), each turning
 * a decoded clip (mono float32 at the class's sampling_rate, vlm/audio.h)
 * into a media item of kind audio exactly as that class does.
 *
 * Adding an extractor means one entry here and its own file; nothing in
 * the engine names a feature extractor class. */
#ifndef VLM_MEDIA_AUDIO_PROCESSORS_H
#define VLM_MEDIA_AUDIO_PROCESSORS_H

#include <stdint.h>

#include "io/feature_extractor_config.h"
#include "media/media_item.h"

typedef struct vlm_audio_processor_class {
  const char *name; /* "Phi4MultimodalFeatureExtractor" */
  /* The extractor's tensors and grid into `out` (kind, tensors, grid,
   * processor; the caller sets the token count and the source fields).
   * `samples` are at config->sampling_rate. */
  vlm_status (*preprocess)(const vlm_feature_extractor_config *config, const float *samples, int64_t count,
                           const vlm_allocator *allocator, vlm_media_item *out);
  /* Clip `index` of a batch of this class's outputs (media_item.h), as
   * `preprocess` makes it for that clip alone (tensors, grid, processor;
   * the caller sets the token count). */
  vlm_status (*item_from_batch)(const vlm_processor_outputs *batch, int64_t index, vlm_media_item *out);
  /* The placeholder count `preprocess` gives a clip of `samples` samples at
   * config->sampling_rate (Phi-4: audio_embed_sizes), without a sample:
   * what admission counts from a file's header before decoding. 0 for a
   * clip too short to process. Non-decreasing in `samples`. */
  int64_t (*tokens_for_samples)(const vlm_feature_extractor_config *config, int64_t samples);
} vlm_audio_processor_class;

/* The class for `config` (its feature_extractor_type), or UNIMPLEMENTED
 * naming it and the supported ones. */
vlm_status vlm_audio_processor_find(const vlm_feature_extractor_config *config,
                                    const vlm_audio_processor_class **out);

#endif
