/* The default log sink (src/core/log.c): one line per message on stderr
 * with its UTC time, in text or JSON, and no message can make more than
 * one line or carry a control character to the terminal (a message may
 * quote what a client sent). stderr is redirected to a file to read it. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "io/json.h"
#include "test.h"

/* What one vlm_log call wrote to stderr. */
static char *logged(vlm_log_format format, vlm_log_level level, const char *message) {
  static char text[16384];
  char path[512];
  snprintf(path, sizeof(path), "%s/stderr.txt", test_temp_dir());
  fflush(stderr);
  int saved = dup(2);
  FILE *file = fopen(path, "w+");
  if (!file || saved < 0) return strcpy(text, "(cannot redirect stderr)");
  dup2(fileno(file), 2);
  vlm_log_set_format(format);
  vlm_log(level, "%s", message);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(file);
  size_t length = fread(text, 1, sizeof(text) - 1, file);
  text[length] = '\0';
  fclose(file);
  vlm_log_set_format(VLM_LOG_FORMAT_TEXT);
  return text;
}

/* "2026-05-04T09:12:03.481Z" at `text`: its length, or 0. (No POSIX
 * regex here: the test links Oniguruma, whose regcomp would be taken.) */
static size_t time_length(const char *text) {
  static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
  for (size_t i = 0; shape[i]; i++)
    if (shape[i] == 'd' ? !isdigit((unsigned char)text[i]) : text[i] != shape[i]) return 0;
  return sizeof(shape) - 1;
}

/* `line` is `before` TIME `after`. */
static bool timed(const char *line, const char *before, const char *after) {
  size_t prefix = strlen(before);
  if (strncmp(line, before, prefix) != 0) return false;
  size_t time = time_length(line + prefix);
  return time && strcmp(line + prefix + time, after) == 0;
}

static void text_lines_carry_the_time_and_level(void) {
  vlm_log_set_level(VLM_LOG_INFO);
  const char *line = logged(VLM_LOG_FORMAT_TEXT, VLM_LOG_INFO, "engine: 1 slot(s)");
  CHECK(timed(line, "", " vlm: info: engine: 1 slot(s)\n"));
  line = logged(VLM_LOG_FORMAT_TEXT, VLM_LOG_WARN, "careful");
  CHECK(timed(line, "", " vlm: warning: careful\n"));
  /* Below the level: nothing. */
  CHECK_STR_EQ(logged(VLM_LOG_FORMAT_TEXT, VLM_LOG_DEBUG, "hidden"), "");
}

static void a_message_is_one_line_of_plain_characters(void) {
  vlm_log_set_level(VLM_LOG_INFO);
  /* A newline would forge a second line; ESC would drive the terminal; a
   * byte that is not UTF-8 is written as its value. UTF-8 stays as it is. */
  const char *line = logged(VLM_LOG_FORMAT_TEXT, VLM_LOG_INFO,
                            "model 'x\nvlm: info: forged' \x1b[31mred\x7f caf\xc3\xa9 \xff\xc3");
  CHECK(timed(line, "", " vlm: info: model 'x\\x0avlm: info: forged' \\x1b[31mred\\x7f caf\xc3\xa9 \\xff\\xc3\n"));
  CHECK_INT_EQ(strchr(line, '\n') - line, (long)strlen(line) - 1);
}

static void json_lines_are_objects(void) {
  vlm_log_set_level(VLM_LOG_INFO);
  const char *line = logged(VLM_LOG_FORMAT_JSON, VLM_LOG_ERROR, "say \"hi\"\\ \n\t\x01 caf\xc3\xa9 \xff");
  CHECK(timed(line, "{\"time\":\"", "\",\"level\":\"error\",\"message\":\"say \\\"hi\\\"\\\\ \\n\\u0009\\u0001 "
                                       "caf\xc3\xa9 \\ufffd\"}\n"));
  vlm_json_document document;
  CHECK_OK(vlm_json_parse(line, strlen(line), NULL, NULL, "log line", &document));
  if (TEST_CURRENT_FAILED()) return;
  const char *message = vlm_json_get_string(vlm_json_object_get(document.root, "message"));
  CHECK_STR_EQ(message ? message : "", "say \"hi\"\\ \n\t\x01 caf\xc3\xa9 \xef\xbf\xbd");
  CHECK_STR_EQ(vlm_json_get_string(vlm_json_object_get(document.root, "level")), "error");
  vlm_json_document_release(&document);
}

static void formats_parse(void) {
  vlm_log_format format = VLM_LOG_FORMAT_TEXT;
  CHECK(vlm_log_format_parse("json", &format) && format == VLM_LOG_FORMAT_JSON);
  CHECK(vlm_log_format_parse("TEXT", &format) && format == VLM_LOG_FORMAT_TEXT);
  CHECK(!vlm_log_format_parse("yaml", &format));
  CHECK(!vlm_log_format_parse(NULL, &format));
}

TEST_MAIN(TEST(text_lines_carry_the_time_and_level), TEST(a_message_is_one_line_of_plain_characters),
          TEST(json_lines_are_objects), TEST(formats_parse))
