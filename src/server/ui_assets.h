/* The chat page's files, compiled into the binary: the table is generated
 * at build time from src/server/ui by cmake/embed_ui.cmake. */
#ifndef VLM_SERVER_UI_ASSETS_H
#define VLM_SERVER_UI_ASSETS_H

#include <stddef.h>

typedef struct ui_asset {
  const char *path;          /* "/" or "/ui/NAME" */
  const char *content_type;
  const char *etag;          /* quoted, as the header carries it */
  const unsigned char *data; /* NUL-terminated past `size` */
  size_t size;
} ui_asset;

extern const ui_asset ui_assets[];
extern const size_t ui_asset_count;

#endif
