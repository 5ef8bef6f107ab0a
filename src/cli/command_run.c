/* vlm run: one request, printed as it is generated (or as JSON). */
#include <errno.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/hub_download.h"
#include "core/status.h"
#include "io/file.h"
#include "models/modules.h"
#include "text/grammar.h"
#include "text/grammar_schema.h"
#include "vlm/generate.h"

#define MAX_STOP_STRINGS 8
#define MAX_IMAGES 8
#define MAX_AUDIO 8

static void print_usage(FILE *out) {
  fprintf(out,
          "usage: vlm run --model DIR --prompt TEXT [options]\n"
          "\n"
          "Generates a reply with the model's chat template, its text decoder and, for\n"
          "images and audio, its encoders, on the cpu or xla backend (--backend, below),\n"
          "streaming it to stdout.\n"
          "\n"
          "  --model DIR            the checkpoint directory, or a Hugging Face model id\n"
          "                         ORG/NAME[@REVISION] found in the local hub cache\n"
          "                         (HF_HUB_CACHE, HF_HOME; see vlm pull)\n"
          "  --download             pull an id that is not in the cache first (vlm pull)\n"
          "  --prompt TEXT          the user's message\n"
          "  --image PATH           an image (JPEG, PNG, WebP, GIF; repeatable, up to %d) for\n"
          "                         models with an image path (listed below); with the chat\n"
          "                         template the images come before the text (a template\n"
          "                         that reads content as a string, Phi-4-multimodal's, gets\n"
          "                         each image's placeholder on a line before the text unless\n"
          "                         TEXT already holds it, as vLLM does)\n"
          "  --audio PATH           an audio clip (WAV, FLAC, Ogg Vorbis, MP3; repeatable, up\n"
          "                         to %d) for models with an audio path: decoded and resampled\n"
          "                         to the feature extractor's rate as Transformers' load_audio\n"
          "                         does; with the chat template the clips come after the\n"
          "                         images, before the text (a template that reads content\n"
          "                         as a string gets each clip's placeholder on a line before\n"
          "                         it). Models without an audio path refuse it (exit 1)\n"
          "  --max-audio-seconds S  longest clip accepted (default 600)\n"
          "  --system TEXT          a system message\n"
          "  --raw                  use TEXT as the whole model input (no chat template)\n"
          "  --max-tokens N         completion length limit (default: generation_config's\n"
          "                         max_new_tokens, else 256)\n"
          "  --temperature T        0 = greedy (default: the model's generation_config)\n"
          "  --top-k K, --top-p P, --min-p P, --repetition-penalty R,\n"
          "  --presence-penalty P, --frequency-penalty P, --seed S   sampling controls\n"
          "  --stop TEXT            stop string (repeatable, up to %d)\n"
          "  --grammar FILE         constrain the output to a GBNF grammar (llama.cpp's\n"
          "                         syntax; docs/STRUCTURED_OUTPUTS.md)\n"
          "  --json-schema FILE     constrain the output to JSON valid against the schema\n"
          "                         (OpenAI's structured-outputs subset; refused by keyword\n"
          "                         outside it)\n"
          "  --context N            context capacity in tokens (default 4096 or the model's)\n"
          "  --prefill-chunk N      prompt rows per prefill step (default 512; an image whose\n"
          "                         tokens attend to each other, Gemma 3's, is never split)\n"
          "  --processor-kwargs JSON  the image processor's call kwargs, as Transformers'\n"
          "                         processor(images, text, **kwargs): e.g.\n"
          "                         '{\"do_pan_and_scan\": true}' for Gemma 3\n"
          "  --backend B            cpu (default) or xla: the text decoder and the image and\n"
          "                         audio encoders compiled by IREE (on first use, then\n"
          "                         cached; see vlm compile). Models with quantized weights\n"
          "                         run on cpu only\n"
          "  --quantize q8|q4       quantize the text decoder's linear weights at load\n"
          "                         (groups of 32 with f16 scales; cpu backend; vision and\n"
          "                         audio towers stay as stored). GPTQ/AWQ checkpoints load\n"
          "                         quantized without it\n"
          "  --json                 print one JSON object: text, token ids, finish reason,\n"
          "                         usage and timings\n"
          "\n"
          "Exit status: 0 on success, 1 on any failure (one line on stderr), 2 for usage.\n",
          MAX_IMAGES, MAX_AUDIO, MAX_STOP_STRINGS);
  cli_print_families_note(out);
}

static bool parse_float(const char *text, float *out) {
  char *end = NULL;
  errno = 0;
  double value = strtod(text, &end);
  if (errno || end == text || *end) return false;
  *out = (float)value;
  return true;
}

static void stream_text(void *context, const char *text, size_t length) {
  (void)context;
  fwrite(text, 1, length, stdout);
  fflush(stdout);
}

/* The grammar of --grammar FILE, or compiled from --json-schema FILE. */
static vlm_status load_grammar(const char *grammar_path, const char *schema_path, char **out_grammar) {
  *out_grammar = NULL;
  const char *path = grammar_path ? grammar_path : schema_path;
  char *text = NULL;
  size_t length = 0;
  VLM_RETURN_IF_ERROR(vlm_file_read_all(path, VLM_GRAMMAR_MAX_TEXT_BYTES, &text, &length));
  vlm_status status = VLM_OK;
  if (grammar_path) {
    vlm_grammar *grammar = NULL;
    status = vlm_grammar_parse(text, length, &grammar); /* errors before the model loads */
    vlm_grammar_release(grammar);
    if (!status) {
      *out_grammar = text;
      return VLM_OK;
    }
  } else {
    status = vlm_json_schema_text_to_grammar(text, length, out_grammar);
  }
  free(text);
  if (status) status = vlm_status_annotate(status, "%s", path);
  return status;
}

typedef struct run_arguments {
  const char *model_dir;
  const char *backend;
  vlm_generation_request request;
  bool as_json, download, sampling_set[9];
  float temperature, top_p, min_p, repetition_penalty, presence_penalty, frequency_penalty;
  long long top_k, seed, max_tokens, context, prefill_chunk;
  const char *processor_kwargs;
  const char *quantize;
  const char *grammar_path, *schema_path;
  const char *stop[MAX_STOP_STRINGS];
  const char *image_paths[MAX_IMAGES];
  int image_count;
  const char *audio_paths[MAX_AUDIO];
  int audio_count;
  float max_audio_seconds;
} run_arguments;

/* Returns 0, or the exit code of a usage error. */
static int parse_arguments(int argc, char **argv, run_arguments *arguments) {
  for (int i = 0; i < argc; i++) {
    const char *name = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    bool ok = true, takes_value = true;
    if (cli_is_help(name)) {
      print_usage(stdout);
      return -1;
    } else if (strcmp(name, "--model") == 0 && value) arguments->model_dir = value;
    else if (strcmp(name, "--prompt") == 0 && value) arguments->request.prompt = value;
    else if (strcmp(name, "--backend") == 0 && value) arguments->backend = value;
    else if (strcmp(name, "--system") == 0 && value) arguments->request.system_prompt = value;
    else if (strcmp(name, "--raw") == 0) { arguments->request.raw_prompt = true; takes_value = false; }
    else if (strcmp(name, "--json") == 0) { arguments->as_json = true; takes_value = false; }
    else if (strcmp(name, "--download") == 0) { arguments->download = true; takes_value = false; }
    else if (strcmp(name, "--max-tokens") == 0 && value) ok = cli_parse_integer(value, LLONG_MIN, LLONG_MAX, &arguments->max_tokens) && arguments->max_tokens > 0;
    else if (strcmp(name, "--context") == 0 && value) ok = cli_parse_integer(value, LLONG_MIN, LLONG_MAX, &arguments->context) && arguments->context > 0;
    else if (strcmp(name, "--prefill-chunk") == 0 && value) ok = cli_parse_integer(value, 1, 1 << 20, &arguments->prefill_chunk);
    else if (strcmp(name, "--processor-kwargs") == 0 && value) arguments->processor_kwargs = value;
    else if (strcmp(name, "--quantize") == 0 && value) arguments->quantize = value;
    else if (strcmp(name, "--temperature") == 0 && value) ok = (arguments->sampling_set[0] = parse_float(value, &arguments->temperature));
    else if (strcmp(name, "--top-p") == 0 && value) ok = (arguments->sampling_set[1] = parse_float(value, &arguments->top_p));
    else if (strcmp(name, "--min-p") == 0 && value) ok = (arguments->sampling_set[2] = parse_float(value, &arguments->min_p));
    else if (strcmp(name, "--repetition-penalty") == 0 && value) ok = (arguments->sampling_set[3] = parse_float(value, &arguments->repetition_penalty));
    else if (strcmp(name, "--presence-penalty") == 0 && value) ok = (arguments->sampling_set[4] = parse_float(value, &arguments->presence_penalty));
    else if (strcmp(name, "--frequency-penalty") == 0 && value) ok = (arguments->sampling_set[5] = parse_float(value, &arguments->frequency_penalty));
    else if (strcmp(name, "--top-k") == 0 && value) ok = (arguments->sampling_set[6] = cli_parse_integer(value, LLONG_MIN, LLONG_MAX, &arguments->top_k));
    else if (strcmp(name, "--seed") == 0 && value) ok = (arguments->sampling_set[7] = cli_parse_integer(value, LLONG_MIN, LLONG_MAX, &arguments->seed));
    else if (strcmp(name, "--grammar") == 0 && value) arguments->grammar_path = value;
    else if (strcmp(name, "--json-schema") == 0 && value) arguments->schema_path = value;
    else if (strcmp(name, "--stop") == 0 && value) {
      ok = arguments->request.stop_count < MAX_STOP_STRINGS && value[0];
      if (ok) arguments->stop[arguments->request.stop_count++] = value;
    } else if (strcmp(name, "--image") == 0 && value) {
      ok = arguments->image_count < MAX_IMAGES;
      if (ok) arguments->image_paths[arguments->image_count++] = value;
    } else if (strcmp(name, "--audio") == 0 && value) {
      ok = arguments->audio_count < MAX_AUDIO;
      if (ok) arguments->audio_paths[arguments->audio_count++] = value;
    } else if (strcmp(name, "--max-audio-seconds") == 0 && value) {
      ok = parse_float(value, &arguments->max_audio_seconds) && arguments->max_audio_seconds > 0;
    } else {
      return cli_usage_error("run: unknown or incomplete option '%s' (see vlm run --help)", name);
    }
    if (!ok) return cli_usage_error("run: bad value for %s: '%s'", name, value ? value : "");
    if (takes_value) i++;
  }
  if (!arguments->model_dir || !arguments->request.prompt)
    return cli_usage_error("run: --model DIR and --prompt TEXT are required (see vlm run --help)");
  return 0;
}

static void apply_sampling(const run_arguments *arguments, vlm_sampling_params *sampling) {
  if (arguments->sampling_set[0]) sampling->temperature = arguments->temperature;
  if (arguments->sampling_set[1]) sampling->top_p = arguments->top_p;
  if (arguments->sampling_set[2]) sampling->min_p = arguments->min_p;
  if (arguments->sampling_set[3]) sampling->repetition_penalty = arguments->repetition_penalty;
  if (arguments->sampling_set[4]) sampling->presence_penalty = arguments->presence_penalty;
  if (arguments->sampling_set[5]) sampling->frequency_penalty = arguments->frequency_penalty;
  if (arguments->sampling_set[6]) sampling->top_k = (int32_t)arguments->top_k;
  if (arguments->sampling_set[7]) sampling->seed = (uint64_t)arguments->seed;
}

static void print_json(const vlm_generation_result *result, double image_seconds, double audio_seconds) {
  printf("{\"text\":\"");
  for (const unsigned char *c = (const unsigned char *)result->text; *c; c++) {
    if (*c == '"' || *c == '\\') printf("\\%c", *c);
    else if (*c == '\n') printf("\\n");
    else if (*c < 0x20) printf("\\u%04x", *c);
    else putchar(*c);
  }
  printf("\",\"tokens\":[");
  for (int64_t i = 0; i < result->completion_tokens; i++) printf("%s%d", i ? "," : "", result->tokens[i]);
  printf("],\"finish_reason\":\"%s\",\"usage\":{\"prompt_tokens\":%lld,\"completion_tokens\":%lld,"
         "\"total_tokens\":%lld},\"timings\":{\"image_preprocess_seconds\":%.6f,\"audio_preprocess_seconds\":%.6f,"
         "\"preprocess_seconds\":%.6f,\"encode_seconds\":%.6f,\"prefill_seconds\":%.6f,"
         "\"decode_seconds\":%.6f}}\n",
         result->finish_reason, (long long)result->prompt_tokens, (long long)result->completion_tokens,
         (long long)(result->prompt_tokens + result->completion_tokens), image_seconds, audio_seconds,
         result->preprocess_seconds, result->encode_seconds, result->prefill_seconds,
         result->decode_seconds);
}

int command_run(int argc, char **argv, const global_options *options) {
  run_arguments arguments;
  memset(&arguments, 0, sizeof(arguments));
  int usage = parse_arguments(argc, argv, &arguments);
  if (usage) return usage < 0 ? 0 : usage;
  if (arguments.grammar_path && arguments.schema_path)
    return cli_usage_error("run: --grammar and --json-schema are exclusive");
  char *grammar = NULL;
  if (arguments.grammar_path || arguments.schema_path) {
    vlm_status loaded = load_grammar(arguments.grammar_path, arguments.schema_path, &grammar);
    if (loaded) return cli_report_status(loaded);
  }
  arguments.request.grammar = grammar;
  vlm_generator_options generator_options = {.thread_count = options->thread_count,
                                             .capacity = arguments.context,
                                             .prefill_chunk = arguments.prefill_chunk,
                                             .max_audio_seconds = arguments.max_audio_seconds};
  char model_dir[VLM_HUB_PATH_MAX];
  vlm_status status = cli_model_dir(arguments.model_dir, VLM_HUB_NEEDS_WEIGHTS | VLM_HUB_NEEDS_TOKENIZER, arguments.download, model_dir, sizeof(model_dir));
  if (status) return cli_report_status(status);
  arguments.model_dir = model_dir;
  vlm_model *model = NULL;
  vlm_model_options model_options = {.processor_kwargs = arguments.processor_kwargs, .quantize = arguments.quantize};
  status = vlm_model_open(arguments.model_dir, &model_options, &model);
  if (!status)
    status = cli_open_backend(arguments.backend, model, 1, arguments.context, arguments.prefill_chunk, options->thread_count,
                              &generator_options.text_decoder,
                              &generator_options.image_encoder);
  if (!status) {
    status = cli_open_audio_encoder(arguments.backend, model, options->thread_count, &generator_options.audio_encoder);
    if (status) {
      vlm_text_decoder_release(generator_options.text_decoder);
      vlm_media_encoder_release(generator_options.image_encoder);
    }
  }
  vlm_generator *generator = NULL;
  if (!status) status = vlm_generator_open(model, &generator_options, &generator);
  vlm_model_release(model); /* the generator holds its own reference */
  if (status) {
    free(grammar);
    return cli_report_status(status);
  }
  arguments.request.stop = arguments.stop;
  arguments.request.max_tokens = arguments.max_tokens;
  arguments.request.sampling = vlm_generator_default_sampling(generator);
  apply_sampling(&arguments, &arguments.request.sampling);
  if (!arguments.as_json) arguments.request.on_text = stream_text;
  /* Refused before any image is decoded when the request cannot fit:
   * the images count from their headers. */
  int64_t image_tokens[MAX_IMAGES];
  arguments.request.image_count = arguments.image_count;
  for (int i = 0; !status && i < arguments.image_count; i++)
    status = vlm_generator_image_tokens(generator, arguments.image_paths[i], &image_tokens[i]);
  if (!status && arguments.image_count > 0)
    status = vlm_generator_check(generator, &arguments.request, image_tokens);
  vlm_loaded_image images[MAX_IMAGES];
  double image_seconds = 0;
  int loaded = 0;
  for (; !status && loaded < arguments.image_count; loaded++) {
    status = vlm_generator_load_image(generator, arguments.image_paths[loaded], &images[loaded]);
    if (status) break;
    image_seconds += images[loaded].preprocess_seconds;
  }
  /* A model without an audio path refuses the first clip, before reading
   * it: never answered from the text alone. */
  vlm_loaded_audio audio[MAX_AUDIO];
  double audio_seconds = 0;
  int clips = 0;
  for (; !status && clips < arguments.audio_count; clips++) {
    status = vlm_generator_load_audio(generator, arguments.audio_paths[clips], &audio[clips]);
    if (status) break;
    audio_seconds += audio[clips].preprocess_seconds;
  }
  arguments.request.images = images;
  arguments.request.image_count = arguments.image_count;
  arguments.request.audio = audio;
  arguments.request.audio_count = arguments.audio_count;
  vlm_generation_result result;
  if (!status) status = vlm_generate(generator, &arguments.request, &result); /* takes the images and clips */
  else {
    for (int i = 0; i < loaded; i++) vlm_loaded_image_release(&images[i]);
    for (int i = 0; i < clips; i++) vlm_loaded_audio_release(&audio[i]);
  }
  vlm_generator_release(generator);
  free(grammar);
  if (status) return cli_report_status(status);
  if (arguments.as_json) print_json(&result, image_seconds, audio_seconds);
  else printf("\n");
  vlm_generation_result_release(&result);
  return 0;
}
