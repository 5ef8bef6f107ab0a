/* vlm tokenize --chat: renders the model's chat template for a conversation
 * and prints the prompt exactly (no newline added), so users can see what the
 * model sees and conformance tests can compare bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/hub_download.h"
#include "vlm.h"
#include "vlm/engine.h"
#include "vlm/model.h"

void cli_tokenize_chat_usage(FILE *out) {
  char processor[512];
  cli_family_names(CLI_FAMILY_PROCESSOR_FLOW, processor, sizeof(processor));
  fprintf(out,
          "usage: vlm tokenize --model DIR --chat MESSAGES.json [--add-generation-prompt]\n"
          "                    [--tools TOOLS.json] [--ids]\n"
          "\n"
          "Renders the model's chat template (chat_template.jinja, chat_template.json or\n"
          "tokenizer_config.json) as Transformers' apply_chat_template does, and prints\n"
          "the prompt without a trailing newline.\n"
          "\n"
          "  --model DIR              the model directory, or a cached model id\n"
          "  --chat FILE              a JSON array of messages, or {\"messages\": [...],\n"
          "                           \"tools\": [...]}\n"
          "  --add-generation-prompt  end with the header of the assistant's reply\n"
          "  --tools FILE             a JSON array of tool schemas\n"
          "  --ids                    print the prompt's ids instead (a JSON array), as the\n"
          "                           model's Transformers flow tokenizes it: multimodal\n"
          "                           models through their processor (special tokens added\n"
          "                           unless the prompt starts with bos_token), text-only\n"
          "                           models through the tokenizer (none added); the ids\n"
          "                           vlm serve feeds the model (the same code, content in\n"
          "                           the template's format) and POST /tokenize returns;\n"
          "                           needs DIR/config.json and the safetensors headers\n"
          "\n"
          "Prompts go through the processor for:\n");
  cli_print_wrapped(out, "", processor);
  fprintf(out, "and through the tokenizer for every other model_type.\n");
}

/* The ids the model is given, by the same code as `vlm serve` builds its
 * prompts (vlm_chat_prompt_ids: the template with the content format the
 * family's flow hands it, then its tokenization), so the two agree. */
static vlm_status print_prompt_ids(const char *model_dir, const char *messages, bool add_generation_prompt) {
  vlm_model *model = NULL;
  vlm_status status = vlm_model_open(model_dir, NULL, &model);
  int32_t *ids = NULL;
  int64_t count = 0;
  vlm_engine_request_options options = {.messages_json = messages, .no_generation_prompt = !add_generation_prompt};
  if (!status) status = vlm_chat_prompt_ids(model, &options, &ids, &count);
  vlm_model_release(model);
  if (!status) {
    printf("[");
    for (int64_t i = 0; i < count; i++) printf(i ? ", %d" : "%d", ids[i]);
    printf("]\n");
  }
  free(ids);
  return status;
}

int command_tokenize_chat(int argc, char **argv, const global_options *options) {
  (void)options;
  const char *model_dir = NULL, *chat_path = NULL, *tools_path = NULL;
  bool add_generation_prompt = false, print_ids = false;
  for (int i = 0; i < argc; i++) {
    const char *argument = argv[i];
    if (cli_is_help(argument)) {
      cli_tokenize_chat_usage(stdout);
      return 0;
    } else if (!strcmp(argument, "--model") || !strcmp(argument, "--chat") || !strcmp(argument, "--tools")) {
      if (i + 1 >= argc) return cli_usage_error("tokenize: %s needs a value", argument);
      const char **target = argument[2] == 'm' ? &model_dir : argument[2] == 'c' ? &chat_path : &tools_path;
      *target = argv[++i];
    } else if (!strcmp(argument, "--add-generation-prompt")) {
      add_generation_prompt = true;
    } else if (!strcmp(argument, "--ids")) {
      print_ids = true;
    } else if (i == 0 && !strcmp(argument, "tokenize")) {
      continue; /* called with the subcommand name still in argv */
    } else {
      return cli_usage_error("tokenize: unknown option '%s' with --chat (see vlm tokenize --help)", argument);
    }
  }
  if (!model_dir) return cli_usage_error("tokenize: --model DIR is required");
  if (!chat_path) return cli_usage_error("tokenize: --chat FILE is required");
  char resolved[VLM_HUB_PATH_MAX];
  vlm_status resolve_status = cli_model_dir(model_dir, VLM_HUB_NEEDS_TOKENIZER, false, resolved, sizeof(resolved));
  if (resolve_status) return cli_report_status(resolve_status);
  model_dir = resolved;

  size_t messages_length = 0, tools_length = 0;
  char *messages = cli_read_file(chat_path, &messages_length);
  if (!messages) return 1;
  char *tools = NULL;
  if (tools_path && !(tools = cli_read_file(tools_path, &tools_length))) {
    free(messages);
    return 1;
  }
  if (print_ids && tools) {
    free(messages);
    free(tools);
    return cli_usage_error("tokenize: --ids does not take --tools yet (the server's prompts carry no tools)");
  }
  if (print_ids) {
    vlm_status status = print_prompt_ids(model_dir, messages, add_generation_prompt);
    free(messages);
    return status ? cli_report_status(status) : 0;
  }
  vlm_chat_template *chat_template = NULL;
  vlm_status status = vlm_chat_template_load(model_dir, &chat_template);
  char *prompt = NULL;
  size_t length = 0;
  if (status == VLM_OK) {
    vlm_chat_template_options render_options = {.add_generation_prompt = add_generation_prompt,
                                                .tools_json = tools};
    status = vlm_chat_template_render(chat_template, messages, messages_length, &render_options,
                                      &prompt, &length);
  }
  vlm_chat_template_release(chat_template);
  free(messages);
  free(tools);
  if (status != VLM_OK) return cli_report_status(status);
  bool written = fwrite(prompt, 1, length, stdout) == length && fflush(stdout) == 0;
  free(prompt);
  if (!written) {
    fprintf(stderr, "vlm: error: cannot write the prompt\n");
    return 1;
  }
  return 0;
}
