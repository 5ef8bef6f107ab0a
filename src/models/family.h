/* Model families: what each architecture expects to find in a checkpoint.
 *
 * A family file (src/models/<family>.c) declares, from a parsed config, every
 * tensor the architecture needs, with its shape and the component it belongs
 * to, built from the shared declarations in src/models/blocks.h (a Llama-style
 * decoder layer, a ViT encoder layer, ...). Later issues extend the same
 * family record with the compute graph; the tensor list is its first half.
 *
 * Components matter beyond reporting: the vision side of a request loads only
 * vision-tower, projector and embedding tensors, never the decoder's. */
#ifndef VLM_MODELS_FAMILY_H
#define VLM_MODELS_FAMILY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/alloc.h"
#include "core/tensor.h"
#include "io/checkpoint.h"
#include "io/config.h"
#include "vlm.h"

typedef enum vlm_component {
  VLM_COMPONENT_TEXT_DECODER = 0, /* decoder layers and final norm */
  VLM_COMPONENT_EMBEDDINGS,       /* token embeddings and LM head */
  VLM_COMPONENT_VISION_TOWER,
  VLM_COMPONENT_PROJECTOR,        /* vision (or audio) features -> text space */
  VLM_COMPONENT_AUDIO_TOWER,
  VLM_COMPONENT_OTHER,
  VLM_COMPONENT_COUNT
} vlm_component;

/* "text_decoder", "embeddings", ... (stable: used as JSON keys). */
const char *vlm_component_name(vlm_component component);

typedef struct vlm_expected_tensor {
  const char *name;
  vlm_component component;
  int rank;
  int64_t shape[VLM_MAX_DIMS];
  bool optional; /* may be absent (e.g. lm_head when tied to the embeddings) */
} vlm_expected_tensor;

typedef struct vlm_tensor_manifest {
  vlm_arena arena; /* names */
  vlm_expected_tensor *tensors;
  size_t count, capacity;
  bool out_of_memory;
} vlm_tensor_manifest;

void vlm_manifest_init(vlm_tensor_manifest *manifest);
void vlm_manifest_release(vlm_tensor_manifest *manifest);
/* Declares one tensor. `rank` dimensions follow the name format's arguments
 * as an int64_t array. Records out-of-memory in the manifest (checked once by
 * the caller) so declarations read as a flat list. */
void vlm_manifest_add(vlm_tensor_manifest *manifest, vlm_component component, int rank,
                      const int64_t *shape, const char *name_format, ...)
    __attribute__((format(printf, 5, 6)));
/* Marks the most recently added tensor optional. */
void vlm_manifest_mark_optional(vlm_tensor_manifest *manifest);
/* Finds a declared tensor by name (linear; manifests are small). */
const vlm_expected_tensor *vlm_manifest_find(const vlm_tensor_manifest *manifest,
                                             const char *name);

struct vlm_decoder_description;
struct vlm_vision_description;

typedef struct vlm_family {
  const char *model_type;   /* config.json model_type */
  const char *display_name; /* "LLaVA-1.5" */
  bool has_vision, has_audio;
  /* How Transformers turns a rendered chat prompt into ids for this model:
   * through its processor (multimodal families: special tokens added unless
   * the prompt starts with bos_token) or its tokenizer (none added). */
  vlm_prompt_flow prompt_flow;
  /* Renames from older Transformers checkpoint layouts to canonical names. */
  const vlm_name_rename *renames;
  size_t rename_count;
  /* Declares every tensor of the architecture. */
  vlm_status (*declare_tensors)(const vlm_model_config *config,
                                vlm_tensor_manifest *manifest);
  /* Describes the text decoder for the shared decoder graph
   * (src/models/decoder.h); NULL while the family's decoder is not wired. */
  void (*describe_decoder)(const vlm_model_config *config,
                           struct vlm_decoder_description *out);
  /* Describes the vision encoder and projector for the shared vision graph
   * (src/models/vision_encoder.h), refusing config values it cannot honour;
   * NULL while the family's vision path is not wired. */
  vlm_status (*describe_vision)(const vlm_model_config *config,
                                struct vlm_vision_description *out);
} vlm_family;

/* The family for a model_type, or NULL when no family declares it. */
const vlm_family *vlm_family_find(const char *model_type);
/* The registry in order: families [0, vlm_family_count()). */
size_t vlm_family_count(void);
const vlm_family *vlm_family_at(size_t index);
/* Comma-separated model_types with a family, for error messages. */
const char *vlm_family_supported_list(void);

/* Guesses a tensor's component from its canonical name, for tensors no
 * manifest declares (unexpected ones, or families without a manifest yet). */
vlm_component vlm_component_from_name(const char *name);

#endif
