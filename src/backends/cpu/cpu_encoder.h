/* The cpu backend's media encoder: a family's encoder graph (its vision
 * tower and projector, vlm_family_image) run on the cpu kernels, bound to
 * the opened model's memory map, reading nothing else (SPEC 2.4).
 *
 * Every weight it reads goes through one accounting point (the graph
 * executor's weight observer), which tallies bytes per component and can
 * report each name, so a test can prove that no decoder-layer tensor was
 * touched. The embedding table is not read here: features replace their
 * placeholder rows inside the decoder graph (src/models/modules.h). */
#ifndef VLM_BACKENDS_CPU_CPU_ENCODER_H
#define VLM_BACKENDS_CPU_CPU_ENCODER_H

#include <stdint.h>

#include "backends/cpu_graph.h"
#include "core/thread_pool.h"
#include "media/media_item.h"
#include "models/family.h"
#include "models/model.h"
#include "models/modules.h"

typedef struct vlm_cpu_encoder vlm_cpu_encoder;

typedef struct vlm_cpu_encoder_options {
  vlm_thread_pool *pool;        /* borrowed; NULL runs single-threaded */
} vlm_cpu_encoder_options;

/* UNIMPLEMENTED when the family has no path for `kind`. The model is
 * retained. */
vlm_status vlm_cpu_encoder_open(vlm_model *model, vlm_media_kind kind, const vlm_cpu_encoder_options *options,
                                vlm_cpu_encoder **out_encoder);
void vlm_cpu_encoder_release(vlm_cpu_encoder *encoder);

/* Rows of the features (the text model's hidden size). */
int64_t vlm_cpu_encoder_output_width(const vlm_cpu_encoder *encoder);

/* Observers for the next calls (NULL to stop): every computed node of the
 * graph, and every tensor bound. */
typedef struct vlm_encoder_trace {
  vlm_node_observer node_observer;
  void *node_context;
  vlm_weight_observer weight_observer;
  void *weight_context;
} vlm_encoder_trace;
void vlm_cpu_encoder_set_trace(vlm_cpu_encoder *encoder, const vlm_encoder_trace *trace);

/* The nodes of the last encode's graph (stage names; for observers). */
const vlm_encoder_nodes *vlm_cpu_encoder_last_nodes(const vlm_cpu_encoder *encoder);
/* The name of node `index` of the last encode's graph ("" when none). */
const char *vlm_cpu_encoder_node_name(const vlm_cpu_encoder *encoder, int32_t index);

/* Bytes of checkpoint tensors bound per component since open. */
uint64_t vlm_cpu_encoder_bound_bytes(const vlm_cpu_encoder *encoder, vlm_component component);

/* out_features [item->token_count, output width]. */
vlm_status vlm_cpu_encoder_encode(vlm_cpu_encoder *encoder, const vlm_media_item *item, float *out_features);

/* The engine's table over it (vlm_media_encoder, models/modules.h). */
vlm_status vlm_media_encoder_open_cpu(vlm_model *model, vlm_media_kind kind, const vlm_cpu_encoder_options *options,
                                      vlm_media_encoder **out_encoder);

#endif
