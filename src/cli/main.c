/* The vlm command. A thin client of include/vlm.h: it parses arguments,
 * calls the library, prints results, and maps failures to a one-line message
 * and a non-zero exit code. Subcommands are listed here only once they work. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "vlm.h"

typedef int (*command_function)(int argc, char **argv, const global_options *options);

typedef struct command {
  const char *name;
  const char *summary;
  command_function run;
} command;

/* Subcommands, listed only once they work (vlm --help prints this table). */
static const command commands[] = {
    {"run", "generate a reply to a prompt with text, images or audio (streams to stdout)", command_run},
    {"inspect", "validate a checkpoint directory and describe what it holds", command_inspect},
    {"compare", "check vlm stage by stage against a Transformers golden case", command_compare},
    {"tokenize", "tokenize text, decode ids or render a chat template", command_tokenize},
    {"bench", "measure prefill and decode throughput (JSON report)", command_bench},
    {"serve", "serve the model over HTTP with OpenAI's API (chat, completions, streaming)", command_serve},
    {"compile", "emit StableHLO and compile it with IREE into the artifact cache (--backend xla)", command_compile},
    {"families", "list the model families this vlm runs (--json, --markdown)", command_families},
    {"pull", "download a model by Hugging Face id into the local hub cache (ORG/NAME[@REV])", command_pull},
};

static void print_usage(FILE *out) {
  fprintf(out,
          "usage: vlm [--threads N] [--log-level LEVEL] [--log-format F] <command> [options]\n"
          "\n"
          "Inference engine for vision- and audio-language models (version %s).\n"
          "\n"
          "commands:\n",
          VLM_VERSION_STRING);
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
  /* From the family registry (vlm families has the whole table). */
  char images[512], audio[256], text[256];
  cli_family_names(CLI_FAMILY_IMAGE, images, sizeof(images));
  cli_family_names(CLI_FAMILY_AUDIO, audio, sizeof(audio));
  cli_family_names(CLI_FAMILY_TEXT_ONLY, text, sizeof(text));
  fprintf(out,
          "\n"
          "families (vlm families): images: %s; audio: %s; text only: %s.\n"
          "backends: %s.\n",
          images, audio[0] ? audio : "none", text, cli_backend_choices());
  fprintf(out,
          "\n"
          "global options:\n"
          "  --threads N         worker threads (default: one per available core, %d here)\n"
          "  --log-level LEVEL   debug, info, warn (default) or error; also $VLM_LOG\n"
          "                      (info: model loading, prefill progress, each request)\n"
          "  --log-format F      text (default: a UTC time, the level, the message) or\n"
          "                      json (one object per line); also $VLM_LOG_FORMAT\n"
          "  --version           print the version and exit\n"
          "  -h, --help          print this help; `vlm <command> --help` for a command\n",
          vlm_cpu_count());
}

int cli_usage_error(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fprintf(stderr, "vlm: ");
  vfprintf(stderr, format, args);
  fprintf(stderr, "\n");
  va_end(args);
  return 2;
}

int cli_report_status(vlm_status status) {
  char line[4096];
  snprintf(line, sizeof(line), "vlm: error: %s", vlm_status_message(status));
  vlm_log_print(VLM_LOG_ERROR, line); /* in --log-format json, an object like the log's */
  vlm_status_free(status);
  return 1;
}

char *cli_read_file(const char *path, size_t *out_length) {
  FILE *file = fopen(path, "rb");
  if (!file) {
    fprintf(stderr, "vlm: error: %s: %s\n", path, strerror(errno));
    return NULL;
  }
  size_t capacity = 1 << 16, length = 0;
  char *data = malloc(capacity);
  while (data) {
    length += fread(data + length, 1, capacity - length - 1, file);
    if (length + 1 < capacity) break; /* short read: end of file or an error */
    char *grown = capacity < ((size_t)1 << 30) ? realloc(data, capacity * 2) : NULL;
    if (!grown) {
      free(data);
      data = NULL;
      break;
    }
    data = grown;
    capacity *= 2;
  }
  bool failed = ferror(file) || !data;
  fclose(file);
  if (failed) {
    free(data);
    fprintf(stderr, "vlm: error: %s: could not read the file\n", path);
    return NULL;
  }
  data[length] = '\0';
  *out_length = length;
  return data;
}

bool cli_is_help(const char *argument) {
  return strcmp(argument, "--help") == 0 || strcmp(argument, "-h") == 0;
}

bool cli_parse_integer(const char *text, long long minimum, long long maximum, long long *out) {
  char *end = NULL;
  errno = 0;
  long long value = strtoll(text, &end, 10);
  if (errno || end == text || *end || value < minimum || value > maximum) return false;
  *out = value;
  return true;
}

/* ---------------------------------------------------------------------- */

int main(int argc, char **argv) {
  global_options options = {0};
  int index = 1;
  for (; index < argc && argv[index][0] == '-'; index++) {
    const char *argument = argv[index];
    if (cli_is_help(argument)) {
      print_usage(stdout);
      return 0;
    } else if (strcmp(argument, "--version") == 0) {
      printf("vlm %s\n", VLM_VERSION_STRING);
      return 0;
    } else if (strcmp(argument, "--threads") == 0) {
      long long threads = 0;
      if (index + 1 >= argc || !cli_parse_integer(argv[index + 1], 1, 1024, &threads))
        return cli_usage_error("--threads needs a whole number from 1 to 1024");
      options.thread_count = (int)threads;
      index++;
    } else if (strcmp(argument, "--log-level") == 0) {
      vlm_log_level level;
      if (index + 1 >= argc || !vlm_log_level_parse(argv[index + 1], &level))
        return cli_usage_error("--log-level needs one of debug, info, warn, error, off");
      vlm_log_set_level(level);
      index++;
    } else if (strcmp(argument, "--log-format") == 0) {
      vlm_log_format format;
      if (index + 1 >= argc || !vlm_log_format_parse(argv[index + 1], &format))
        return cli_usage_error("--log-format needs text or json");
      vlm_log_set_format(format);
      index++;
    } else {
      return cli_usage_error("unknown option '%s' (see vlm --help)", argument);
    }
  }
  if (index >= argc) {
    print_usage(stderr);
    return 2;
  }
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    if (strcmp(argv[index], commands[i].name) == 0)
      return commands[i].run(argc - index - 1, argv + index + 1, &options);
  return cli_usage_error("unknown command '%s' (see vlm --help)", argv[index]);
}
