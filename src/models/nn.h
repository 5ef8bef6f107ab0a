/* torch.nn's leaf modules as every family writes them: a Linear, a
 * LayerNorm and an RMSNorm under a module name ("model.visual.blocks.3.attn.qkv"),
 * both as the tensors they declare in a manifest ("<module>.weight",
 * "<module>.bias") and as graph nodes (the node named after the module, its
 * weights bound from the checkpoint by name at execution). One place for
 * what each family file used to write again; the blocks of blocks.h and
 * decoder.h are built from these and the graph ops of graph.h. */
#ifndef VLM_MODELS_NN_H
#define VLM_MODELS_NN_H

#include <stdbool.h>
#include <stdint.h>

#include "graph/graph.h"
#include "models/family.h"

/* ---- Manifest declarations ------------------------------------------- */

/* nn.Linear(in, out, bias): weight [out, in] (+ bias [out]). */
void vlm_nn_declare_linear(vlm_tensor_manifest *manifest, vlm_component component, const char *module,
                           int64_t out, int64_t in, bool bias);
/* nn.LayerNorm(width): weight and bias [width]. */
void vlm_nn_declare_layer_norm(vlm_tensor_manifest *manifest, vlm_component component, const char *module,
                               int64_t width);

/* ---- Graph nodes ------------------------------------------------------ */

/* A weight node named by the format (its checkpoint name), of the shape
 * the config implies; the dtype is bound from the checkpoint. A name too
 * long for a node is refused by the graph (vlm_graph_take_error). */
int32_t vlm_nn_weight(vlm_graph *graph, int rank, const int64_t *shape, const char *name_format, ...)
    __attribute__((format(printf, 4, 5)));
/* x W^T (+ b) with "<module>.weight" [out, in] (and "<module>.bias"). */
int32_t vlm_nn_linear(vlm_graph *graph, int32_t x, const char *module, int64_t out, int64_t in, bool bias);
/* LayerNorm with "<module>.weight" and "<module>.bias" [width]. */
int32_t vlm_nn_layer_norm(vlm_graph *graph, int32_t x, const char *module, int64_t width, double epsilon);
/* RMSNorm with "<module>.weight" [width], scaled by (weight_offset + w)
 * (Gemma's norms store w - 1: offset 1). */
int32_t vlm_nn_rms_norm(vlm_graph *graph, int32_t x, const char *module, int64_t width, double epsilon,
                        double weight_offset);

#endif
