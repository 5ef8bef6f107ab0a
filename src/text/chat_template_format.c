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
 *   4. (not vLLM's) or when a macro loops over one of its parameters and is
 *      called with one message's content in that place (Qwen3-VL's
 *      render_content): Transformers hands such a template the parts.
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

/* Step 4, beyond vLLM's walk: the loop over one message's content may sit
 * in a macro that a message's content is passed to (Qwen3-VL's
 * `render_content(message.content, True)` looping `for item in content`).
 * Transformers hands such a template the parts as they are; so does vlm. */
typedef struct macro_search {
  const jinja_node *body;
  const name_set *messages;
  const char *macro;      /* the macro being checked */
  const char *parameter;  /* its parameter the body loops over */
  size_t position;
  bool found;
} macro_search;

/* `macro(..., <message>.content at position or by name, ...)` somewhere in `expression`. */
static bool passes_content(const jinja_expression *expression, const macro_search *search) {
  if (!expression) return false;
  if (expression->kind == JINJA_EXPRESSION_CALL && is_name(expression->first, search->macro)) {
    size_t position = 0;
    for (const jinja_call_argument *argument = expression->arguments; argument; argument = argument->next) {
      bool here = argument->name ? strcmp(argument->name, search->parameter) == 0 : position++ == search->position;
      for (size_t i = 0; here && i < search->messages->count; i++)
        if (reads_variable(argument->value, search->messages->names[i], "content")) return true;
    }
  }
  const jinja_expression *operands[4] = {expression->first, expression->second, expression->third,
                                         expression->fourth};
  for (int i = 0; i < 4; i++)
    if (passes_content(operands[i], search)) return true;
  for (const jinja_expression *child = expression->children; child; child = child->next)
    if (passes_content(child, search)) return true;
  for (const jinja_call_argument *argument = expression->arguments; argument; argument = argument->next)
    if (passes_content(argument->value, search)) return true;
  return false;
}

static bool find_content_call(const jinja_node *node, void *context) {
  macro_search *search = context;
  if (passes_content(node->expression, search) || passes_content(node->condition, search)) search->found = true;
  return !search->found;
}

/* A `for` over the parameter being checked, inside the macro's body. */
static bool find_parameter_loop(const jinja_node *node, void *context) {
  macro_search *search = context;
  if (node->kind == JINJA_NODE_FOR && reads_variable(node->expression, search->parameter, NULL)) search->found = true;
  return !search->found;
}

static bool find_part_macros(const jinja_node *node, void *context) {
  macro_search *search = context;
  if (node->kind != JINJA_NODE_MACRO || !node->target.name) return true;
  for (size_t p = 0; p < node->parameter_count && !search->found; p++) {
    macro_search loop = {.parameter = node->parameters[p]};
    visit_nodes(node->body, find_parameter_loop, &loop);
    if (!loop.found) continue;
    search->macro = node->target.name;
    search->parameter = node->parameters[p];
    search->position = p;
    visit_nodes(search->body, find_content_call, search);
  }
  return !search->found;
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
  if (detection.unsupported) return VLM_CHAT_CONTENT_STRING;
  if (parts.count > 0) return VLM_CHAT_CONTENT_OPENAI;
  macro_search macros = {.body = body, .messages = &messages};
  visit_nodes(body, find_part_macros, &macros);
  return macros.found ? VLM_CHAT_CONTENT_OPENAI : VLM_CHAT_CONTENT_STRING;
}
