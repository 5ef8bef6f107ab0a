/* vlm families: what the family registry (src/models/family.c) says runs,
 * as a table, JSON, the README's Markdown table or the README's one-line
 * list. The help texts name families through the same functions
 * (cli_family_names), so the README, `vlm families` and `--help` cannot
 * disagree with the registry; tests/cli/families.sh keeps the README's
 * copies equal to this output. */
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "io/json.h"
#include "models/family.h"

typedef enum { FORMAT_TEXT, FORMAT_JSON, FORMAT_MARKDOWN, FORMAT_SUMMARY } output_format;

static void print_usage(FILE *out) {
  fprintf(out,
          "usage: vlm families [--json | --markdown | --summary]\n"
          "\n"
          "Lists the model families this vlm runs, from its family registry: each\n"
          "family's config.json model_type, what it takes (text, image, audio, video),\n"
          "the backends that run it, its quantized weights and the checkpoint layouts\n"
          "its golden tests prove (layouts other than these may load, but no test stands\n"
          "behind them).\n"
          "\n"
          "  --json       one JSON array, an object per model_type\n"
          "  --markdown   the table as Markdown (the README's copy)\n"
          "  --summary    the families as one line (the README's first paragraph)\n");
}

/* A family with an image path, an audio path or neither (text only). */
static bool family_takes(const vlm_family *family, cli_family_input input) {
  if (!vlm_family_runs(family)) return false;
  switch (input) {
    case CLI_FAMILY_IMAGE: return family->image != NULL;
    case CLI_FAMILY_AUDIO: return family->audio != NULL;
    case CLI_FAMILY_MEDIA: return family->image || family->audio;
    case CLI_FAMILY_TEXT_ONLY: return !family->image && !family->audio;
    case CLI_FAMILY_PROCESSOR_FLOW: return family->prompt_flow == VLM_PROMPT_FLOW_PROCESSOR;
    case CLI_FAMILY_ANY: return true;
  }
  return false;
}

void cli_family_names(cli_family_input input, char *out, size_t size) {
  size_t used = 0;
  out[0] = '\0';
  for (size_t i = 0; i < vlm_family_count() && used < size; i++) {
    const vlm_family *family = vlm_family_at(i);
    if (family_takes(family, input))
      used += (size_t)snprintf(out + used, size - used, "%s%s", used ? ", " : "", family->display_name);
  }
}

/* "  label    a, b, c" wrapped at 80 columns between items (", "), under
 * the first item. */
void cli_print_wrapped(FILE *out, const char *label, const char *list) {
  int indent = fprintf(out, "  %-9s", label), column = indent;
  for (const char *item = list; *item;) {
    const char *end = strstr(item, ", ");
    int length = end ? (int)(end - item) + 1 : (int)strlen(item); /* with its comma */
    if (column > indent && column + 1 + length > 80) column = fprintf(out, "\n%*s", indent, "") - 1;
    else if (column > indent) column += fprintf(out, " ");
    column += fprintf(out, "%.*s", length, item);
    item += length;
    while (*item == ' ') item++;
  }
  fprintf(out, "\n");
}

void cli_print_families_note(FILE *out) {
  char names[512];
  fprintf(out, "\nFamilies (`vlm families` lists each with what it takes and the layouts tested):\n");
  cli_family_names(CLI_FAMILY_IMAGE, names, sizeof(names));
  cli_print_wrapped(out, "images:", names[0] ? names : "none");
  cli_family_names(CLI_FAMILY_AUDIO, names, sizeof(names));
  cli_print_wrapped(out, "audio:", names[0] ? names : "none");
  char text[640];
  cli_family_names(CLI_FAMILY_TEXT_ONLY, names, sizeof(names));
  snprintf(text, sizeof(text), "all of the above, and only text: %s", names);
  cli_print_wrapped(out, "text:", text);
  cli_print_wrapped(out, "video:", "none yet");
  fprintf(out, "Backends (--backend): %s.\n", cli_backend_choices());
}

/* The backends that run the family: the xla backend runs every decoder
 * whose KV layout its state holds, and the image and audio paths through
 * the same graphs (quantized weights excepted, below); a family it refuses
 * says so (cpu_only). */
static const char *family_backends(const vlm_family *family) {
  if (!vlm_family_runs(family)) return "none";
  return family->cpu_only ? "cpu" : "cpu, xla";
}

static void append_layouts(vlm_string_builder *out, const vlm_family *family, bool quantized) {
  bool first = true;
  for (int i = 0; i < family->layout_count; i++) {
    if (family->layouts[i].quantized != quantized) continue;
    vlm_sb_appendf(out, "%s%s", first ? "" : ", ", family->layouts[i].name);
    first = false;
  }
}

/* --quantize at load (the cpu backend's q8/q4, any decoder) and the
 * pre-quantized formats the goldens prove. */
static void append_quantized(vlm_string_builder *out, const vlm_family *family) {
  vlm_sb_append_literal(out, "q8, q4");
  for (int i = 0; i < family->layout_count; i++)
    if (family->layouts[i].quantized) {
      vlm_sb_append_literal(out, "; ");
      append_layouts(out, family, true);
      break;
    }
}

static const char *yes_no(bool value) { return value ? "yes" : "no"; }

static void append_json(vlm_string_builder *out) {
  vlm_sb_append_literal(out, "[");
  bool first = true;
  for (size_t i = 0; i < vlm_family_count(); i++) {
    const vlm_family *family = vlm_family_at(i);
    if (!vlm_family_runs(family)) continue;
    vlm_sb_appendf(out, "%s\n{\"family\":", first ? "" : ",");
    first = false;
    vlm_sb_append_json_string(out, family->display_name, strlen(family->display_name));
    vlm_sb_appendf(out, ",\"model_type\":\"%s\",\"text\":true,\"image\":%s,\"audio\":%s,\"video\":false,"
                   "\"backends\":[%s],\"quantize\":[\"q8\",\"q4\"],\"layouts\":[",
                   family->model_type, family->image ? "true" : "false", family->audio ? "true" : "false",
                   family->cpu_only ? "\"cpu\"" : "\"cpu\",\"xla\"");
    for (int k = 0; k < family->layout_count; k++) {
      vlm_sb_appendf(out, "%s{\"name\":", k ? "," : "");
      vlm_sb_append_json_string(out, family->layouts[k].name, strlen(family->layouts[k].name));
      vlm_sb_appendf(out, ",\"goldens\":\"%s\",\"quantized\":%s}", family->layouts[k].goldens,
                     family->layouts[k].quantized ? "true" : "false");
    }
    vlm_sb_append_literal(out, "]}");
  }
  vlm_sb_append_literal(out, "\n]\n");
}

static void append_table(vlm_string_builder *out, bool markdown) {
  static const char *const headers[] = {"family", "model_type", "text", "image", "audio", "video",
                                        "backends", "quantized (cpu)", "tested checkpoint layouts"};
  enum { COLUMNS = sizeof(headers) / sizeof(headers[0]) };
  size_t rows = vlm_family_count();
  char *cells[64][COLUMNS] = {{0}};
  if (rows > 64) rows = 64;
  size_t width[COLUMNS] = {0};
  size_t used_rows = 0;
  for (size_t i = 0; i < rows; i++) {
    const vlm_family *family = vlm_family_at(i);
    if (!vlm_family_runs(family)) continue;
    vlm_string_builder quantized = {0}, layouts = {0};
    append_quantized(&quantized, family);
    append_layouts(&layouts, family, false);
    char model_type[96];
    snprintf(model_type, sizeof(model_type), markdown ? "`%s`" : "%s", family->model_type);
    const char *values[COLUMNS] = {family->display_name, model_type, "yes", yes_no(family->image),
                                   yes_no(family->audio), "no", family_backends(family), NULL, NULL};
    for (int c = 0; c < COLUMNS - 2; c++) cells[used_rows][c] = strdup(values[c]);
    cells[used_rows][COLUMNS - 2] = vlm_sb_finish(&quantized);
    cells[used_rows][COLUMNS - 1] = vlm_sb_finish(&layouts);
    used_rows++;
  }
  for (int c = 0; c < COLUMNS; c++) {
    width[c] = strlen(headers[c]);
    for (size_t r = 0; r < used_rows; r++)
      if (cells[r][c] && strlen(cells[r][c]) > width[c]) width[c] = strlen(cells[r][c]);
  }
  /* The header, Markdown's rule, then a line per family. */
  for (size_t line = 0; line < used_rows + 1; line++) {
    for (int c = 0; c < COLUMNS; c++) {
      const char *text = line ? cells[line - 1][c] : headers[c];
      if (markdown) vlm_sb_appendf(out, "| %s ", text ? text : "");
      else if (c + 1 < COLUMNS) vlm_sb_appendf(out, "%-*s  ", (int)width[c], text ? text : "");
      else vlm_sb_appendf(out, "%s", text ? text : "");
    }
    if (markdown) vlm_sb_append_literal(out, "|");
    vlm_sb_append_literal(out, "\n");
    if (markdown && line == 0) {
      for (int c = 0; c < COLUMNS; c++) vlm_sb_append_literal(out, "|---");
      vlm_sb_append_literal(out, "|\n");
    }
  }
  if (!markdown)
    vlm_sb_append_literal(out, "\nquantized: --quantize q8|q4 at load, and the pre-quantized formats listed; the xla\n"
                               "backend refuses quantized weights. No family takes video yet.\n");
  for (size_t r = 0; r < used_rows; r++)
    for (int c = 0; c < COLUMNS; c++) free(cells[r][c]);
}

static void append_summary(vlm_string_builder *out) {
  char media[512], text[512];
  cli_family_names(CLI_FAMILY_MEDIA, media, sizeof(media));
  cli_family_names(CLI_FAMILY_TEXT_ONLY, text, sizeof(text));
  vlm_sb_appendf(out, "%s; text-only: %s\n", media, text);
}

int command_families(int argc, char **argv, const global_options *options) {
  (void)options;
  output_format format = FORMAT_TEXT;
  for (int i = 0; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      print_usage(stdout);
      return 0;
    } else if (strcmp(argv[i], "--json") == 0) {
      format = FORMAT_JSON;
    } else if (strcmp(argv[i], "--markdown") == 0) {
      format = FORMAT_MARKDOWN;
    } else if (strcmp(argv[i], "--summary") == 0) {
      format = FORMAT_SUMMARY;
    } else {
      return cli_usage_error("families: unknown option '%s' (see vlm families --help)", argv[i]);
    }
  }
  vlm_string_builder out = {0};
  if (format == FORMAT_JSON) append_json(&out);
  else if (format == FORMAT_SUMMARY) append_summary(&out);
  else append_table(&out, format == FORMAT_MARKDOWN);
  char *text = vlm_sb_finish(&out);
  if (!text) return cli_report_status(vlm_status_make(VLM_STATUS_RESOURCE_EXHAUSTED, "out of memory"));
  fputs(text, stdout);
  free(text);
  return 0;
}
