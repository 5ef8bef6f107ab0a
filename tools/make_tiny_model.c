/* vlm-make-tiny-model: writes a tiny random-weight checkpoint in Hugging Face
 * layout, so the README's first command and the CLI tests have a model
 * directory to work on without downloading anything.
 *
 * The tensor list is not written by hand: the tool parses the config it
 * writes and asks the family for its manifest, so the checkpoint always has
 * exactly the tensors vlm expects. (The oracle harness, tools/oracle, makes
 * the checkpoints that are checked against Transformers; this one only has
 * to be well-formed.) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/config.h"
#include "io/file.h"
#include "io/safetensors.h"
#include "models/family.h"

static const char llava_config[] =
    "{\n"
    "  \"architectures\": [\"LlavaForConditionalGeneration\"],\n"
    "  \"model_type\": \"llava\",\n"
    "  \"dtype\": \"float32\",\n"
    "  \"image_token_index\": 250,\n"
    "  \"image_seq_length\": 576,\n"
    "  \"projector_hidden_act\": \"gelu\",\n"
    "  \"vision_feature_layer\": -2,\n"
    "  \"vision_feature_select_strategy\": \"default\",\n"
    "  \"tie_word_embeddings\": false,\n"
    "  \"text_config\": {\n"
    "    \"model_type\": \"llama\", \"vocab_size\": 256, \"hidden_size\": 128,\n"
    "    \"intermediate_size\": 256, \"num_hidden_layers\": 2, \"num_attention_heads\": 2,\n"
    "    \"num_key_value_heads\": 1, \"head_dim\": 64, \"max_position_embeddings\": 2048,\n"
    "    \"rms_norm_eps\": 1e-05, \"bos_token_id\": 1, \"eos_token_id\": 2\n"
    "  },\n"
    "  \"vision_config\": {\n"
    "    \"model_type\": \"clip_vision_model\", \"hidden_size\": 64, \"intermediate_size\": 128,\n"
    "    \"num_hidden_layers\": 2, \"num_attention_heads\": 1, \"image_size\": 336,\n"
    "    \"patch_size\": 14, \"projection_dim\": 64\n"
    "  }\n"
    "}\n";

static const char llama_config[] =
    "{\n"
    "  \"architectures\": [\"LlamaForCausalLM\"],\n"
    "  \"model_type\": \"llama\", \"dtype\": \"float32\", \"vocab_size\": 256,\n"
    "  \"hidden_size\": 128, \"intermediate_size\": 256, \"num_hidden_layers\": 2,\n"
    "  \"num_attention_heads\": 2, \"num_key_value_heads\": 1, \"head_dim\": 64,\n"
    "  \"rms_norm_eps\": 1e-05, \"bos_token_id\": 1, \"eos_token_id\": 2,\n"
    "  \"tie_word_embeddings\": true\n"
    "}\n";

static const char generation_config[] =
    "{\"bos_token_id\": 1, \"eos_token_id\": 2, \"do_sample\": false}\n";

static const char clip_preprocessor_config[] =
    "{\n"
    "  \"image_processor_type\": \"CLIPImageProcessor\",\n"
    "  \"crop_size\": {\"height\": 336, \"width\": 336}, \"do_center_crop\": true,\n"
    "  \"do_convert_rgb\": true, \"do_normalize\": true, \"do_rescale\": true,\n"
    "  \"do_resize\": true, \"resample\": 3, \"rescale_factor\": 0.00392156862745098,\n"
    "  \"image_mean\": [0.48145466, 0.4578275, 0.40821073],\n"
    "  \"image_std\": [0.26862954, 0.26130258, 0.27577711],\n"
    "  \"size\": {\"shortest_edge\": 336}\n"
    "}\n";

static int write_text(const char *dir, const char *name, const char *text) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *file = fopen(path, "w");
  if (!file || fputs(text, file) < 0 || fclose(file) != 0) {
    fprintf(stderr, "vlm-make-tiny-model: cannot write %s\n", path);
    return 1;
  }
  return 0;
}

/* Deterministic weights: xorshift64* mapped to [-0.05, 0.05). */
static float next_weight(uint64_t *state) {
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  uint64_t bits = *state * 2685821657736338717ull;
  return ((float)(bits >> 40) / (float)(1u << 24) - 0.5f) * 0.1f;
}

/* The name a Transformers 4 checkpoint used for a canonical name: the
 * family's renames applied backwards (first match wins). Returns a malloc'd
 * string. */
static char *stored_name(const vlm_family *family, bool old_layout, const char *name) {
  for (size_t i = 0; old_layout && i < family->rename_count; i++) {
    const vlm_name_rename *rename = &family->renames[i];
    size_t prefix_length = strlen(rename->to_prefix);
    if (strncmp(name, rename->to_prefix, prefix_length) != 0) continue;
    size_t length = strlen(rename->from_prefix) + strlen(name + prefix_length) + 1;
    char *old_name = malloc(length);
    if (old_name) snprintf(old_name, length, "%s%s", rename->from_prefix, name + prefix_length);
    return old_name;
  }
  return strdup(name);
}

/* Stores one weight in `dtype` (f32, bf16 or f16). */
static void store_weight(void *buffer, vlm_dtype dtype, int64_t index, float value) {
  if (dtype == VLM_DTYPE_BF16) ((uint16_t *)buffer)[index] = vlm_f32_to_bf16(value);
  else if (dtype == VLM_DTYPE_F16) ((uint16_t *)buffer)[index] = vlm_f32_to_f16(value);
  else ((float *)buffer)[index] = value;
}

static int write_weights(const char *dir, const vlm_tensor_manifest *manifest,
                         const vlm_family *family, vlm_dtype dtype, bool sharded, bool old_layout) {
  size_t count = manifest->count;
  vlm_safetensors_write_entry *entries = calloc(count, sizeof(*entries));
  void **buffers = calloc(count, sizeof(*buffers));
  uint64_t state = 0x5eed5eed5eedull;
  int failed = !entries || !buffers;
  size_t written = 0;
  for (size_t m = 0; !failed && m < manifest->count; m++) {
    const vlm_expected_tensor *tensor = &manifest->tensors[m];
    /* Optional tensors (a tied lm_head) are left out, as real checkpoints
     * leave them out. */
    if (tensor->optional) continue;
    size_t i = written++;
    int64_t elements = 0;
    vlm_shape_element_count(tensor->shape, tensor->rank, &elements);
    buffers[i] = malloc((size_t)(elements ? elements : 1) * vlm_dtype_size(dtype));
    if (!buffers[i]) {
      failed = 1;
      break;
    }
    bool is_norm = strstr(tensor->name, "norm") && strstr(tensor->name, ".weight");
    for (int64_t e = 0; e < elements; e++)
      store_weight(buffers[i], dtype, e, is_norm ? 1.0f : next_weight(&state));
    char *name = stored_name(family, old_layout, tensor->name);
    if (!name) {
      failed = 1;
      break;
    }
    entries[i] = (vlm_safetensors_write_entry){name, dtype, tensor->rank,
                                               tensor->shape, buffers[i]};
  }
  count = written;
  char path[4096];
  vlm_status status = VLM_OK;
  if (!failed && !sharded) {
    snprintf(path, sizeof(path), "%s/model.safetensors", dir);
    status = vlm_safetensors_write(path, entries, count, "pt");
  } else if (!failed) {
    /* Two shards split at the middle, plus the index naming each tensor. */
    size_t half = count / 2;
    snprintf(path, sizeof(path), "%s/model-00001-of-00002.safetensors", dir);
    status = vlm_safetensors_write(path, entries, half, "pt");
    snprintf(path, sizeof(path), "%s/model-00002-of-00002.safetensors", dir);
    if (!status) status = vlm_safetensors_write(path, entries + half, count - half, "pt");
    vlm_string_builder index = {0};
    vlm_sb_append_literal(&index, "{\"metadata\": {}, \"weight_map\": {");
    for (size_t i = 0; i < count; i++) {
      vlm_sb_appendf(&index, "%s\n  \"%s\": \"model-0000%d-of-00002.safetensors\"", i ? "," : "",
                     entries[i].name, i < half ? 1 : 2);
    }
    vlm_sb_append_literal(&index, "}}\n");
    char *text = vlm_sb_finish(&index);
    failed = !text || write_text(dir, "model.safetensors.index.json", text);
    free(text);
  }
  if (status) {
    fprintf(stderr, "vlm-make-tiny-model: %s\n", vlm_status_message(status));
    vlm_status_free(status);
    failed = 1;
  }
  for (size_t i = 0; buffers && i < count; i++) {
    free(buffers[i]);
    free((char *)entries[i].name);
  }
  free(buffers);
  free(entries);
  return failed;
}

/* mkdir -p: creates `dir` and any missing parents. */
static int make_directories(const char *dir) {
  char path[4096];
  if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path)) return -1;
  for (char *slash = path + 1; *slash; slash++) {
    if (*slash != '/') continue;
    *slash = '\0';
    if (mkdir(path, 0755) != 0 && errno != EEXIST) return -1;
    *slash = '/';
  }
  return mkdir(path, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static int usage(FILE *out) {
  fprintf(out,
          "usage: vlm-make-tiny-model [--text-only | --config FILE] [--dtype f32|bf16|f16]\n"
          "                           [--sharded] [--transformers4-names] DIR\n"
          "Writes a tiny random-weight checkpoint in Hugging Face layout: LLaVA-1.5\n"
          "shaped (CLIP 336px/14 tower, projector, Llama decoder) by default, a Llama\n"
          "decoder alone with --text-only; --sharded splits the weights in two files;\n"
          "--transformers4-names stores tensors under the names Transformers 4 used.\n"
          "--config FILE uses that config.json instead (e.g. bench/configs/*.json for\n"
          "benchmark-sized models); --dtype picks the weight dtype (default f32).\n");
  return out == stdout ? 0 : 2;
}

int main(int argc, char **argv) {
  bool text_only = false, sharded = false, old_layout = false;
  const char *dir = NULL, *config_file = NULL;
  vlm_dtype dtype = VLM_DTYPE_F32;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--text-only") == 0) text_only = true;
    else if (strcmp(argv[i], "--sharded") == 0) sharded = true;
    else if (strcmp(argv[i], "--transformers4-names") == 0) old_layout = true;
    else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) config_file = argv[++i];
    else if (strcmp(argv[i], "--dtype") == 0 && i + 1 < argc) {
      dtype = vlm_dtype_from_torch_name(strcmp(argv[++i], "bf16") == 0   ? "bfloat16"
                                        : strcmp(argv[i], "f16") == 0    ? "float16"
                                        : strcmp(argv[i], "f32") == 0    ? "float32"
                                                                         : "");
      if (dtype == VLM_DTYPE_INVALID) return usage(stderr);
    }
    else if (strcmp(argv[i], "--help") == 0) return usage(stdout);
    else if (argv[i][0] == '-' || dir) return usage(stderr);
    else dir = argv[i];
  }
  if (!dir) return usage(stderr);
  if (make_directories(dir) != 0) {
    fprintf(stderr, "vlm-make-tiny-model: cannot create %s: %s\n", dir, strerror(errno));
    return 1;
  }
  char *custom_config = NULL;
  size_t custom_length = 0;
  if (config_file) {
    vlm_status read_status = vlm_file_read_all(config_file, 1 << 20, &custom_config, &custom_length);
    if (read_status) {
      fprintf(stderr, "vlm-make-tiny-model: %s\n", vlm_status_message(read_status));
      return 1;
    }
  }
  const char *config_text = custom_config ? custom_config : text_only ? llama_config : llava_config;
  int write_failed = write_text(dir, "config.json", config_text) ||
                     write_text(dir, "generation_config.json", generation_config);
  free(custom_config);
  if (write_failed) return 1;
  vlm_model_config config;
  vlm_status status = vlm_model_config_load(dir, NULL, &config);
  const vlm_family *family = status ? NULL : vlm_family_find(config.model_type);
  /* LLaVA gets LLaVA-1.5's CLIP processor config (other families'
   * processors need their own configs, which a --config run supplies). */
  if (family && family->image && strcmp(family->model_type, "llava") == 0 &&
      write_text(dir, "preprocessor_config.json", clip_preprocessor_config))
    return 1;
  vlm_tensor_manifest manifest;
  vlm_manifest_init(&manifest);
  if (!status && family) status = family->declare_tensors(&config, &manifest);
  if (status || !family || manifest.out_of_memory) {
    fprintf(stderr, "vlm-make-tiny-model: %s\n",
            status ? vlm_status_message(status) : "cannot declare the tensors");
    return 1;
  }
  int failed = write_weights(dir, &manifest, family, dtype, sharded, old_layout);
  vlm_manifest_release(&manifest);
  vlm_model_config_release(&config);
  if (!failed)
    printf("wrote a %s checkpoint (%s weights) to %s\n", family->display_name, vlm_dtype_name(dtype), dir);
  return failed;
}
