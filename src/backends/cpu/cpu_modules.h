/* The cpu backend's modules behind the engine's tables
 * (src/models/modules.h): the text decoder (text_model.c) and, in
 * cpu_encoder.h, the media encoder. */
#ifndef VLM_BACKENDS_CPU_CPU_MODULES_H
#define VLM_BACKENDS_CPU_CPU_MODULES_H

#include "backends/cpu/cpu_encoder.h"
#include "backends/cpu/text_model.h"
#include "models/modules.h"

/* The text decoder of `model` with `options`' geometry. */
vlm_status vlm_text_decoder_open_cpu(vlm_model *model, const vlm_text_model_options *options,
                                     vlm_text_decoder **out_decoder);

#endif
