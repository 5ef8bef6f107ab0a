/* A golden case's images as media items, built from the processor outputs
 * the oracle recorded ("processor.<name>" golden tensors, Transformers'
 * names and batch layout), so the encoder and prompt stages are proven
 * independently of vlm's own image processor (whose stages are
 * processor.*). bfloat16 cases hold no processor tensors (the oracle runs
 * the processor in float32 whatever the model dtype): each image's come
 * from a float32 sibling case of the same family that processed the same
 * image file. */
#ifndef VLM_VALIDATE_GOLDEN_MEDIA_H
#define VLM_VALIDATE_GOLDEN_MEDIA_H

#include "media/media_item.h"
#include "validate/compare.h"

/* items[i] for each of the case's images (its manifest "images"), then its
 * audio clip, with the family's placeholder count and the request's kinds
 * (media_item.h); *out_count 0 for a case without media.
 * Release each with vlm_media_item_release, then free the array. */
vlm_status vlm_golden_media_items(const vlm_compare_context *context, vlm_media_item **out_items, int *out_count);
void vlm_golden_media_items_release(vlm_media_item *items, int count);
/* Audio clips the case's manifest lists ("audio"); their items follow the
 * images in vlm_golden_media_items, from processor.audio_input_features. */
int vlm_golden_audio_count(const vlm_golden_case *golden);

#endif
