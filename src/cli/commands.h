/* Shared pieces of the vlm command's subcommands. Each subcommand lives in
 * its own src/cli/command_<name>.c and is listed once in main.c's table. */
#ifndef VLM_CLI_COMMANDS_H
#define VLM_CLI_COMMANDS_H

#include <stdbool.h>
#include <stdio.h>

#include "vlm.h"
#include "vlm/engine.h"

typedef struct global_options {
  int thread_count; /* 0: one per core */
} global_options;

/* Prints "vlm: <message>" on stderr and returns 2 (usage error). */
int cli_usage_error(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* Prints "vlm: error: <status message>", frees the status, returns 1. */
int cli_report_status(vlm_status status);
/* Reads a whole file (any bytes; NUL-terminated for convenience) into a
 * malloc'd buffer, or prints "vlm: error: PATH: ..." and returns NULL. */
char *cli_read_file(const char *path, size_t *out_length);
/* True when `argument` is -h or --help. */
bool cli_is_help(const char *argument);
/* A whole decimal number in [minimum, maximum], nothing else in `text`. */
bool cli_parse_integer(const char *text, long long minimum, long long maximum, long long *out);

int command_inspect(int argc, char **argv, const global_options *options);
int command_compare(int argc, char **argv, const global_options *options);
int command_tokenize(int argc, char **argv, const global_options *options);
int command_tokenize_chat(int argc, char **argv, const global_options *options);
int command_run(int argc, char **argv, const global_options *options);
int command_bench(int argc, char **argv, const global_options *options);
int command_serve(int argc, char **argv, const global_options *options);

/* --backend NAME of run and serve: NULLs for cpu (the engine's default), or
 * the xla backend's text decoder and, for models with images, image
 * encoder, compiled on first use (src/cli/backend.c); on `thread_count`
 * threads (the global --threads; 0: one per core). */
vlm_status cli_open_backend(const char *backend, vlm_model *model, int32_t slot_count, int64_t capacity,
                            int64_t prefill_chunk, int thread_count, vlm_text_decoder **out_decoder,
                            vlm_media_encoder **out_encoder);
/* The audio encoder on `backend` for models with an audio path (NULL for
 * cpu, and for models without one). */
vlm_status cli_open_audio_encoder(const char *backend, vlm_model *model, int thread_count,
                                  vlm_media_encoder **out_encoder);
/* The text decoder alone on `backend` (NULL for cpu). */
vlm_status cli_open_text_decoder(const char *backend, vlm_model *model, int32_t slot_count, int64_t capacity,
                                 int64_t prefill_chunk, int thread_count, vlm_text_decoder **out_decoder);
/* The image encoder alone on `backend` (NULL for cpu: the engine's own). */
vlm_status cli_open_image_encoder(const char *backend, vlm_model *model, int thread_count,
                                  vlm_media_encoder **out_encoder);
int command_compile(int argc, char **argv, const global_options *options);
int command_families(int argc, char **argv, const global_options *options);
int command_pull(int argc, char **argv, const global_options *options);

/* Which families the help texts name (src/cli/command_families.c, from the
 * family registry): those with an image path, an audio path, either, only
 * text, those whose prompts go through the processor, or all that run. */
typedef enum cli_family_input {
  CLI_FAMILY_IMAGE,
  CLI_FAMILY_AUDIO,
  CLI_FAMILY_MEDIA,
  CLI_FAMILY_TEXT_ONLY,
  CLI_FAMILY_PROCESSOR_FLOW, /* prompts tokenized through the processor */
  CLI_FAMILY_ANY
} cli_family_input;
/* The families' display names, comma-separated ("LLaVA-1.5, Qwen2-VL"). */
void cli_family_names(cli_family_input input, char *out, size_t size);
/* The help texts' closing lines: which families take images, audio and
 * only text, and the backends of this build. */
void cli_print_families_note(FILE *out);
/* "  LABEL    a, b, c" wrapped at 80 columns between the list's items. */
void cli_print_wrapped(FILE *out, const char *label, const char *list);
/* vlm tokenize --chat's options (tokenize --help prints them too). */
void cli_tokenize_chat_usage(FILE *out);
/* The --backend values this build runs: "cpu or xla", or "cpu" (with why
 * not xla) in a build without the xla runtime (src/cli/backend.c). */
const char *cli_backend_choices(void);

#endif
