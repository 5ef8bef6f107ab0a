/* GET / and /ui/...: the chat page (src/server/ui), compiled into the
 * binary (ui_assets.h). The page is a client of the public API like any
 * other: it fetches /v1/models and streams /v1/chat/completions with the
 * key its user types, so it needs no route or privilege of its own. Its
 * files need no key either (the page has to load to ask for it); off with
 * --no-ui, when these URLs are unknown ones (404).
 *
 * Headers: a Content-Security-Policy that lets the page run only its own
 * script and style and talk only to this origin (images it shows are the
 * user's, as data: URLs), no framing, no sniffing, no referrer; an ETag
 * and Cache-Control: no-cache, so a browser revalidates (304) and a new
 * build's page is never stale. */
#include <string.h>

#include "server/server_internal.h"
#include "server/ui_assets.h"

static const char content_security_policy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "media-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'";

static const ui_asset *find_asset(const char *url) {
  for (size_t i = 0; url && i < ui_asset_count; i++)
    if (strcmp(url, ui_assets[i].path) == 0) return &ui_assets[i];
  return NULL;
}

bool ui_serves(const char *url) { return find_asset(url) != NULL; }

/* If-None-Match holds the asset's ETag (one of a list, or "*"). */
static bool not_modified(struct MHD_Connection *connection, const ui_asset *asset) {
  const char *given = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
  if (!given) return false;
  if (strcmp(given, "*") == 0) return true;
  size_t length = strlen(asset->etag);
  for (const char *at = strstr(given, asset->etag); at; at = strstr(at + 1, asset->etag)) {
    bool starts = at == given || at[-1] == ' ' || at[-1] == ',';
    bool ends = at[length] == '\0' || at[length] == ',' || at[length] == ' ';
    if (starts && ends) return true;
  }
  return false;
}

enum MHD_Result ui_respond(vlm_server *server, struct MHD_Connection *connection,
                           http_request *request) {
  const ui_asset *asset = find_asset(request->url);
  if (!asset) { /* routed here only for a known file */
    openai_error error = {0};
    openai_error_set(&error, MHD_HTTP_NOT_FOUND, "invalid_request_error", NULL, "unknown_url", "Unknown request URL.");
    enum MHD_Result result = server_respond_error(server, connection, request, &error);
    openai_error_release(&error);
    return result;
  }
  bool unchanged = not_modified(connection, asset);
  struct MHD_Response *response =
      unchanged ? MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT)
                : MHD_create_response_from_buffer(asset->size, (void *)asset->data, MHD_RESPMEM_PERSISTENT);
  if (!response) return MHD_NO;
  if (!unchanged) MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, asset->content_type);
  MHD_add_response_header(response, MHD_HTTP_HEADER_ETAG, asset->etag);
  MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
  MHD_add_response_header(response, "Content-Security-Policy", content_security_policy);
  MHD_add_response_header(response, "X-Content-Type-Options", "nosniff");
  MHD_add_response_header(response, "X-Frame-Options", "DENY");
  MHD_add_response_header(response, "Referrer-Policy", "no-referrer");
  enum MHD_Result result = server_queue_response(server, connection, request,
                                                 unchanged ? MHD_HTTP_NOT_MODIFIED : MHD_HTTP_OK, response);
  MHD_destroy_response(response);
  return result;
}
