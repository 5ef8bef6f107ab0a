/* config.json's "quantization_config" for the int4 checkpoints the hub
 * publishes in Transformers' formats: GPTQ (quant_method "gptq", AutoGPTQ
 * / GPTQModel / optimum) and AWQ (quant_method "awq", AutoAWQ's GEMM
 * layout). Untrusted input (fuzz/fuzz_config.c): what vlm cannot load is
 * refused by name, never ignored. docs/KERNELS.md describes the layouts. */
#ifndef VLM_IO_QUANTIZATION_CONFIG_H
#define VLM_IO_QUANTIZATION_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "io/json.h"
#include "vlm.h"

typedef enum vlm_quant_method {
  VLM_QUANT_METHOD_NONE = 0,
  VLM_QUANT_METHOD_GPTQ,
  VLM_QUANT_METHOD_AWQ,
} vlm_quant_method;

typedef struct vlm_quantization_config {
  vlm_quant_method method;
  int bits;           /* 4 */
  int64_t group_size; /* inputs per scale; -1 in the file (one group per row) is kept as -1 */
  bool sym;           /* GPTQ: symmetric (zeros all 8) */
  bool desc_act;      /* GPTQ: act-order (g_idx is a permutation of groups) */
  /* GPTQ's original ("gptq", v1) checkpoints store zero - 1 in qzeros;
   * "gptq_v2" stores the zero itself. */
  bool zeros_minus_one;
  /* Module name prefixes left unquantized (AWQ's modules_to_not_convert),
   * borrowed from the config document; count at most 32. */
  const char *unconverted[32];
  int unconverted_count;
} vlm_quantization_config;

/* Reads root["quantization_config"] (absent or null: method NONE). `source`
 * prefixes messages. */
vlm_status vlm_quantization_config_parse(const vlm_json_value *root, const char *source,
                                         vlm_quantization_config *out);

#endif
