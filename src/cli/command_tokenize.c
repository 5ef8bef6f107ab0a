/* vlm tokenize: text -> ids (a JSON array), ids -> text, for debugging
 * prompts. `--chat` is handled by command_tokenize_chat.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/hub_download.h"
#include "vlm/tokenizer.h"

static void print_usage(FILE *out) {
  fprintf(out,
          "usage: vlm tokenize --model DIR (--text T | --file F) [--no-special]\n"
          "       vlm tokenize --model DIR --decode IDS [--skip-special]\n"
          "       vlm tokenize --model DIR --chat MESSAGES.json [--add-generation-prompt]\n"
          "\n"
          "Tokenizes text as Hugging Face Transformers does and prints the ids as a\n"
          "JSON array; or decodes a JSON array of ids and prints the text. DIR needs\n"
          "only tokenizer.json (and tokenizer_config.json, for BOS/EOS settings; and\n"
          "config.json, whose model_type picks the tokenizer class as AutoTokenizer\n"
          "does).\n"
          "\n"
          "  --model DIR        the model (or tokenizer) directory, or a cached model id\n"
          "  --text T           the text to tokenize\n"
          "  --file F           tokenize the contents of file F (bytes as they are)\n"
          "  --no-special       do not add BOS/EOS/template tokens (add_special_tokens=False)\n"
          "  --decode IDS       decode a JSON array of ids, e.g. '[9707, 1879]'\n"
          "  --skip-special     with --decode: drop special tokens from the text\n"
          "  --hf-tokenizers    follow tokenizer.json alone (tokenizers.Tokenizer), not\n"
          "                     Transformers' AutoTokenizer\n"
          "  --chat FILE        render the model's chat template for MESSAGES.json (below)\n"
          "\n");
  cli_tokenize_chat_usage(out);
}

/* Parses "[1, 2, 3]" into ids. */
static bool parse_id_array(const char *text, vlm_token_ids *out) {
  const char *cursor = text;
  while (*cursor == ' ' || *cursor == '\n' || *cursor == '\t') cursor++;
  if (*cursor++ != '[') return false;
  for (bool first = true;; first = false) {
    while (*cursor == ' ' || *cursor == '\n' || *cursor == '\t') cursor++;
    if (*cursor == ']' && first) break;
    char *end = NULL;
    errno = 0;
    long value = strtol(cursor, &end, 10);
    if (end == cursor || errno || value < 0 || value > INT32_MAX) return false;
    if (out->count == out->capacity) {
      size_t capacity = out->capacity ? out->capacity * 2 : 64;
      int32_t *grown = realloc(out->ids, capacity * sizeof(*grown));
      if (!grown) return false;
      out->ids = grown;
      out->capacity = capacity;
    }
    out->ids[out->count++] = (int32_t)value;
    cursor = end;
    while (*cursor == ' ' || *cursor == '\n' || *cursor == '\t') cursor++;
    if (*cursor == ']') break;
    if (*cursor++ != ',') return false;
  }
  cursor++;
  while (*cursor == ' ' || *cursor == '\n' || *cursor == '\t') cursor++;
  return *cursor == '\0';
}

static void print_ids(const vlm_token_ids *ids) {
  putchar('[');
  for (size_t i = 0; i < ids->count; i++) printf(i ? ", %d" : "%d", ids->ids[i]);
  printf("]\n");
}

typedef struct tokenize_arguments {
  const char *model_dir, *text, *file, *decode;
  bool no_special, skip_special, hf_tokenizers;
} tokenize_arguments;

static int parse_arguments(int argc, char **argv, tokenize_arguments *arguments) {
  for (int i = 0; i < argc; i++) {
    const char *argument = argv[i];
    const char **value = strcmp(argument, "--model") == 0    ? &arguments->model_dir
                         : strcmp(argument, "--text") == 0   ? &arguments->text
                         : strcmp(argument, "--file") == 0   ? &arguments->file
                         : strcmp(argument, "--decode") == 0 ? &arguments->decode
                                                             : NULL;
    if (value) {
      if (i + 1 >= argc) return cli_usage_error("tokenize: %s needs a value", argument);
      *value = argv[++i];
    } else if (strcmp(argument, "--no-special") == 0) {
      arguments->no_special = true;
    } else if (strcmp(argument, "--skip-special") == 0) {
      arguments->skip_special = true;
    } else if (strcmp(argument, "--hf-tokenizers") == 0) {
      arguments->hf_tokenizers = true;
    } else {
      return cli_usage_error("tokenize: unknown option '%s' (see vlm tokenize --help)", argument);
    }
  }
  if (!arguments->model_dir) return cli_usage_error("tokenize: --model DIR is required");
  int inputs = !!arguments->text + !!arguments->file + !!arguments->decode;
  if (inputs != 1)
    return cli_usage_error("tokenize: give exactly one of --text, --file, --decode");
  return 0;
}

static int run_decode(const vlm_tokenizer *tokenizer, const tokenize_arguments *arguments) {
  vlm_token_ids ids = {0};
  if (!parse_id_array(arguments->decode, &ids)) {
    vlm_token_ids_release(&ids);
    return cli_usage_error("tokenize: --decode needs a JSON array of non-negative ids");
  }
  char *text = NULL;
  size_t length = 0;
  vlm_status status = vlm_tokenizer_decode(tokenizer, ids.ids, ids.count,
                                           arguments->skip_special, &text, &length);
  vlm_token_ids_release(&ids);
  if (status) return cli_report_status(status);
  fwrite(text, 1, length, stdout);
  putchar('\n');
  free(text);
  return 0;
}

static int run_encode(const vlm_tokenizer *tokenizer, const tokenize_arguments *arguments) {
  char *data = NULL;
  size_t length = 0;
  /* Any bytes: invalid UTF-8 is the tokenizer's business. */
  if (arguments->file && !(data = cli_read_file(arguments->file, &length))) return 1;
  const char *text = arguments->file ? data : arguments->text;
  if (!arguments->file) length = strlen(text);
  vlm_token_ids ids = {0};
  vlm_status status = vlm_tokenizer_encode(tokenizer, text, length, !arguments->no_special, &ids);
  free(data);
  if (status) return cli_report_status(status);
  print_ids(&ids);
  vlm_token_ids_release(&ids);
  return 0;
}

int command_tokenize(int argc, char **argv, const global_options *options) {
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--chat") == 0) return command_tokenize_chat(argc, argv, options);
    if (cli_is_help(argv[i])) {
      print_usage(stdout);
      return 0;
    }
  }
  tokenize_arguments arguments = {0};
  int usage = parse_arguments(argc, argv, &arguments);
  if (usage) return usage;
  vlm_tokenizer_options tokenizer_options = {
      .tokenizers_library_semantics = arguments.hf_tokenizers};
  char model_dir[VLM_HUB_PATH_MAX];
  vlm_status status = cli_model_dir(arguments.model_dir, VLM_HUB_NEEDS_TOKENIZER, false, model_dir, sizeof(model_dir));
  if (status) return cli_report_status(status);
  arguments.model_dir = model_dir;
  vlm_tokenizer *tokenizer = NULL;
  status = vlm_tokenizer_create(arguments.model_dir, &tokenizer_options, &tokenizer);
  if (status) return cli_report_status(status);
  int exit_code = arguments.decode ? run_decode(tokenizer, &arguments)
                                   : run_encode(tokenizer, &arguments);
  vlm_tokenizer_release(tokenizer);
  return exit_code;
}
