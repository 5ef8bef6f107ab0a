/* The Jinja engine on its own: semantics that chat templates rely on (each
 * expected string is what jinja2 3.1.6 renders with Transformers' settings),
 * load-time refusal of unsupported constructs, and the limits that keep
 * hostile templates bounded. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "io/json.h"
#include "test.h"
#include "text/jinja.h"

/* Renders `source` with `variables` (JSON object text or NULL). */
static vlm_status render(const char *source, const char *variables, const jinja_render_options *options,
                         char **out) {
  *out = NULL;
  jinja_template *template_ = NULL;
  VLM_RETURN_IF_ERROR(jinja_template_parse(source, strlen(source), "t.jinja", &template_));
  vlm_json_document document = {0};
  vlm_status status = VLM_OK;
  if (variables) status = vlm_json_parse(variables, strlen(variables), NULL, NULL, "variables", &document);
  size_t length = 0;
  if (status == VLM_OK)
    status = jinja_template_render(template_, variables ? document.root : NULL, options, out, &length);
  if (variables) vlm_json_document_release(&document);
  jinja_template_release(template_);
  return status;
}

static void renders_like_jinja(void) {
  static const struct {
    const char *source, *variables, *expected;
  } cases[] = {
      {"{{ 'a' + x | trim + 'b' }}", "{\"x\": \"  y \"}", "ayb"},
      {"{% for i in [1, 2, 3] %}{{ loop.index }}{{ loop.first }}{{ loop.last }};{% endfor %}", NULL,
       "1TrueFalse;2FalseFalse;3FalseTrue;"},
      {"{% set x = 0 %}{% for i in [1, 2] %}{{ x }}{% set x = i %}{% endfor %}{{ x }}", NULL, "000"},
      {"{% set ns = namespace(n=0) %}{% for i in range(4) %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}", NULL, "6"},
      {"{{ [1, 2.5, none, true, \"a'b\", {'k': 'v'}] }}", NULL, "[1, 2.5, None, True, \"a'b\", {'k': 'v'}]"},
      {"{{ 1e16 }} {{ 0.1 + 0.2 }} {{ 3 / 2 }} {{ 4 / 2 }} {{ 7 // 2 }} {{ -7 % 3 }} {{ 2 ** 10 }}", NULL,
       "1e+16 0.30000000000000004 1.5 2.0 3 2 1024"},
      {"{{ 'abc'[::-1] }}{{ 'héllo' | length }}{{ 'a,b'.split(',') }}", NULL, "cba5['a', 'b']"},
      {"{{ {'a': [1, 'é\"'], 'b': none} | tojson }}", NULL, "{\"a\": [1, \"é\\\"\"], \"b\": null}"},
      {"{{ {'b': 1, 'a': {'c': true}} | tojson(indent=2, sort_keys=true) }}", NULL,
       "{\n  \"a\": {\n    \"c\": true\n  },\n  \"b\": 1\n}"},
      {"{% for a in [] %}x{% else %}empty{% endfor %}{{ foo | length }}{{ foo }}", NULL, "empty0"},
      {"{% for x in [1, 2, 3, 4] if x is even %}{{ x }}{{ loop.length }}{% endfor %}", NULL, "2242"},
      {"{% for k, v in d.items() %}{{ k }}={{ v }} {% endfor %}", "{\"d\": {\"z\": 1, \"a\": 2}}", "z=1 a=2 "},
      {"{% macro m(a, b='B') %}<{{ a }}{{ b }}{{ z }}>{% endmacro %}{% set z = 5 %}{{ m(1) }}{{ m(2, b=3) }}", NULL,
       "<1B5><235>"},
      {"{{ x is defined }}{{ x is none }}{{ y is string }}{{ y is not mapping }}", "{\"x\": null, \"y\": \"s\"}",
       "TrueTrueTrueTrue"},
      {"{{ m | selectattr('type', 'equalto', 'image') | list | length }}",
       "{\"m\": [{\"type\": \"image\"}, {\"type\": \"text\"}, {\"type\": \"image\"}]}", "2"},
      {"{{ '  a  '.strip() }}|{{ 'xxaxx'.lstrip('x') }}|{{ 'a</think>b'.split('</think>')[-1] }}", NULL, "a|axx|b"},
      {"{%- if true -%}\n  A  \n{%- endif -%}\n", NULL, "A"},
      {"  {% if true %}\nX\n  {% endif %}\nY", NULL, "X\nY"},
      {"{# comment #}\n{{ 'a' }}\n{% raw %}{{ b }}{% endraw %}", NULL, "a\n{{ b }}"},
      {"{% for i in range(10) %}{% if i == 3 %}{% break %}{% endif %}{% if i == 1 %}{% continue %}{% endif %}{{ i }}{% endfor %}",
       NULL, "02"},
      {"{{ 'a' if false }}|{{ 'b' if 0 else 'c' }}|{{ none or 'd' }}|{{ 'e' and 'f' }}", NULL, "|c|d|f"},
      {"{% set t %}  x {{ 1 }}{% endset %}[{{ t }}]", NULL, "[  x 1]"},
      {"{{ 'Hello World' | upper }}{{ 'ab' ~ 1 ~ none }}{{ [3, 1, 2] | sort | join('-') }}", NULL, "HELLO WORLDab1None1-2-3"},
      {"{{ strftime_now('%Y-%m-%d') | length }}", NULL, "10"},
      {"{% generation %}gen{% endgeneration %}", NULL, "gen"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *output = NULL;
    vlm_status status = render(cases[i].source, cases[i].variables, NULL, &output);
    if (status != VLM_OK) {
      fprintf(stderr, "  case %zu failed: %s\n", i, vlm_status_message(status));
      vlm_status_free(status);
      test_failures++;
      continue;
    }
    if (strcmp(output, cases[i].expected) != 0) {
      fprintf(stderr, "  case %zu: got [%s] expected [%s]\n", i, output, cases[i].expected);
      test_failures++;
    }
    free(output);
  }
}

static void refuses_unsupported_constructs_at_load(void) {
  static const struct {
    const char *source, *fragment;
  } cases[] = {
      {"{% include 'x' %}", "t.jinja:1:4: unsupported Jinja tag 'include'"},
      {"{% extends 'x' %}", "unsupported Jinja tag 'extends'"},
      {"{% call m() %}{% endcall %}", "unsupported Jinja tag 'call'"},
      {"{% for x in y recursive %}{% endfor %}", "recursive loops"},
      {"{{ x | frobnicate }}", "No filter named 'frobnicate'"},
      {"{{ x is frobnicated }}", "No test named 'frobnicated'"},
      {"{% frob %}", "unknown tag 'frob'"},
      {"\n  {% if x %}", "unexpected end of template: expected 'elif'"},
      {"{{ 'abc }}", "unterminated string"},
      {"{{ x ", "unexpected end of template"},
      {"{# never closed", "Missing end of comment tag"},
      {"{% endif %}", "unexpected 'endif'"},
      {"{{ f(*args) }}", "*args"},
      {"{{ (((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((("
       "(((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1", "nest"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    jinja_template *template_ = NULL;
    CHECK_ERROR(jinja_template_parse(cases[i].source, strlen(cases[i].source), "t.jinja", &template_),
                VLM_STATUS_INVALID_ARGUMENT, cases[i].fragment);
    CHECK(template_ == NULL);
  }
}

static void runtime_errors_name_the_position(void) {
  char *output = NULL;
  CHECK_ERROR(render("line\n  {{ raise_exception('Roles must alternate') }}", NULL, NULL, &output),
              VLM_STATUS_INVALID_ARGUMENT, "t.jinja:2:");
  CHECK_ERROR(render("{{ raise_exception('Roles must alternate') }}", NULL, NULL, &output),
              VLM_STATUS_INVALID_ARGUMENT, "Roles must alternate");
  CHECK_ERROR(render("{{ x.y.z }}", "{}", NULL, &output), VLM_STATUS_INVALID_ARGUMENT, "'x' is undefined");
  CHECK_ERROR(render("{{ 'a' + 1 }}", NULL, NULL, &output), VLM_STATUS_INVALID_ARGUMENT,
              "can only concatenate str (not \"int\") to str");
  CHECK_ERROR(render("{{ m.content + 'x' }}", "{\"m\": {}}", NULL, &output), VLM_STATUS_INVALID_ARGUMENT,
              "'dict object' has no attribute 'content'");
  CHECK_ERROR(render("{% set ns = namespace(_x=1) %}", NULL, NULL, &output), VLM_STATUS_INVALID_ARGUMENT,
              "underscore-prefixed");
  CHECK_ERROR(render("{{ [].append(1) }}", NULL, NULL, &output), VLM_STATUS_INVALID_ARGUMENT,
              "'list object' has no attribute 'append'");
  CHECK(output == NULL);
}

static void hostile_templates_hit_limits(void) {
  char *output = NULL;
  jinja_render_options options;
  jinja_render_options_init(&options);
  options.max_steps = 100000;
  CHECK_ERROR(render("{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}", NULL,
                     &options, &output),
              VLM_STATUS_RESOURCE_EXHAUSTED, "step limit");
  CHECK_ERROR(render("{{ range(1000000) }}", NULL, NULL, &output), VLM_STATUS_OUT_OF_RANGE, "Range too big");
  CHECK_ERROR(render("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", NULL, NULL, &output),
              VLM_STATUS_RESOURCE_EXHAUSTED, "macro calls nest more than 64 deep");
  jinja_render_options_init(&options);
  options.max_output_bytes = 1000;
  CHECK_ERROR(render("{% for i in range(2000) %}x{% endfor %}", NULL, &options, &output),
              VLM_STATUS_RESOURCE_EXHAUSTED, "output limit");
  jinja_render_options_init(&options);
  options.max_memory_bytes = 1 << 20;
  CHECK_ERROR(render("{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
                     NULL, &options, &output),
              VLM_STATUS_RESOURCE_EXHAUSTED, "memory limit");
  CHECK_ERROR(render("{% set ns = namespace() %}{% set ns.self = ns %}{{ ns | tojson }}", NULL, NULL, &output),
              VLM_STATUS_INVALID_ARGUMENT, "not JSON serializable");
  CHECK_ERROR(render("{% set ns = namespace() %}{% set ns.self = ns %}{{ ns }}", NULL, NULL, &output),
              VLM_STATUS_OUT_OF_RANGE, "nests too deeply");
  CHECK(output == NULL);
}

/* prefix + unit x count + suffix, malloc'd. */
static char *repeated(const char *prefix, const char *unit, size_t count, const char *suffix) {
  size_t unit_length = strlen(unit), length = strlen(prefix) + unit_length * count + strlen(suffix);
  char *text = malloc(length + 1), *p = text;
  p += sprintf(p, "%s", prefix);
  for (size_t i = 0; i < count; i++, p += unit_length) memcpy(p, unit, unit_length);
  sprintf(p, "%s", suffix);
  return text;
}

/* Chains the parser builds in a loop are as deep as they are long, and
 * the evaluator walks them recursively: `{{ messages` + `.x` x 30000 +
 * ` }}` overflowed the stack of every process that rendered it. Each kind
 * of chain (and of unary or conditional nesting) is refused at load with
 * the position, and a chain below the bound still works. */
static void long_chains_are_refused_at_load(void) {
  static const struct {
    const char *prefix, *unit, *suffix, *fragment;
  } cases[] = {
      {"{{ messages", ".x", " }}", "t.jinja:1:"},
      {"{{ messages", "[0]", " }}", "expression nests more than 200 levels deep"},
      {"{{ messages", "[1:2]", " }}", "levels deep"},
      {"{{ f", "()", " }}", "levels deep"},
      {"{{ x", " | trim", " }}", "levels deep"},
      {"{{ x", " | join(',')", " }}", "levels deep"},
      {"{{ x", " is sameas(x)", " }}", "levels deep"},
      {"{{ (x | trim)", "()", " }}", "levels deep"},
      {"{{ 1", " + 1", " }}", "levels deep"},
      {"{{ 'a'", " ~ 'a'", " }}", "levels deep"},
      {"{{ 2", " ** 2", " }}", "levels deep"},
      {"{{ x", " and x", " }}", "levels deep"},
      {"{{ x", " or x", " }}", "levels deep"},
      {"{{ x", " if x", " }}", "levels deep"},
      {"{{ ", "not ", "x }}", "nests more than 200 levels deep"},
      {"{{ ", "- ", "1 }}", "nests more than 200 levels deep"},
      {"{{ ", "+ ", "1 }}", "nests more than 200 levels deep"},
      {"{{ ", "x if x else ", "x }}", "nests more than 200 levels deep"},
      {"{{ ", "[", "", "nest"},
      {"{{ ", "{'a': ", "", "nest"},
      {"{% set y", " | trim", " %}{% endset %}", "levels deep"},
      {"{% if x %}", "{% if x %}", "", "nests more than 200 levels deep"},
      {"{% for x in y %}", "{% for x in y %}", "", "nests more than 200 levels deep"},
      {"{% if x %}", "{% elif x %}", "{% endif %}", "nests more than 200 levels deep"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *source = repeated(cases[i].prefix, cases[i].unit, 30000, cases[i].suffix);
    jinja_template *template_ = NULL;
    CHECK_ERROR(jinja_template_parse(source, strlen(source), "t.jinja", &template_),
                VLM_STATUS_INVALID_ARGUMENT, cases[i].fragment);
    if (template_) fprintf(stderr, "  case %zu (%s%s...) parsed\n", i, cases[i].prefix, cases[i].unit);
    jinja_template_release(template_);
    free(source);
  }
  /* Below the bound: 150 links of each chain load, and render. */
  char *output = NULL;
  char *source = repeated("{{ m", ".a", 150, " | length }}");
  char *nested = repeated("{\"m\": ", "{\"a\": ", 120, "1");
  char *variables = repeated(nested, "}", 121, "");
  CHECK_ERROR(render(source, variables, NULL, &output), VLM_STATUS_INVALID_ARGUMENT, "has no attribute 'a'");
  free(source);
  source = repeated("{{ 'x'", " | trim", 150, " }}");
  CHECK_OK(render(source, NULL, NULL, &output));
  CHECK_STR_EQ(output, "x");
  free(output);
  free(source);
  source = repeated("{{ 0", " + 1", 150, " }}");
  CHECK_OK(render(source, NULL, NULL, &output));
  CHECK_STR_EQ(output, "150");
  free(output);
  free(source);
  free(nested);
  free(variables);
}

/* Values a loop keeps wrapping (`set ns.a = [ns.a]`) grew without bound,
 * and == on two of them recursed once per level until the stack ran out;
 * macros re-wrapping their argument did the same through parameters.
 * Stored values are bounded, and macro recursion stacked on tall
 * expressions is bounded in total. */
static void deep_values_and_recursion_are_bounded(void) {
  char *output = NULL;
  CHECK_ERROR(render("{% set ns = namespace(a=[], b=[]) %}{% for i in range(100000) %}"
                     "{% set ns.a = [ns.a] %}{% set ns.b = [ns.b] %}{% endfor %}{{ ns.a == ns.b }}",
                     NULL, NULL, &output),
              VLM_STATUS_OUT_OF_RANGE, "the value of 'a' nests too deeply (more than 200 levels)");
  CHECK_ERROR(render("{% set ns = namespace(a={}) %}{% for i in range(100000) %}"
                     "{% set ns.a = {'k': ns.a} %}{% endfor %}{{ ns.a == ns.a.k }}",
                     NULL, NULL, &output),
              VLM_STATUS_OUT_OF_RANGE, "the value of 'a' nests too deeply");
  /* A namespace in a namespace compares by identity, but what it holds
   * is bounded when it is made. */
  CHECK_ERROR(render("{% set ns = namespace(n=namespace(l=[])) %}{% for i in range(100000) %}"
                     "{% set ns.n = namespace(l=[ns.n.l]) %}{% endfor %}",
                     NULL, NULL, &output),
              VLM_STATUS_OUT_OF_RANGE, "the value of 'l' nests too deeply");
  /* `set` in a loop body is local to the iteration (jinja2 scoping), so
   * this never grows. */
  CHECK_OK(render("{% set x = [] %}{% for i in range(300) %}{% set x = [x] %}{% endfor %}{{ x }}", NULL, NULL,
                  &output));
  CHECK_STR_EQ(output, "[]");
  free(output);
  CHECK_ERROR(render("{% macro f(v, n) %}{% if n < 60 %}{{ f([[[[v]]]], n + 1) }}{% endif %}{% endmacro %}"
                     "{{ f([], 0) }}", NULL, NULL, &output),
              VLM_STATUS_OUT_OF_RANGE, "the value of 'v' nests too deeply");
  /* 199 levels are fine: a scalar inside 199 lists compares and prints. */
  CHECK_OK(render("{% set ns = namespace(a=1, b=1) %}{% for i in range(199) %}"
                  "{% set ns.a = [ns.a] %}{% set ns.b = [ns.b] %}{% endfor %}{{ ns.a == ns.b }}",
                  NULL, NULL, &output));
  CHECK_STR_EQ(output, "True");
  free(output);
  /* A macro recursing through a 150-level expression: 64 calls would be
   * 9600 nested evaluations. */
  char *source = repeated("{% macro f(n) %}{{ f(n + 1)", " | trim", 150, " }}{% endmacro %}{{ f(0) }}");
  CHECK_ERROR(render(source, NULL, NULL, &output), VLM_STATUS_RESOURCE_EXHAUSTED,
              "template rendering nests more than 1000 levels deep");
  free(source);
  /* A namespace holding itself is still only refused where it is printed. */
  CHECK_OK(render("{% set ns = namespace(n=1) %}{% set ns.self = ns %}{{ ns.self.self.n }}", NULL, NULL,
                  &output));
  CHECK_STR_EQ(output, "1");
  free(output);
  output = NULL;
}

/* max_result_bytes bounds the rendered result alone, and says when it
 * stopped the render: text a set block captures and drops does not count. */
static void result_limit_counts_only_the_result(void) {
  jinja_render_options options;
  jinja_render_options_init(&options);
  bool reached = false;
  options.max_result_bytes = 10;
  options.result_limit_reached = &reached;
  char *output = NULL;
  CHECK_OK(render("{% set big %}{% for i in range(100) %}xxxxxxxxxx{% endfor %}{% endset %}{{ big | length }}",
                  NULL, &options, &output));
  CHECK_STR_EQ(output, "1000");
  CHECK(!reached);
  free(output);
  CHECK_ERROR(render("{% for i in range(100) %}x{% endfor %}", NULL, &options, &output),
              VLM_STATUS_RESOURCE_EXHAUSTED, "the rendered text exceeds 10 bytes");
  CHECK(reached);
  reached = false;
  CHECK_ERROR(render("{{ raise_exception('no') }}", NULL, &options, &output), VLM_STATUS_INVALID_ARGUMENT, "no");
  CHECK(!reached);
}

/* The deepest recursion the bounds allow fits well within a thread's stack:
 * each template below runs on a thread with 4 MiB (half the usual default)
 * and reaches a limit, or renders, without overflowing. Measured: under
 * 1 MiB in the release and ASan builds. */
typedef struct stack_case {
  const char *source;
  vlm_status_code code;
  bool passed;
} stack_case;

static void *render_on_thread(void *context) {
  stack_case *c = context;
  char *output = NULL;
  vlm_status status = render(c->source, NULL, NULL, &output);
  c->passed = vlm_status_code_of(status) == c->code;
  if (!c->passed) fprintf(stderr, "  deep render: %s\n", status ? vlm_status_message(status) : "ok");
  vlm_status_free(status);
  free(output);
  return NULL;
}

static void deepest_renders_fit_a_small_stack(void) {
  char *closing = repeated("x", "{% endif %}", 60, "");
  char *sources[4] = {
      repeated("{% macro f(n) %}{{ f(n + 1)", " | trim", 150, " }}{% endmacro %}{{ f(0) }}"),
      repeated("{% macro f(n) %}{% if 1 %}{% for x in [1] %}{{ (((f(n + 1)))) ~ ", "'a' ~ ", 60,
               "'b' }}{% endfor %}{% endif %}{% endmacro %}{{ f(0) }}"),
      repeated("{{ 1", " + 1", 198, " }}"),
      repeated("", "{% if 1 %}", 60, closing),
  };
  const vlm_status_code codes[4] = {VLM_STATUS_RESOURCE_EXHAUSTED, VLM_STATUS_RESOURCE_EXHAUSTED, VLM_STATUS_OK,
                                    VLM_STATUS_OK};
  for (int i = 0; i < 4; i++) {
    stack_case c = {sources[i], codes[i], false};
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, (size_t)4 << 20);
    pthread_t thread;
    CHECK(pthread_create(&thread, &attributes, render_on_thread, &c) == 0);
    pthread_join(thread, NULL);
    pthread_attr_destroy(&attributes);
    CHECK(c.passed);
    free(sources[i]);
  }
  free(closing);
}

TEST_MAIN(TEST(renders_like_jinja), TEST(refuses_unsupported_constructs_at_load),
          TEST(runtime_errors_name_the_position), TEST(hostile_templates_hit_limits),
          TEST(long_chains_are_refused_at_load), TEST(deep_values_and_recursion_are_bounded),
          TEST(deepest_renders_fit_a_small_stack), TEST(result_limit_counts_only_the_result))
