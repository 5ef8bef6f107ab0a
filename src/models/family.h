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
  /* A second shape the tensor may have (rank 0: none), e.g. an expert
   * tensor in the hub's [in, out] layout. */
  int alternative_rank;
  int64_t alternative_shape[VLM_MAX_DIMS];
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
/* Lets the most recently added tensor have `shape` instead. */
void vlm_manifest_allow_shape(vlm_tensor_manifest *manifest, int rank, const int64_t *shape);
/* Whether a tensor of this rank and shape is what `expected` declares. */
bool vlm_expected_shape_matches(const vlm_expected_tensor *expected, int rank, const int64_t *shape);
/* Finds a declared tensor by name (linear; manifests are small). */
const vlm_expected_tensor *vlm_manifest_find(const vlm_tensor_manifest *manifest,
                                             const char *name);

struct vlm_decoder_description;
struct vlm_decoder_step;
struct vlm_graph;
struct vlm_kv_layout;
struct vlm_media_item;
struct vlm_tensor_list;
struct vlm_string_builder;

/* Where an encoder graph's interesting nodes are (for goldens): the
 * output (features, one row per placeholder token, then padding rows) and
 * any number of named intermediates a golden stage may compare. */
#define VLM_ENCODER_MAX_STAGES 8
typedef struct vlm_encoder_nodes {
  int32_t output;
  int stage_count;
  struct {
    const char *stage;   /* golden stage name ("vision_encoder", "vision_features", "projector") */
    int32_t node;
  } stages[VLM_ENCODER_MAX_STAGES];
} vlm_encoder_nodes;

/* Token text by id, for building an expansion (the tokenizer's). */
typedef const char *(*vlm_token_text_fn)(void *context, int64_t id);

/* An `expand` for a processor that repeats its placeholder once per token
 * (LlavaProcessor, Phi4MultimodalProcessor's replace_image_token and
 * replace_audio_token): the item's token_count copies of `placeholder`. */
vlm_status vlm_expand_repeated(const vlm_model_config *config, const struct vlm_media_item *item,
                               const char *placeholder, vlm_token_text_fn token_text, void *context,
                               struct vlm_string_builder *out);

/* A family's image path: how an image's placeholder expands in the prompt
 * (as its Transformers processor does to the text), how many tokens that
 * is, and its encoder graph (tower + projector) built on the shared blocks.
 * Every function reads the model's parsed configs; none keeps state. */
typedef struct vlm_family_image {
  /* The token whose text the processor replaces in the rendered prompt
   * (LLaVA's <image>, Qwen2-VL's <|image_pad|>, Gemma 3's <start_of_image>). */
  int64_t (*placeholder_token)(const vlm_model_config *config);
  /* The text one image part stands for in a message rendered by a template
   * that reads content as a string (vLLM's get_placeholder_str: the engine
   * puts it before the text, vlm_chat_template_options.image_placeholder);
   * NULL: the placeholder token's text, which is the Transformers
   * processor's image_token (Phi-4-multimodal's). */
  const char *(*content_placeholder)(const vlm_model_config *config);
  /* The token of the rows that take the features (masked_scatter's mask);
   * NULL: the placeholder's own (Gemma 3 expands its placeholder into
   * <image_soft_token>s between other tokens). */
  int64_t (*feature_token)(const vlm_model_config *config);
  /* Placeholder tokens for an item of this processor grid (media_item.h). */
  vlm_status (*token_count)(const vlm_model_config *config, const vlm_processor_config *processor,
                            const int64_t grid[3], int64_t *out_count);
  /* Appends what one placeholder becomes (e.g. token_count copies of its
   * text); `placeholder` is the placeholder token's text. */
  vlm_status (*expand)(const vlm_model_config *config, const struct vlm_media_item *item, const char *placeholder,
                       vlm_token_text_fn token_text, void *context, struct vlm_string_builder *out);
  /* Rows the encoder graph processes for this item (its patches). */
  vlm_status (*encoder_rows)(const vlm_model_config *config, const struct vlm_media_item *item, int64_t *out_rows);
  /* The graph's inputs for the item, padded to `rows` >= encoder_rows
   * (padding rows never affect the item's: they form their own attention
   * segment), added to `out`. */
  vlm_status (*encoder_inputs)(const vlm_model_config *config, const struct vlm_media_item *item, int64_t rows,
                               struct vlm_tensor_list *out);
  /* The graph for `rows` encoder rows; its output node holds the features
   * (the item's token_count rows first). */
  vlm_status (*build_encoder)(const vlm_model_config *config, int64_t rows, struct vlm_graph *graph,
                              vlm_encoder_nodes *out_nodes);
  /* Encoder row counts the xla backend compiles functions for (ascending;
   * an item runs in the smallest that holds its rows), given the largest
   * an image can need; count 0: compile exactly encoder_rows. */
  int (*encoder_buckets)(const vlm_model_config *config, const vlm_processor_config *processor, int64_t *out_rows,
                         int capacity);
  /* Bits of an image that the encoding of every image of the same request
   * depends on, when Transformers encodes a request's images in one call
   * whose mode depends on all of them (Phi-4-multimodal: whether some patch
   * is padding); NULL: none. vlm_family_set_request_media ORs them into
   * each item's request_traits. */
  uint32_t (*item_traits)(const vlm_model_config *config, const struct vlm_media_item *item);
} vlm_family_image;

/* A family's audio path, the counterpart of vlm_family_image for items of
 * kind audio (the feature extractor's output, media/audio_processors.h:
 * e.g. audio_input_features [frames, mels] and audio_embed_sizes [1]).
 * The engine drives it exactly as the image path: each audio placeholder
 * of the rendered prompt becomes `expand`'s text (as the Transformers
 * processor's replace_audio_token does), token_count rows take the encoder's
 * features (speech encoder + projector), and the scheduler encodes the item
 * with the backend's audio encoder on the family's graph. No family has one
 * yet (Phi-4-multimodal's conformer is the first); until a family sets it,
 * the engine, `vlm run --audio` and the server refuse audio for the model.
 * Every function reads the model's parsed configs; none keeps state. */
struct vlm_feature_extractor_config;
typedef struct vlm_family_audio {
  /* The token the processor replaces (Phi-4-multimodal's <|audio|>). */
  int64_t (*placeholder_token)(const vlm_model_config *config);
  /* The text one audio part stands for under a string-content template
   * (see vlm_family_image); NULL: the placeholder token's text. */
  const char *(*content_placeholder)(const vlm_model_config *config);
  /* Placeholder tokens for the item (Phi-4: its audio_embed_sizes). */
  vlm_status (*token_count)(const vlm_model_config *config, const struct vlm_feature_extractor_config *extractor,
                            const struct vlm_media_item *item, int64_t *out_count);
  /* Appends what one placeholder becomes; `placeholder` is its text. */
  vlm_status (*expand)(const vlm_model_config *config, const struct vlm_media_item *item, const char *placeholder,
                       vlm_token_text_fn token_text, void *context, struct vlm_string_builder *out);
  /* Rows the encoder graph processes for the item, its inputs padded to
   * `rows`, and the graph (output: token_count feature rows first), as in
   * vlm_family_image. */
  vlm_status (*encoder_rows)(const vlm_model_config *config, const struct vlm_media_item *item, int64_t *out_rows);
  vlm_status (*encoder_inputs)(const vlm_model_config *config, const struct vlm_media_item *item, int64_t rows,
                               struct vlm_tensor_list *out);
  vlm_status (*build_encoder)(const vlm_model_config *config, int64_t rows, struct vlm_graph *graph,
                              vlm_encoder_nodes *out_nodes);
  /* The rows the xla backend compiles for an item of `rows` encoder rows
   * (>= rows: encoder_inputs pads to them, build_encoder builds them, the
   * item's feature rows the same within the xla tolerance), so clips of
   * different lengths share a module; clips have no bounded length, so
   * this maps a length instead of listing buckets. NULL: a function per
   * length. */
  vlm_status (*encoder_bucket)(const vlm_model_config *config, int64_t rows, int64_t *out_rows);
} vlm_family_audio;

/* RoPE positions of an expanded prompt for families whose positions are
 * not consecutive (M-RoPE): out_positions [axes, count] axis-major and the
 * decode delta (max position + 1 - count) that later steps add. */
typedef vlm_status (*vlm_family_positions_fn)(const vlm_model_config *config, const int32_t *ids, int64_t count,
                                             const struct vlm_media_item *const *items, int item_count,
                                             int64_t *out_positions, int64_t *out_delta);

/* Which prompt rows attend to each other both ways during prefill
 * (Transformers' block_sequence_ids, masking_utils.blockwise_overlay): a
 * row with block id >= 0 sees every row of the same id, later ones
 * included, on top of the causal mask (a sliding window still bounds it);
 * -1: causal only. out_blocks [count]; *out_any: whether any row has one.
 * Decode steps are causal whatever the prompt's blocks. */
typedef vlm_status (*vlm_family_attention_blocks_fn)(const vlm_model_config *config, const int32_t *ids,
                                                    int64_t count, int32_t *out_blocks, bool *out_any);

/* A checkpoint layout the family loads, proven by the golden cases under
 * tests/goldens/<goldens> (test_families checks they exist and use a model
 * of the family's model_type). `vlm families` and the README's table list
 * them, so a claim there is one a test stands behind. */
typedef struct vlm_family_layout {
  const char *name;    /* "Transformers 5.23", "hub 4.x", "GPTQ int4" */
  const char *goldens; /* the golden family directory that proves it */
  bool quantized;      /* a pre-quantized checkpoint format (GPTQ, AWQ) */
} vlm_family_layout;

typedef struct vlm_family {
  const char *model_type;   /* config.json model_type */
  const char *display_name; /* "LLaVA-1.5" */
  /* The checkpoint layouts the goldens prove (see vlm_family_layout). */
  const vlm_family_layout *layouts;
  int layout_count;
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
  /* The family's own decoder graph, written on the public blocks of
   * blocks.h (its embedding step, layer loop and head, as its Transformers
   * modeling_*.py forward reads); NULL: the described loop of decoder.h
   * (Llama, Qwen, Gemma 3, Phi-4). It reads the description
   * describe_decoder filled. */
  vlm_status (*build_decoder)(const struct vlm_decoder_description *description,
                              const struct vlm_decoder_step *step, struct vlm_graph *graph);
  /* The decoder's KV layout, per layer (models/kv_layout.h: widths,
   * shared layers, latent layers); NULL: the standard one. */
  vlm_status (*kv_layout)(const vlm_model_config *config, struct vlm_kv_layout *out);
  /* The xla backend refuses the family (its KV layout or decoder is one
   * the xla state and lowering do not hold yet): `vlm families` and the
   * README list cpu only. */
  bool cpu_only;
  /* The image path; NULL while the family's is not wired. */
  const vlm_family_image *image;
  /* The audio path; NULL while the family's is not wired (all, today). */
  const vlm_family_audio *audio;
  /* Non-consecutive RoPE positions (M-RoPE families); NULL: consecutive. */
  vlm_family_positions_fn positions;
  /* Bidirectional blocks in the prefill mask (Gemma 3's images); NULL:
   * causal. */
  vlm_family_attention_blocks_fn attention_blocks;
  /* LoRA adapters the checkpoint directory may hold, as PEFT subfolders
   * ("vision-lora"), in adapter index order, and which one a request uses
   * given the kinds of media it carries (-1: none, the base model). A
   * subfolder that is absent leaves its requests on the base model, as
   * Transformers runs without the adapter loaded. */
  const char *const *adapters;
  int adapter_count;
  int (*adapter_for)(bool has_image, bool has_audio);
} vlm_family;

/* What an item's encoding may depend on of the rest of its request, set on
 * every item of a request when it takes them (the engine; vlm compare for
 * a golden case), before their digests so the caches key on it:
 * request_kinds (the kinds of media the request holds) and request_traits
 * (the OR of the family's item_traits over its images). */
void vlm_family_set_request_media(const vlm_family *family, const vlm_model_config *config,
                                  struct vlm_media_item *items, int count);

/* The family's decoder description (describe_decoder) with its builder
 * (build_decoder) in it: what every backend builds decoder graphs from. */
void vlm_family_describe_decoder(const vlm_family *family, const vlm_model_config *config,
                                 struct vlm_decoder_description *out);

/* The family's KV layout (kv_layout, or the standard one of the text
 * config's layers, KV heads and head_dim), checked. */
vlm_status vlm_family_kv_layout(const vlm_family *family, const vlm_model_config *config,
                                struct vlm_kv_layout *out);

/* The family for a model_type, or NULL when no family declares it. */
const vlm_family *vlm_family_find(const char *model_type);
/* The registry in order: families [0, vlm_family_count()). */
size_t vlm_family_count(void);
const vlm_family *vlm_family_at(size_t index);
/* Comma-separated model_types with a family that runs (a text decoder),
 * for error messages. */
const char *vlm_family_supported_list(void);
/* Whether the family runs at all (its text decoder is wired); what it
 * takes beyond text: its image and audio paths. */
bool vlm_family_runs(const vlm_family *family);

/* Guesses a tensor's component from its canonical name, for tensors no
 * manifest declares (unexpected ones, or families without a manifest yet). */
vlm_component vlm_component_from_name(const char *name);

#endif
