/* An opened checkpoint directory: config.json (with Transformers'
 * defaults), generation_config.json, the processor config when there is
 * one, the family that implements the model_type, its tensor manifest, and
 * one validated memory mapping of the weights.
 *
 * Everything that runs a model shares one: the text decoder (on any
 * backend), the encoders, the engine, `vlm inspect`, `vlm compile` and
 * `vlm compare`. Opening maps but reads no tensor data. Reference counted:
 * each holder retains it and releases it when done; the last release frees
 * it. Thread-safe to share once opened (read-only). */
#ifndef VLM_MODEL_H
#define VLM_MODEL_H

#include "vlm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vlm_model vlm_model;

typedef struct vlm_model_options {
  const vlm_allocator *allocator; /* NULL: the system allocator */
  /* What the model's processor is called with, as a JSON object of image
   * processor settings (Transformers' processor(images, text, **kwargs),
   * e.g. {"do_pan_and_scan": true} for Gemma 3); NULL: none. A key the
   * image processor does not have is refused at open. */
  const char *processor_kwargs;
  /* The dtype Transformers' from_pretrained(dtype=...) would run the model
   * in ("float32", "bfloat16", ...; NULL: "auto", config.json's). vlm
   * computes in float32 either way; what depends on it is what Transformers
   * rounds to that dtype outside the weights (Gemma's embedding scale). */
  const char *dtype;
  /* "q8" or "q4": the text decoder's linear weights (f32, bf16 or f16) are
   * quantized group-wise when its cpu backend packs them (docs/KERNELS.md,
   * "Quantized weights"); NULL or "none": as stored. Vision and audio
   * towers stay unquantized; the xla backend refuses it. */
  const char *quantize;
} vlm_model_options;

/* Fails on an unreadable or malformed config, processor config or
 * safetensors header (the message names the file). A model_type without a
 * family in vlm opens (so `vlm inspect` can report it); what needs the
 * family refuses it then, naming the supported types. `model_dir` may also
 * be a Hugging Face model id ORG/NAME[@REVISION] found in the local hub
 * cache (HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub);
 * an existing path wins. What vlm cannot run (a file, a .gguf,
 * pytorch_model.bin only, tokenizer.model without tokenizer.json, a packed
 * test model) is refused saying what to do. Nothing is downloaded. */
vlm_status vlm_model_open(const char *model_dir, const vlm_model_options *options, vlm_model **out_model);
/* Adds a reference and returns `model`. */
vlm_model *vlm_model_retain(vlm_model *model);
/* Drops a reference (NULL: nothing). */
void vlm_model_release(vlm_model *model);

const char *vlm_model_directory(const vlm_model *model);
/* config.json's model_type. */
const char *vlm_model_type(const vlm_model *model);

#ifdef __cplusplus
}
#endif

#endif
