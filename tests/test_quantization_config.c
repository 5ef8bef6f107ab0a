/* config.json's quantization_config (GPTQ, AWQ): the settings vlm reads,
 * their Transformers defaults, and the refusal by name of every layout it
 * does not load (never loaded as something else). The layouts themselves
 * are proven end to end by the goldens of tests/goldens/qwen2_gptq*,
 * qwen2_awq (tools/oracle/quant_oracle.py), whose checkpoint stage hashes
 * vlm's dequantized weights. */
#include "io/json.h"
#include "io/quantization_config.h"
#include "test.h"

/* The config borrows strings (modules_to_not_convert) from the document:
 * the last one parsed stays alive until the next parse or done(). */
static vlm_json_document document;
static bool have_document;

static void done(void) {
  if (have_document) vlm_json_document_release(&document);
  have_document = false;
}

static vlm_status parse(const char *text, vlm_quantization_config *out) {
  done();
  vlm_status status = vlm_json_parse(text, strlen(text), NULL, NULL, "config.json", &document);
  if (status) return status;
  have_document = true;
  return vlm_quantization_config_parse(document.root, "config.json", out);
}

static void reads_gptq_and_awq(void) {
  vlm_quantization_config config;
  CHECK_OK(parse("{\"model_type\": \"qwen2\"}", &config));
  CHECK_INT_EQ(config.method, VLM_QUANT_METHOD_NONE);
  CHECK_OK(parse("{\"quantization_config\": null}", &config));
  CHECK_INT_EQ(config.method, VLM_QUANT_METHOD_NONE);
  /* Qwen2-VL-7B-Instruct-GPTQ-Int4's settings. */
  CHECK_OK(parse("{\"quantization_config\": {\"bits\": 4, \"damp_percent\": 0.1, \"dataset\": null, \"desc_act\": false,"
                 " \"group_size\": 128, \"modules_in_block_to_quantize\": null, \"quant_method\": \"gptq\","
                 " \"sym\": true, \"true_sequential\": true}}", &config));
  CHECK_INT_EQ(config.method, VLM_QUANT_METHOD_GPTQ);
  CHECK_INT_EQ(config.group_size, 128);
  CHECK(config.sym && !config.desc_act && config.zeros_minus_one);
  CHECK_OK(parse("{\"quantization_config\": {\"quant_method\": \"gptq\", \"checkpoint_format\": \"gptq_v2\","
                 " \"desc_act\": true, \"group_size\": -1}}", &config));
  CHECK(config.desc_act && !config.zeros_minus_one && config.group_size == -1 && config.bits == 4);
  /* Qwen2-VL-7B-Instruct-AWQ's. */
  CHECK_OK(parse("{\"quantization_config\": {\"bits\": 4, \"group_size\": 128, \"modules_to_not_convert\": [\"visual\"],"
                 " \"quant_method\": \"awq\", \"version\": \"gemm\", \"zero_point\": true}}", &config));
  CHECK_INT_EQ(config.method, VLM_QUANT_METHOD_AWQ);
  CHECK_INT_EQ(config.unconverted_count, 1);
  CHECK(config.unconverted_count == 1 && strcmp(config.unconverted[0], "visual") == 0);
  done();
}

static void refuses_what_it_does_not_load(void) {
  vlm_quantization_config config;
  CHECK_ERROR(parse("{\"quantization_config\": {\"quant_method\": \"gptq\", \"bits\": 8}}", &config),
              VLM_STATUS_UNIMPLEMENTED, "8-bit");
  CHECK_ERROR(parse("{\"quantization_config\": {\"quant_method\": \"bitsandbytes\"}}", &config),
              VLM_STATUS_UNIMPLEMENTED, "bitsandbytes");
  CHECK_ERROR(parse("{\"quantization_config\": {\"quant_method\": \"awq\", \"version\": \"gemv\"}}", &config),
              VLM_STATUS_UNIMPLEMENTED, "gemv");
  CHECK_ERROR(parse("{\"quantization_config\": {\"quant_method\": \"awq\", \"zero_point\": false}}", &config),
              VLM_STATUS_UNIMPLEMENTED, "zero_point");
  CHECK_ERROR(parse("{\"quantization_config\": {\"quant_method\": \"gptq\", \"checkpoint_format\": \"marlin\"}}",
                    &config), VLM_STATUS_UNIMPLEMENTED, "marlin");
  CHECK_ERROR(parse("{\"quantization_config\": {\"quant_method\": \"gptq\", \"group_size\": 0}}", &config),
              VLM_STATUS_INVALID_ARGUMENT, "group_size");
  CHECK_ERROR(parse("{\"quantization_config\": {\"quant_method\": \"gptq\", \"sym\": \"yes\"}}", &config),
              VLM_STATUS_INVALID_ARGUMENT, "sym");
  CHECK_ERROR(parse("{\"quantization_config\": {\"bits\": 4}}", &config), VLM_STATUS_INVALID_ARGUMENT, "quant_method");
  CHECK_ERROR(parse("{\"quantization_config\": [1]}", &config), VLM_STATUS_INVALID_ARGUMENT, "object");
  CHECK_ERROR(parse("{\"quantization_config\": {\"quant_method\": \"awq\", \"modules_to_not_convert\": [3]}}", &config),
              VLM_STATUS_INVALID_ARGUMENT, "non-string");
  done();
}

TEST_MAIN(TEST(reads_gptq_and_awq), TEST(refuses_what_it_does_not_load))
