/* The content format a parsed chat template expects (see
 * chat_template_format.c); exposed through vlm_chat_template_content_format. */
#ifndef VLM_TEXT_CHAT_TEMPLATE_FORMAT_H
#define VLM_TEXT_CHAT_TEMPLATE_FORMAT_H

#include "text/jinja.h"
#include "vlm/chat_template.h"

vlm_chat_content_format chat_template_detect_content_format(const jinja_template *parsed);

#endif
