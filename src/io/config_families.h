/* Internal: reading the typed parts of a model config from merged sections.
 * config_text.c holds the text decoders and RoPE, config_encoders.c the
 * vision and audio encoders; config.c decides which section is which. */
#ifndef VLM_IO_CONFIG_FAMILIES_H
#define VLM_IO_CONFIG_FAMILIES_H

#include "io/config.h"
#include "io/config_reader.h"

/* True when model_type names a text decoder class config_text.c knows. */
bool vlm_config_is_text_model_type(const char *model_type);
/* The text decoder model types, for error messages. */
const char *vlm_config_text_model_types(void);

/* Reads a text decoder; `tie_fallback` is used when the section has no
 * tie_word_embeddings of its own. */
vlm_status vlm_text_config_read(const vlm_config_section *section,
                                const vlm_config_class *config_class, bool tie_fallback,
                                vlm_text_config *out);

bool vlm_config_is_vision_model_type(const char *model_type);
bool vlm_config_is_audio_model_type(const char *model_type);
vlm_status vlm_vision_config_read(const vlm_config_section *section,
                                  const vlm_config_class *config_class,
                                  vlm_vision_config *out);
vlm_status vlm_audio_config_read(const vlm_config_section *section,
                                 const vlm_config_class *config_class,
                                 vlm_audio_config *out);

#endif
