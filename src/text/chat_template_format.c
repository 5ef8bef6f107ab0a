/* Which shape of message["content"] a chat template expects, read from its
 * syntax tree the way vLLM's _detect_content_format reads Jinja2's (vLLM
 * chat_utils.py: resolve_chat_template_content_format with "auto"):
 *
 *   1. the names that hold the conversation: "messages", then, breadth
 *      first, every name assigned (`{% set x = ... %}`) an expression that
 *      reads one of them (through filters, tests and slices);
 *   2. the names that hold one message: the targets of `for` loops over one
 *      of those (again through filters, tests and slices);
 *   3. the template expects OpenAI-style parts when some `for` loop iterates
 *      one message's content (`message['content']` or `message.content`,
 *      through filters, tests and slices); otherwise it prints content as a
 *      string.
 *
 * vLLM's walk asserts that such assignments and loops bind a single name
 * and falls back to "string" when one does not (a namespace attribute, an
 * unpacking); so does this one. Unlike vLLM's, the breadth-first walk
 * visits each name once, so `{% set a = b %}{% set b = a %}` terminates. */
#include <stdbool.h>
#include <string.h>

#include "text/chat_template_format.h"
#include "text/jinja_internal.h"

/* Names tracked per step; real templates use a handful. Past the bound the
 * walk gives up and answers "string", vLLM's default. */
#define MAX_TRACKED_NAMES 64

typedef struct name_set {
  const char *names[MAX_TRACKED_NAMES];
  size_t count;
  bool overflowed;
} name_set;

static bool name_set_has(const name_set *set, const char *name) {
  for (size_t i = 0; i < set->count; i++)
    if (strcmp(set->names[i], name) == 0) return true;
  return false;
}

static void name_set_add(name_set *set, const char *name) {
  if (name_set_has(set, name)) return;
  if (set->count == MAX_TRACKED_NAMES) {
    set->overflowed = true;
    return;
  }
  set->names[set->count++] = name;
}

static bool is_name(const jinja_expression *expression, const char *name) {
  return expression && expression->kind == JINJA_EXPRESSION_NAME && strcmp(expression->name, name) == 0;
}

/* `variable['key']`, `variable["key"]` or `variable.key`. */
static bool is_key_access(const jinja_expression *expression, const char *variable, const char *key) {
  if (!expression || !is_name(expression->first, variable)) return false;
  if (expression->kind == JINJA_EXPRESSION_ATTRIBUTE) return strcmp(expression->name, key) == 0;
  if (expression->kind != JINJA_EXPRESSION_SUBSCRIPT || !expression->second ||
      expression->second->kind != JINJA_EXPRESSION_LITERAL)
    return false;
  const jinja_value *literal = &expression->second->literal;
  return literal->type == JINJA_STRING && literal->as.string.length == strlen(key) &&
         memcmp(literal->as.string.chars, key, literal->as.string.length) == 0;
}

/* vLLM's _is_var_or_elems_access: `variable` (or `variable[key]` when key
 * is set), possibly under filters, tests and slices. */
static bool reads_variable(const jinja_expression *expression, const char *variable, const char *key) {
  while (expression && (expression->kind == JINJA_EXPRESSION_FILTER ||
                        expression->kind == JINJA_EXPRESSION_TEST ||
                        expression->kind == JINJA_EXPRESSION_SLICE))
    expression = expression->first;
  if (!expression) return false;
  return key ? is_key_access(expression, variable, key) : is_name(expression, variable);
}

typedef struct detection_state {
  bool unsupported; /* vLLM's assertion failed: it falls back to "string" */
} detection_state;

/* Every node of a body in document order (Jinja2's find_all order). */
typedef bool (*node_visitor)(const jinja_node *node, void *context);

static bool visit_nodes(const jinja_node *node, node_visitor visit, void *context) {
  for (; node; node = node->next) {
    if (!visit(node, context)) return false;
    if (!visit_nodes(node->body, visit, context)) return false;
    if (!visit_nodes(node->else_body, visit, context)) return false;
  }
  return true;
}

/* Step 1, one name: the names assigned from it. */
typedef struct assignment_search {
  const char *source;
  name_set *found;
  detection_state *detection;
} assignment_search;

static bool find_assignments(const jinja_node *node, void *context) {
  assignment_search *search = context;
  if (node->kind != JINJA_NODE_SET || !reads_variable(node->expression, search->source, NULL)) return true;
  if (node->target.is_unpacking || node->target.attribute) {
    search->detection->unsupported = true;
    return false;
  }
  name_set_add(search->found, node->target.name);
  return true;
}

/* Steps 2 and 3: targets of loops over any of `sources` (or over their
 * `key` when set). */
typedef struct loop_search {
  const name_set *sources;
  const char *key;
  name_set *found;
  detection_state *detection;
  bool stop_at_first;
} loop_search;

static bool find_loops(const jinja_node *node, void *context) {
  loop_search *search = context;
  if (node->kind != JINJA_NODE_FOR) return true;
  for (size_t i = 0; i < search->sources->count; i++) {
    if (!reads_variable(node->expression, search->sources->names[i], search->key)) continue;
    if (node->target.is_unpacking) {
      search->detection->unsupported = true;
      return false;
    }
    name_set_add(search->found, node->target.name);
    return !search->stop_at_first;
  }
  return true;
}

vlm_chat_content_format chat_template_detect_content_format(const jinja_template *parsed) {
  const jinja_node *body = parsed->body;
  detection_state detection = {0};
  /* Step 1: breadth first from "messages"; `conversation` doubles as the queue. */
  name_set conversation = {0};
  name_set_add(&conversation, "messages");
  for (size_t next = 0; next < conversation.count && !detection.unsupported; next++) {
    assignment_search search = {conversation.names[next], &conversation, &detection};
    visit_nodes(body, find_assignments, &search);
  }
  if (detection.unsupported || conversation.overflowed) return VLM_CHAT_CONTENT_STRING;
  name_set messages = {0};
  loop_search message_loops = {&conversation, NULL, &messages, &detection, false};
  visit_nodes(body, find_loops, &message_loops);
  if (detection.unsupported || messages.overflowed) return VLM_CHAT_CONTENT_STRING;
  name_set parts = {0};
  loop_search content_loops = {&messages, "content", &parts, &detection, true};
  visit_nodes(body, find_loops, &content_loops);
  return !detection.unsupported && parts.count > 0 ? VLM_CHAT_CONTENT_OPENAI : VLM_CHAT_CONTENT_STRING;
}
