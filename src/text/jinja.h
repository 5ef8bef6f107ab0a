/* A Jinja2 template engine for chat templates.
 *
 * Why our own: chat templates are Jinja2 programs shipped with the model,
 * and the prompt a model sees must be byte-identical to what Transformers'
 * apply_chat_template renders. We implement the subset real chat templates
 * use, with Jinja2's semantics as configured by Transformers 5.23.0:
 * ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) plus
 * the loopcontrols extension and `{% generation %}` blocks, a `tojson` that
 * is json.dumps(ensure_ascii=False), and the globals raise_exception,
 * strftime_now, namespace and dict.
 *
 * Anything outside that subset (an unknown tag, filter or test, `include`,
 * `extends`, recursive loops, ...) is refused when the template is parsed,
 * never rendered approximately. Templates are untrusted input: parsing and
 * rendering are bounded (nesting depth, call depth, loop iterations, output
 * and memory size) and fail with an error naming the line and column. */
#ifndef VLM_TEXT_JINJA_H
#define VLM_TEXT_JINJA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/json.h"
#include "vlm.h"

typedef struct jinja_template jinja_template;

typedef struct jinja_render_options {
  size_t max_output_bytes;  /* default 64 MiB */
  size_t max_memory_bytes;  /* working memory of one render; default 256 MiB */
  uint64_t max_steps;       /* evaluated nodes and loop iterations; default 50M */
  int max_call_depth;       /* nested macro calls; default 64 */
  /* Seconds since the epoch that strftime_now formats (local time); a
   * negative value means "now". Tests pin it for reproducible output. */
  int64_t fixed_time;
  /* The rendered result alone (not text that macros and set blocks capture,
   * which max_output_bytes also counts); 0: no limit but max_output_bytes.
   * Going over stops the render early with RESOURCE_EXHAUSTED and, when
   * result_limit_reached is set, sets *result_limit_reached: a caller can
   * refuse a prompt that cannot fit its context while it renders. */
  size_t max_result_bytes;
  bool *result_limit_reached;
} jinja_render_options;

/* Sets the defaults listed above. */
void jinja_render_options_init(jinja_render_options *options);

/* Parses `length` bytes of template source. `source_name` prefixes error
 * messages ("<name>:<line>:<column>: ..."). */
vlm_status jinja_template_parse(const char *source, size_t length,
                                const char *source_name,
                                jinja_template **out_template);
void jinja_template_release(jinja_template *template_);

/* Renders with the members of `variables` (a JSON object, or NULL) as the
 * template's global variables. On success *out_text is malloc'd and
 * NUL-terminated (the caller frees it); the text may contain NUL bytes, so
 * *out_length is authoritative. */
vlm_status jinja_template_render(const jinja_template *template_,
                                 const vlm_json_value *variables,
                                 const jinja_render_options *options,
                                 char **out_text, size_t *out_length);

#endif
