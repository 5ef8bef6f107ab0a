/* The xla backend's media encoders: a family's encoder graph
 * (vlm_family_image: vision tower + projector, the same graph the cpu
 * backend runs) as a stateless graph module (stablehlo_graph.h), one module
 * per encoder-row bucket, so images of different sizes share compiled
 * code: an item runs in the smallest bucket that holds its rows, the rows
 * past its own padding (their own attention segment, results dropped).
 * Families with a fixed-size tower (LLaVA's CLIP) have one bucket, their
 * row count.
 *
 *   encode(<the graph's inputs, in graph order>)
 *       -> (features [bucket tokens, text hidden] f32, <stage nodes> f32 ...)
 *   compatibility() -> [4]
 *
 * The extra results are the graph's golden stages (vlm_encoder_nodes), so
 * tests compare them against the cpu backend and the goldens. Key: module
 * "media_encoder", kind, model_type, encoder_rows, plus what the graph
 * module emitter derives (each function's graph listing, the weights'
 * signature) and the compile-time target fields. */
#ifndef VLM_BACKENDS_XLA_STABLEHLO_ENCODER_H
#define VLM_BACKENDS_XLA_STABLEHLO_ENCODER_H

#include <stdbool.h>
#include <stdio.h>

#include "backends/xla/iree_compiler.h"
#include "backends/xla/stablehlo_graph.h"
#include "graph/graph.h"
#include "media/media_item.h"
#include "models/family.h"
#include "models/model.h"

#define VLM_XLA_MAX_ENCODER_BUCKETS 16

/* The bucket row counts the xla backend compiles for `model`'s image
 * encoder (ascending); 0 when the family has none: its rows are fixed
 * (every item's encoder_rows is the same), reported in *out_fixed_rows
 * for an item-less compile, or -1 when they are unknown until an item. */
int vlm_xla_encoder_buckets(const vlm_model *model, int64_t *out_rows, int capacity, int64_t *out_fixed_rows);

/* One bucket's graph and its module function (outputs: the features, then
 * the stage nodes). The caller releases the graph. */
typedef struct vlm_xla_encoder_function {
  vlm_media_kind kind;
  vlm_graph graph;
  vlm_encoder_nodes nodes;
  vlm_stablehlo_graph_function function;
} vlm_xla_encoder_function;

vlm_status vlm_xla_encoder_function_build(const vlm_model *model, int64_t rows, vlm_xla_encoder_function *out);
/* The same for the family's image or audio path. The audio path has no
 * row buckets (padding would change a clip's subsampling): its functions
 * are built at each clip's own rows. */
vlm_status vlm_xla_encoder_function_build_kind(const vlm_model *model, vlm_media_kind kind, int64_t rows,
                                               vlm_xla_encoder_function *out);
void vlm_xla_encoder_function_release(vlm_xla_encoder_function *function);

/* Emits the bucket's module and its emit-time key. */
vlm_status vlm_stablehlo_emit_encoder(const vlm_model *model, const vlm_xla_encoder_function *function,
                                      char **out_module, vlm_xla_key *out_key);

/* The artifact directory of the bucket under `cache_dir` (NULL: the default
 * cache): an existing artifact whose key matches, else (when
 * compile_if_missing) compiled now, progress on `progress` (may be NULL);
 * else FAILED_PRECONDITION/NOT_FOUND saying to run `vlm compile`. On
 * success *out_key is the emit key (the runtime checks against it) and
 * *out_compiled (may be NULL) says whether it was compiled now. */
vlm_status vlm_xla_encoder_prepare_artifact(const vlm_model *model, const vlm_xla_encoder_function *function,
                                            vlm_xla_target target, const char *cache_dir, bool compile_if_missing,
                                            FILE *progress, char *out_artifact_dir, size_t size,
                                            vlm_xla_key *out_key, bool *out_compiled);

#endif
