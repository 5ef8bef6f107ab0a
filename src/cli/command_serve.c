/* vlm serve: the OpenAI-compatible HTTP server (src/server) in front of one
 * engine with N slots. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"
#include "cli/hub_download.h"
#include "models/modules.h"
#include "server/server.h"
#include "vlm/engine.h"

static void print_usage(FILE *out) {
  fprintf(out,
          "usage: vlm serve --model DIR [options]\n"
          "\n"
          "Serves the model over HTTP/1.1 with OpenAI's API: POST /v1/chat/completions\n"
          "(text and, for models with an image or audio path, images and audio; streaming\n"
          "with SSE),\n"
          "POST /v1/completions (raw prompts), GET /v1/models (with what the model accepts),\n"
          "POST /tokenize and /detokenize (vLLM's; the ids the model is fed),\n"
          "GET /health, /health/live, /health/ready, GET /metrics (Prometheus) and a chat\n"
          "page at / (in the binary; it uses the API above). Requests share the model\n"
          "through continuous batching over --parallel slots. Request fields (OpenAI's and\n"
          "vLLM's extensions) and what each does: docs/API.md.\n"
          "\n"
          "  --model DIR              the checkpoint directory, or a Hugging Face model id\n"
          "                           ORG/NAME[@REVISION] found in the local hub cache\n"
          "                           (HF_HUB_CACHE, HF_HOME; see vlm pull)\n"
          "  --download               pull an id that is not in the cache first (vlm pull)\n"
          "  --host HOST              address to listen on (default 127.0.0.1)\n"
          "  --port N                 port (default 8080; 0 picks a free one)\n"
          "  --parallel N             slots: requests generated together (default 1)\n"
          "  --ctx N                  positions per slot, prompt + completion (default:\n"
          "                           the model's max_position_embeddings, at most 4096)\n"
          "  --prefill-chunk N        prompt rows per scheduler step (default 512)\n"
          "  --decoding-prefill-chunk N  the same while other requests are streaming\n"
          "                           (default 128: a prompt's step holds the streams up)\n"
          "  --processor-kwargs JSON  the image processor's call kwargs for every request,\n"
          "                           as Transformers' processor(images, text, **kwargs):\n"
          "                           e.g. '{\"do_pan_and_scan\": true}' for Gemma 3\n"
          "  --backend B              cpu (default) or xla: the text decoder and the image and\n"
          "                           audio encoders compiled by IREE (on first use, then\n"
          "                           cached; see vlm compile); quantized weights: cpu only\n"
          "  --quantize q8|q4         quantize the text decoder's linear weights at load\n"
          "                           (groups of 32, f16 scales; cpu backend; vision and\n"
          "                           audio towers stay as stored)\n"
          "  --prefix-cache-mb N      MiB for the prefix cache: the KV of finished requests,\n"
          "                           reused by later ones whose prompt (images by content)\n"
          "                           starts the same way, in blocks of 16 positions,\n"
          "                           least recently used evicted first (default 1024;\n"
          "                           0: off; the xla backend has none and says so)\n"
          "  --encoder-cache-mb N     MiB for the encoder cache: image (audio) features by\n"
          "                           content, so a repeated image skips the vision tower\n"
          "                           (default 256; 0: off)\n"
          "  --queue N                requests that may wait for a slot; more get 429\n"
          "                           (default 64)\n"
          "  --api-key KEY            require 'Authorization: Bearer KEY' (all but /health*\n"
          "                           and the chat page's files, which asks for the key);\n"
          "                           default: $VLM_API_KEY when set, else no key\n"
          "  --public-metrics         GET /metrics without the key (for scrapers that send\n"
          "                           none, e.g. an inference gateway's endpoint picker)\n"
          "  --allowed-media-dir DIR  accept file:// image URLs under DIR (default: refused)\n"
          "  --allow-remote-media     accept http(s):// image URLs (public addresses only)\n"
          "  --max-body-bytes N       request body limit; larger gets 413 (default 64 MiB)\n"
          "  --max-body-memory-mb N   MiB of request bodies all clients may have in flight\n"
          "                           at once (reserved from Content-Length before the body\n"
          "                           is read); more gets 503 server_busy (default 256, at\n"
          "                           least --max-body-bytes; 0: no limit)\n"
          "  --max-body-memory-per-client-mb N  the same for one client address (default\n"
          "                           128, at least --max-body-bytes; 0: no limit)\n"
          "  --max-media-items N      image/audio parts per request; more gets 400 (default 16)\n"
          "  --max-audio-seconds S    an audio part's longest duration; longer gets 400\n"
          "                           (default 600)\n"
          "  --max-prompt-bytes N     the rendered prompt's bytes; longer gets 400\n"
          "                           context_length_exceeded before it is tokenized\n"
          "                           (default: what the context could hold)\n"
          "  --media-memory-mb N      MiB that image and audio decoding may hold at once\n"
          "                           across requests, reserved from each item's header\n"
          "                           before it is decoded (default 2048)\n"
          "  --media-wait S           how long a request over that budget waits before\n"
          "                           503 server_busy (default 10)\n"
          "  --header-timeout S       a new connection's request headers must be in S\n"
          "                           seconds after accept, or it is closed (default 10)\n"
          "  --body-timeout S         a request's body must be in S seconds after accept\n"
          "                           (later requests on a connection: after their\n"
          "                           headers), or it is closed (default 60)\n"
          "  --timeout S              a keep-alive connection's next request must be in S\n"
          "                           seconds after the previous response; a connection\n"
          "                           idle S seconds while sending is closed (default 60)\n"
          "  --request-timeout S      a completion taking longer is cancelled: 504, or an\n"
          "                           error event in a stream (default 600; 0: no limit)\n"
          "  --max-connections N      concurrent connections (default 256); the last 1/8\n"
          "                           only for clients holding few\n"
          "  --max-connections-per-client N  concurrent connections of one client (an IPv4\n"
          "                           address or an IPv6 /64); more are closed at once\n"
          "                           (default 64; 0: no limit)\n"
          "  --max-idle-connections N  idle keep-alive connections kept; past it the\n"
          "                           least recently used is closed (default: half of\n"
          "                           --max-connections; 0: no cap)\n"
          "  --allowed-hosts LIST     comma-separated Host names to answer (\"*\": any;\n"
          "                           \".example.com\": it and its subdomains); others get\n"
          "                           403. Default: bound to a loopback address, loopback\n"
          "                           names only (against DNS rebinding); otherwise any\n"
          "  --allowed-origins LIST   comma-separated browser origins whose requests are\n"
          "                           answered (\"https://app.example.com\", \"*\"); others\n"
          "                           get 403. Default: those whose host passes the Host rule\n"
          "  --grace S                on SIGINT/SIGTERM, let in-flight requests finish for up\n"
          "                           to S seconds before cancelling them (default 30)\n"
          "  --model-name NAME        the model's id in the API (default: DIR's last part, or\n"
          "                           the model id given to --model)\n"
          "  --tool-call-parser NAME  the tool-call format of the model's output: hermes,\n"
          "                           llama3_json, mistral, phi4_mini_json, pythonic (Gemma 3,\n"
          "                           as vLLM serves it), or none (default: detected from the\n"
          "                           chat template's markers)\n"
          "  --no-ui                  no chat page: GET / and /ui/... answer 404\n"
          "  --reasoning-parser none|auto|qwen3|deepseek_r1\n"
          "                           split chat answers' reasoning (<think>...</think>) into\n"
          "                           message.reasoning_content / delta.reasoning_content:\n"
          "                           qwen3, deepseek_r1 (reasoning until </think> even\n"
          "                           without <think>), auto (qwen3 when the chat template\n"
          "                           writes <think> and </think>) or none (default, as\n"
          "                           vLLM: the text stays in content)\n"
          "  --accept-unknown-fields  accept request fields this server does not know,\n"
          "                           ignoring them with a warning in the log (vLLM's\n"
          "                           behaviour); default: 400 naming the field, as OpenAI\n"
          "                           (docs/API.md lists every field)\n"
          "\n"
          "It checks the model's files, then binds: while the engine opens (on xla: while\n"
          "the modules compile), /health/live answers 200 and /health, /health/ready and\n"
          "the API answer 503 (loading).\n"
          "Prints \"listening on http://HOST:PORT\" on stderr once it accepts requests.\n"
          "Data URLs (data:image/png|jpeg|webp|gif;base64,...) are always accepted; audio\n"
          "parts as input_audio {data, format} or audio_url (data:audio/wav|flac|ogg|mpeg).\n"
          "A model without an audio path (below) refuses audio parts with 400 naming the\n"
          "part, and one without an image path image parts. POST bodies must be sent\n"
          "with Content-Type: application/json (415 otherwise). Every answer carries\n"
          "X-Request-ID (the client's when it sends a sane one); --log-level info prints one\n"
          "access line per request. Limits, statuses and what to put in front (TLS):\n"
          "docs/SECURITY.md.\n"
          "Exit status: 0 after SIGINT/SIGTERM, 1 on failure (one line on stderr), 2 for usage.\n");
  cli_print_families_note(out);
}

/* Seconds with a fraction ("0.5"), in [minimum, maximum]. */
static bool parse_seconds(const char *text, double minimum, double maximum, double *out) {
  char *end = NULL;
  errno = 0;
  double value = strtod(text, &end);
  if (errno || end == text || *end || !(value >= minimum && value <= maximum)) return false;
  *out = value;
  return true;
}

typedef struct serve_arguments {
  const char *model_dir;
  const char *backend, *processor_kwargs, *quantize;
  vlm_server_options server;
  long long port, parallel, context, prefill_chunk, decoding_prefill_chunk, queue, max_body_bytes, timeout, grace,
      max_media_items, max_connections, per_client, prefix_cache_mb, encoder_cache_mb, max_prompt_bytes,
      media_memory_mb, max_idle_connections, body_memory_mb, body_memory_per_client_mb;
  bool max_idle_given, body_memory_given, body_memory_per_client_given;
  double header_timeout, body_timeout, request_timeout, max_audio_seconds, media_wait;
  bool request_timeout_given, per_client_given, download;
} serve_arguments;

/* Returns 0, -1 after --help, or the exit code of a usage error. */
static int parse_arguments(int argc, char **argv, serve_arguments *arguments) {
  for (int i = 0; i < argc; i++) {
    const char *name = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    bool ok = true, takes_value = true;
    if (cli_is_help(name)) {
      print_usage(stdout);
      return -1;
    } else if (strcmp(name, "--model") == 0 && value) arguments->model_dir = value;
    else if (strcmp(name, "--download") == 0) { arguments->download = true; takes_value = false; }
    else if (strcmp(name, "--backend") == 0 && value) arguments->backend = value;
    else if (strcmp(name, "--host") == 0 && value) arguments->server.host = value;
    else if (strcmp(name, "--port") == 0 && value) ok = cli_parse_integer(value, 0, 65535, &arguments->port);
    else if (strcmp(name, "--parallel") == 0 && value) ok = cli_parse_integer(value, 1, 256, &arguments->parallel);
    else if (strcmp(name, "--ctx") == 0 && value) ok = cli_parse_integer(value, 1, 1 << 24, &arguments->context);
    else if (strcmp(name, "--prefill-chunk") == 0 && value) ok = cli_parse_integer(value, 1, 1 << 20, &arguments->prefill_chunk);
    else if (strcmp(name, "--decoding-prefill-chunk") == 0 && value)
      ok = cli_parse_integer(value, 1, 1 << 20, &arguments->decoding_prefill_chunk);
    else if (strcmp(name, "--processor-kwargs") == 0 && value) arguments->processor_kwargs = value;
    else if (strcmp(name, "--quantize") == 0 && value) arguments->quantize = value;
    else if (strcmp(name, "--prefix-cache-mb") == 0 && value)
      ok = cli_parse_integer(value, 0, 1 << 24, &arguments->prefix_cache_mb);
    else if (strcmp(name, "--encoder-cache-mb") == 0 && value)
      ok = cli_parse_integer(value, 0, 1 << 24, &arguments->encoder_cache_mb);
    else if (strcmp(name, "--queue") == 0 && value) ok = cli_parse_integer(value, 1, 1 << 20, &arguments->queue);
    else if (strcmp(name, "--api-key") == 0 && value) { ok = value[0] != '\0'; arguments->server.api_key = value; }
    else if (strcmp(name, "--allowed-media-dir") == 0 && value) arguments->server.allowed_media_dir = value;
    else if (strcmp(name, "--allow-remote-media") == 0) { arguments->server.allow_remote_media = true; takes_value = false; }
    else if (strcmp(name, "--max-body-bytes") == 0 && value) ok = cli_parse_integer(value, 1, 1LL << 40, &arguments->max_body_bytes);
    else if (strcmp(name, "--max-media-items") == 0 && value) ok = cli_parse_integer(value, 1, 1024, &arguments->max_media_items);
    else if (strcmp(name, "--max-audio-seconds") == 0 && value)
      ok = parse_seconds(value, 0.001, 86400, &arguments->max_audio_seconds);
    else if (strcmp(name, "--max-prompt-bytes") == 0 && value)
      ok = cli_parse_integer(value, 1, 1LL << 40, &arguments->max_prompt_bytes);
    else if (strcmp(name, "--media-memory-mb") == 0 && value)
      ok = cli_parse_integer(value, 1, 1LL << 24, &arguments->media_memory_mb);
    else if (strcmp(name, "--media-wait") == 0 && value)
      ok = parse_seconds(value, 0.001, 86400, &arguments->media_wait);
    else if (strcmp(name, "--timeout") == 0 && value) ok = cli_parse_integer(value, 1, 86400, &arguments->timeout);
    else if (strcmp(name, "--header-timeout") == 0 && value)
      ok = parse_seconds(value, 0.001, 86400, &arguments->header_timeout);
    else if (strcmp(name, "--body-timeout") == 0 && value)
      ok = parse_seconds(value, 0.001, 86400, &arguments->body_timeout);
    else if (strcmp(name, "--request-timeout") == 0 && value) {
      ok = parse_seconds(value, 0, 7 * 86400, &arguments->request_timeout);
      arguments->request_timeout_given = true;
    } else if (strcmp(name, "--max-connections") == 0 && value)
      ok = cli_parse_integer(value, 1, 65536, &arguments->max_connections);
    else if (strcmp(name, "--max-connections-per-client") == 0 && value) {
      ok = cli_parse_integer(value, 0, 65536, &arguments->per_client);
      arguments->per_client_given = true;
    } else if (strcmp(name, "--max-idle-connections") == 0 && value) {
      ok = cli_parse_integer(value, 0, 65536, &arguments->max_idle_connections);
      arguments->max_idle_given = true;
    } else if (strcmp(name, "--max-body-memory-mb") == 0 && value) {
      ok = cli_parse_integer(value, 0, 1LL << 24, &arguments->body_memory_mb);
      arguments->body_memory_given = true;
    } else if (strcmp(name, "--max-body-memory-per-client-mb") == 0 && value) {
      ok = cli_parse_integer(value, 0, 1LL << 24, &arguments->body_memory_per_client_mb);
      arguments->body_memory_per_client_given = true;
    } else if (strcmp(name, "--allowed-hosts") == 0 && value) { ok = value[0] != '\0'; arguments->server.allowed_hosts = value; }
    else if (strcmp(name, "--allowed-origins") == 0 && value) { ok = value[0] != '\0'; arguments->server.allowed_origins = value; }
    else if (strcmp(name, "--grace") == 0 && value) ok = cli_parse_integer(value, 1, 86400, &arguments->grace);
    else if (strcmp(name, "--tool-call-parser") == 0 && value) { ok = value[0] != '\0'; arguments->server.tool_call_parser = value; }
    else if (strcmp(name, "--model-name") == 0 && value) { ok = value[0] != '\0'; arguments->server.model_name = value; }
    else if (strcmp(name, "--no-ui") == 0) { arguments->server.no_ui = true; takes_value = false; }
    else if (strcmp(name, "--public-metrics") == 0) { arguments->server.public_metrics = true; takes_value = false; }
    else if (strcmp(name, "--reasoning-parser") == 0 && value) {
      ok = !strcmp(value, "auto") || !strcmp(value, "qwen3") || !strcmp(value, "deepseek_r1") || !strcmp(value, "none");
      arguments->server.reasoning_parser = value;
    } else if (strcmp(name, "--accept-unknown-fields") == 0) {
      arguments->server.accept_unknown_fields = true;
      takes_value = false;
    }
    else return cli_usage_error("serve: unknown or incomplete option '%s' (see vlm serve --help)", name);
    if (!ok) return cli_usage_error("serve: bad value for %s: '%s'", name, value ? value : "");
    if (takes_value) i++;
  }
  if (!arguments->model_dir) return cli_usage_error("serve: --model DIR is required (see vlm serve --help)");
  return 0;
}

int command_serve(int argc, char **argv, const global_options *options) {
  serve_arguments arguments;
  memset(&arguments, 0, sizeof(arguments));
  arguments.port = 8080;
  arguments.prefix_cache_mb = 1024;
  arguments.encoder_cache_mb = 256;
  int usage = parse_arguments(argc, argv, &arguments);
  if (usage) return usage < 0 ? 0 : usage;
  if (!arguments.server.api_key) {
    const char *key = getenv("VLM_API_KEY");
    if (key && key[0]) arguments.server.api_key = key;
  }
  arguments.server.port = (int)arguments.port;
  arguments.server.max_body_bytes = (size_t)arguments.max_body_bytes;
  arguments.server.timeout_seconds = (unsigned)arguments.timeout;
  arguments.server.header_timeout_seconds = arguments.header_timeout;
  arguments.server.body_timeout_seconds = arguments.body_timeout;
  /* 0 on the command line means no limit; 0 in the options means the default. */
  if (arguments.request_timeout_given)
    arguments.server.request_timeout_seconds = arguments.request_timeout > 0 ? arguments.request_timeout : -1.0;
  arguments.server.connection_limit = (unsigned)arguments.max_connections;
  if (arguments.per_client_given)
    arguments.server.max_connections_per_client = arguments.per_client ? (int)arguments.per_client : -1;
  /* As above: 0 on the command line is "no limit", in the options "default". */
  if (arguments.max_idle_given)
    arguments.server.max_idle_connections = arguments.max_idle_connections ? (int)arguments.max_idle_connections : -1;
  if (arguments.body_memory_given)
    arguments.server.max_body_memory =
        arguments.body_memory_mb ? (size_t)arguments.body_memory_mb << 20 : SIZE_MAX;
  if (arguments.body_memory_per_client_given)
    arguments.server.max_body_memory_per_client =
        arguments.body_memory_per_client_mb ? (size_t)arguments.body_memory_per_client_mb << 20 : SIZE_MAX;
  arguments.server.max_media_items = (unsigned)arguments.max_media_items;
  arguments.server.max_audio_seconds = arguments.max_audio_seconds;
  arguments.server.shutdown_grace_seconds = (double)arguments.grace;

  vlm_engine_options engine_options = {.thread_count = options->thread_count,
                                       .slot_count = (int32_t)arguments.parallel,
                                       .capacity = arguments.context,
                                       .prefill_chunk = arguments.prefill_chunk,
                                       .decoding_prefill_chunk = arguments.decoding_prefill_chunk,
                                       .queue_limit = (int32_t)arguments.queue,
                                       .prefix_cache_bytes = (uint64_t)arguments.prefix_cache_mb << 20,
                                       .encoder_cache_bytes = (uint64_t)arguments.encoder_cache_mb << 20,
                                       .media_memory_budget = (uint64_t)arguments.media_memory_mb << 20,
                                       .media_wait_seconds = arguments.media_wait,
                                       .max_prompt_bytes = (size_t)arguments.max_prompt_bytes};
  int32_t slots = arguments.parallel ? (int32_t)arguments.parallel : 1;
  /* The model's files are checked first (configs, safetensors headers:
   * quick), so a wrong --model fails before anything listens. Then the
   * server binds, so that while the backend and engine open (on xla: the
   * modules compile) the port answers liveness and a 503 "loading" rather
   * than refusing. A signal meanwhile ends the process: nothing is in flight. */
  char model_dir[VLM_HUB_PATH_MAX];
  vlm_status status = cli_model_dir(arguments.model_dir, VLM_HUB_NEEDS_WEIGHTS | VLM_HUB_NEEDS_TOKENIZER, arguments.download, model_dir, sizeof(model_dir));
  if (status) return cli_report_status(status);
  /* A model by id is served under its id (a snapshot's last part is a commit). */
  vlm_hub_id hub_id;
  struct stat model_stat;
  if (!arguments.server.model_name && stat(arguments.model_dir, &model_stat) != 0 &&
      vlm_hub_id_parse(arguments.model_dir, &hub_id))
    arguments.server.model_name = arguments.model_dir;
  arguments.model_dir = model_dir;
  vlm_model *model = NULL;
  vlm_model_options model_options = {.processor_kwargs = arguments.processor_kwargs, .quantize = arguments.quantize};
  status = vlm_model_open(arguments.model_dir, &model_options, &model);
  if (status) return cli_report_status(status);
  vlm_server *server = NULL;
  status = vlm_server_start_loading(&arguments.server, &server);
  if (status) {
    vlm_model_release(model);
    return cli_report_status(status);
  }
  status = cli_open_backend(arguments.backend, model, slots, arguments.context, arguments.prefill_chunk, options->thread_count,
                            &engine_options.text_decoder, &engine_options.image_encoder);
  if (!status) {
    status = cli_open_audio_encoder(arguments.backend, model, options->thread_count, &engine_options.audio_encoder);
    if (status) {
      vlm_text_decoder_release(engine_options.text_decoder);
      vlm_media_encoder_release(engine_options.image_encoder);
    }
  }
  vlm_engine *engine = NULL;
  if (!status) status = vlm_engine_open(model, &engine_options, &engine);
  vlm_model_release(model); /* the engine holds its own reference */
  if (!status) status = vlm_server_attach_engine(server, engine);
  if (status) {
    vlm_server_stop(server, 0);
    vlm_engine_release(engine);
    return cli_report_status(status);
  }
  status = vlm_server_run_started(server);
  vlm_engine_release(engine);
  if (status) return cli_report_status(status);
  return 0;
}
