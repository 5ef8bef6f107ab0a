/* Ogg Vorbis headers checked before libsndfile reads them (audio_ogg.c). */
#ifndef VLM_MEDIA_AUDIO_OGG_H
#define VLM_MEDIA_AUDIO_OGG_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* OK when `data` starts with a complete set of Vorbis headers as
 * libsndfile's reader takes them; DATA_LOSS naming the problem otherwise.
 * Reads only as far as the headers; allocates nothing that outlives it. */
vlm_status vlm_ogg_vorbis_check_headers(const uint8_t *data, size_t size);

#endif
