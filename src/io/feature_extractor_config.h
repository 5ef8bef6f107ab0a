/* The audio feature extractor's config, found where transformers 5.23.0's
 * FeatureExtractionMixin.get_feature_extractor_dict finds it:
 * processor_config.json's nested "feature_extractor" (else
 * "audio_processor") when there is one, preprocessor_config.json
 * otherwise. Its class is the dict's "feature_extractor_type" (what
 * AutoFeatureExtractor / AutoProcessor resolve it to); values are the
 * class's __init__ defaults overlaid key by key with the file.
 *
 * A preprocessor_config.json of an image model is not a feature extractor:
 * one without feature_extractor_type, or whose feature_extractor_type is a
 * legacy image class name ("CLIPFeatureExtractor"), gives NOT_FOUND. A
 * class vlm has no defaults for loads with `supported` false (the model
 * still opens; audio for it is refused, naming the class). */
#ifndef VLM_IO_FEATURE_EXTRACTOR_CONFIG_H
#define VLM_IO_FEATURE_EXTRACTOR_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/config.h"

typedef struct vlm_feature_extractor_config {
  const char *feature_extractor_type; /* as the file names it */
  const char *source;                 /* "processor_config.json (audio_processor)", "preprocessor_config.json" */
  bool supported;                     /* vlm knows the class (its values below are read) */
  /* SequenceFeatureExtractor */
  int64_t feature_size;               /* mel bins */
  int64_t sampling_rate;              /* Hz the waveform must have */
  double padding_value;
  /* Spectrogram framing (Phi4MultimodalFeatureExtractor's names) */
  int64_t hop_length, n_fft, win_length;
  double preemphasis;
  double mel_min_frequency, mel_max_frequency;
  /* Token count: ceil(ceil(frames * feat_stride / compression) / downsample) */
  int64_t audio_compression_rate, audio_downsample_rate, audio_feat_stride;
  const vlm_json_value *section;      /* the merged values, for class-specific extras */
  vlm_config_storage *storage;
} vlm_feature_extractor_config;

/* Reads model_dir's processor_config.json / preprocessor_config.json;
 * NOT_FOUND when neither holds a feature extractor. */
vlm_status vlm_feature_extractor_config_load(const char *model_dir, const vlm_allocator *allocator,
                                             vlm_feature_extractor_config *out);
/* Either text may be NULL (file absent). */
vlm_status vlm_feature_extractor_config_parse(const char *preprocessor_text, size_t preprocessor_length,
                                              const char *processor_text, size_t processor_length,
                                              const vlm_allocator *allocator, vlm_feature_extractor_config *out);
void vlm_feature_extractor_config_release(vlm_feature_extractor_config *config);

/* A feature extractor class's defaults table ({"class", "fields"}; NULL if
 * vlm has none), kept in its record (io/config_record.h). */
const char *vlm_feature_extractor_defaults_json(const char *class_name);

#endif
