/* vlm compile: emit the xla backend's StableHLO for a model and compile it
 * with iree-compile into the artifact cache (SPEC 1.5). */
#include <stdlib.h>
#include <string.h>

#include "backends/xla/iree_compiler.h"
#include "backends/xla/stablehlo_emitter.h"
#include "backends/xla/stablehlo_encoder.h"
#include "models/model.h"
#include "cli/commands.h"
#include "cli/hub_download.h"
#include "core/status.h"

static void print_usage(FILE *out) {
  fprintf(out,
          "usage: vlm compile --model DIR --backend xla [--target llvm-cpu|cuda] [--capacity N]\n"
          "                   [--slots N] [--prefill-chunk N] [--cache-dir DIR] [--emit-mlir FILE]\n"
          "\n"
          "Emits the model's text decoder as one StableHLO module (token_prefill,\n"
          "embeddings_prefill and decode sharing a device-resident KV cache; prefill in\n"
          "row buckets of 64, 128, ... up to the chunk and decode in attention windows of\n"
          "256, 512, ... up to the capacity, so short prompts and short contexts cost\n"
          "what they use; weights are named parameters read from the checkpoint at load\n"
          "time, not compiled in), runs\n"
          "iree-compile on it and stores the artifact under the cache, in a directory\n"
          "named by the hash of its compatibility key (capacity, slots, prefill chunk,\n"
          "architecture config, weight dtypes, contract/emitter/compiler versions,\n"
          "target and CPU features). Prints that directory on stdout; progress and the\n"
          "compiler's output go to stderr.\n"
          "\n"
          "  --model DIR          the checkpoint directory (or a cached model id ORG/NAME)\n"
          "  --backend xla        the backend to compile for (only xla compiles)\n"
          "  --target T           llvm-cpu (this machine's CPU, default) or cuda (sm_80)\n"
          "  --capacity N         positions per slot (default min(max_position_embeddings, 4096))\n"
          "  --slots N            decode slots (default 1)\n"
          "  --prefill-chunk N    rows per prefill call (default min(512, capacity))\n"
          "  --cache-dir DIR      artifact cache (default $VLM_XLA_CACHE, else\n"
          "                       $XDG_CACHE_HOME/vlm/xla, else ~/.cache/vlm/xla)\n"
          "  --emit-mlir FILE     only write the StableHLO module to FILE (- for stdout);\n"
          "                       needs no compiler\n"
          "\n"
          "iree-compile is $VLM_IREE_COMPILE, else bin/iree-compile of the xla venv\n"
          "($VLM_XLA_VENV; else .venv-xla in the source tree vlm was built from, or\n"
          "PREFIX/lib/vlm/xla-venv for an installed vlm), else the one on PATH (pip\n"
          "install -r tools/xla/requirements.txt, installed as\n"
          "PREFIX/share/vlm/xla/requirements.txt, into a venv made from\n"
          "/usr/bin/python3.11).\n"
          "For models with images it also compiles the image encoder (tower + projector,\n"
          "one image per call, one module per encoder-row bucket; reused when already\n"
          "cached) and prints each directory on a line of its own; a tower the emitter\n"
          "cannot lower yet is reported on stderr and stays on the cpu backend.\n"
          "\n"
          "Exit status: 0 on success, 1 on failure (the reason, with the compiler's\n"
          "diagnostics, on stderr), 2 for a usage error.\n");
}

typedef struct compile_arguments {
  const char *model_dir, *backend, *target, *cache_dir, *emit_mlir;
  vlm_stablehlo_options options;
} compile_arguments;

/* Returns -1 when parsing succeeded, else the exit code. */
static int parse_arguments(int argc, char **argv, compile_arguments *arguments) {
  for (int i = 0; i < argc; i++) {
    const char *option = argv[i];
    if (cli_is_help(option)) {
      print_usage(stdout);
      return 0;
    }
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    long long number = 0;
    if (!value) return cli_usage_error("compile: unknown option or missing value '%s' (see vlm compile --help)", option);
    i++;
    if (strcmp(option, "--model") == 0) arguments->model_dir = value;
    else if (strcmp(option, "--backend") == 0) arguments->backend = value;
    else if (strcmp(option, "--target") == 0) arguments->target = value;
    else if (strcmp(option, "--cache-dir") == 0) arguments->cache_dir = value;
    else if (strcmp(option, "--emit-mlir") == 0) arguments->emit_mlir = value;
    else if (strcmp(option, "--capacity") == 0 || strcmp(option, "--slots") == 0 ||
             strcmp(option, "--prefill-chunk") == 0) {
      if (!cli_parse_integer(value, 1, 1 << 24, &number))
        return cli_usage_error("compile: %s needs a positive count, got '%s'", option, value);
      if (strcmp(option, "--capacity") == 0) arguments->options.capacity = number;
      else if (strcmp(option, "--slots") == 0) arguments->options.slot_count = (int32_t)number;
      else arguments->options.prefill_chunk = number;
    } else {
      return cli_usage_error("compile: unknown option '%s' (see vlm compile --help)", option);
    }
  }
  if (!arguments->model_dir) return cli_usage_error("compile: --model DIR is required (see vlm compile --help)");
  if (!arguments->backend) return cli_usage_error("compile: --backend xla is required");
  if (strcmp(arguments->backend, "xla") != 0)
    return cli_usage_error("compile: backend '%s' has nothing to compile (only xla does)", arguments->backend);
  return -1;
}

static vlm_status write_module(const char *path, const char *text) {
  if (strcmp(path, "-") == 0) {
    fputs(text, stdout);
    return VLM_OK;
  }
  FILE *file = fopen(path, "w");
  bool written = file && fputs(text, file) >= 0;
  if (file && fclose(file) != 0) written = false;
  return written ? VLM_OK : vlm_status_make(VLM_STATUS_IO, "cannot write %s", path);
}

static vlm_status compile_model(const compile_arguments *arguments, vlm_xla_text_decoder *model) {
  vlm_xla_target target = VLM_XLA_TARGET_LLVM_CPU;
  if (arguments->target) {
    vlm_status status = vlm_xla_target_from_name(arguments->target, &target);
    if (status) return status;
  }
  vlm_stablehlo_options options = arguments->options;
  vlm_stablehlo_default_options(model, &options);
  fprintf(stderr, "vlm compile: emitting StableHLO for %s (%d slot%s, capacity %lld, prefill chunk %lld)\n",
          model->config->model_type, options.slot_count, options.slot_count == 1 ? "" : "s",
          (long long)options.capacity, (long long)options.prefill_chunk);
  char *module = NULL;
  vlm_xla_key key;
  vlm_status status = vlm_stablehlo_emit_text_decoder(model, &options, &module, &key);
  if (!status && arguments->emit_mlir) {
    status = write_module(arguments->emit_mlir, module);
    free(module);
    return status;
  }
  vlm_iree_compiler compiler;
  if (!status) status = vlm_iree_compiler_find(&compiler);
  if (!status) {
    fprintf(stderr, "vlm compile: iree-compile %s at %s\n", compiler.version, compiler.path);
    status = vlm_xla_key_add_target(&key, compiler.version, target);
  }
  char cache_dir[VLM_XLA_PATH_LENGTH], artifact_dir[VLM_XLA_PATH_LENGTH];
  if (arguments->cache_dir) snprintf(cache_dir, sizeof(cache_dir), "%s", arguments->cache_dir);
  else vlm_xla_default_cache_dir(cache_dir, sizeof(cache_dir));
  if (!status)
    status = vlm_xla_compile(&compiler, module, &key, target, cache_dir, stderr, artifact_dir, sizeof(artifact_dir));
  if (!status) printf("%s\n", artifact_dir);
  free(module);
  return status;
}

/* The image encoder next to the text module, every bucket. A tower the
 * emitter refuses (UNIMPLEMENTED) is not an error: the engine encodes it on
 * the cpu backend. */
static vlm_status compile_image_encoder(const compile_arguments *arguments, const vlm_model *model) {
  vlm_xla_target target = VLM_XLA_TARGET_LLVM_CPU;
  if (arguments->target) VLM_RETURN_IF_ERROR(vlm_xla_target_from_name(arguments->target, &target));
  int64_t buckets[VLM_XLA_MAX_ENCODER_BUCKETS], fixed = -1;
  int count = vlm_xla_encoder_buckets(model, buckets, VLM_XLA_MAX_ENCODER_BUCKETS, &fixed);
  if (count == 0 && fixed > 0) buckets[count++] = fixed;
  fprintf(stderr, "vlm compile: the image encoder (one image per call, %d row bucket%s)\n", count,
          count == 1 ? "" : "s");
  vlm_status status = count ? VLM_OK : VLM_ERROR(UNIMPLEMENTED, "the family's encoder has no row buckets");
  for (int i = 0; !status && i < count; i++) {
    vlm_xla_encoder_function function;
    status = vlm_xla_encoder_function_build(model, buckets[i], &function);
    char artifact_dir[VLM_XLA_PATH_LENGTH];
    vlm_xla_key key;
    if (!status)
      status = vlm_xla_encoder_prepare_artifact(model, &function, target, arguments->cache_dir, true, stderr,
                                                artifact_dir, sizeof(artifact_dir), &key, NULL);
    vlm_xla_encoder_function_release(&function);
    if (!status) printf("%s\n", artifact_dir);
  }
  if (vlm_status_code_of(status) == VLM_STATUS_UNIMPLEMENTED) {
    fprintf(stderr, "vlm compile: the image encoder stays on the cpu backend: %s\n", vlm_status_message(status));
    vlm_status_free(status);
    return VLM_OK;
  }
  return status;
}

int command_compile(int argc, char **argv, const global_options *options) {
  (void)options; /* compilation is single-threaded in iree-compile's own hands */
  compile_arguments arguments = {0};
  int parsed = parse_arguments(argc, argv, &arguments);
  if (parsed >= 0) return parsed;
  char model_dir[VLM_HUB_PATH_MAX];
  vlm_status status = cli_model_dir(arguments.model_dir, VLM_HUB_NEEDS_WEIGHTS, false, model_dir, sizeof(model_dir));
  if (status) return cli_report_status(status);
  arguments.model_dir = model_dir;
  vlm_model *opened = NULL;
  status = vlm_model_open(arguments.model_dir, NULL, &opened);
  vlm_xla_text_decoder model = {0};
  if (!status) status = vlm_xla_text_decoder_open(opened, &model);
  if (!status) status = compile_model(&arguments, &model);
  if (!status && !arguments.emit_mlir && opened->config.has_vision && opened->family && opened->family->image)
    status = compile_image_encoder(&arguments, opened);
  vlm_xla_text_decoder_release(&model);
  vlm_model_release(opened);
  return status ? cli_report_status(status) : 0;
}
