/* Getting the bytes of a media URL from a request, with the server's
 * policy applied:
 *   data:<mime>;base64,<payload>  always, when <mime> is an image type the
 *                                 decoders read (image/png, image/jpeg,
 *                                 image/webp, image/gif); the size limit is
 *                                 checked on the encoded length before
 *                                 decoding;
 *   file:///abs/path              only when an allowed directory is set and
 *                                 the real path (symlinks resolved) lies
 *                                 under it;
 *   http:// and https://          only when remote media is allowed, with a
 *                                 size limit, a time limit, and no connection
 *                                 to loopback, private, link-local or other
 *                                 non-public addresses (checked on the
 *                                 address actually connected to, so DNS
 *                                 tricks and redirects cannot reach them).
 * Anything else is refused. Audio parts' URLs (audio_url) go through the
 * same policy, their data: URLs with an audio type instead (audio/wav,
 * audio/x-wav, audio/wave, audio/vnd.wave, audio/flac, audio/x-flac,
 * audio/ogg, audio/vorbis, audio/mpeg, audio/mp3); input_audio's bare
 * base64 is decoded under the same size limit. Errors are OpenAI errors
 * (400, param = the part's field) so the handler can return them as they
 * are. */
#ifndef VLM_SERVER_MEDIA_SOURCE_H
#define VLM_SERVER_MEDIA_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/openai_request.h"

struct sockaddr;

typedef struct media_policy {
  const char *allowed_media_dir;  /* NULL: file:// refused */
  bool allow_remote_media;        /* http(s) */
  size_t max_bytes;               /* per item, after decoding; 0: 20 MiB */
  double remote_timeout_seconds;  /* 0: 10 s, for the whole fetch including redirects */
  /* Skips the public-address check for http(s). Only for tests and for
   * deployments whose media lives on a trusted private network; off by
   * default and not meant to be exposed casually. */
  bool allow_private_addresses;
} media_policy;

/* Decodes base64 (RFC 4648, standard alphabet, padding optional but
 * correct when present, whitespace refused, non-zero padding bits in the
 * last group refused so each byte string has one encoding). Returns false
 * on bad input or when the decoded size would exceed max_bytes (checked
 * from the length alone, before decoding). *out is malloc'ed, also for an
 * empty result. */
bool base64_decode(const char *text, size_t length, size_t max_bytes, uint8_t **out,
                   size_t *out_length);

/* True when a remote fetch may connect to `address` (`length` bytes): not
 * loopback, unspecified, RFC 1918 private, link-local, CGNAT, multicast,
 * reserved or documentation IPv4; not ::1, ::, unique-local, link-local,
 * site-local, multicast, Teredo or documentation IPv6; IPv4-mapped, NAT64
 * and 6to4 IPv6 are judged by the IPv4 address they carry. Exposed for
 * tests. */
bool media_source_address_is_public(const struct sockaddr *address, size_t length);

/* Fetches the bytes `url` names. `param` names the field in errors.
 * `cancel` (NULL or an atomic_bool) aborts a remote fetch. Empty media is
 * refused. Errors: 400 invalid_request_error for anything about the URL
 * or its content (refused scheme or address, too large, timed out, HTTP
 * status not 2xx, malformed data: URL); 499 with code "cancelled" when
 * `cancel` was set; 500 server_error for out of memory. *out_bytes is
 * malloc'ed (free it). */
bool media_source_fetch(const media_policy *policy, const char *url, const char *param,
                        const void *cancel, uint8_t **out_bytes, size_t *out_length,
                        openai_error *error);
/* The same for an audio part's URL (audio types in data: URLs). */
bool media_source_fetch_audio(const media_policy *policy, const char *url, const char *param,
                              const void *cancel, uint8_t **out_bytes, size_t *out_length,
                              openai_error *error);
/* input_audio.data: base64 (as base64_decode) under max_bytes, checked
 * from the length before decoding; empty data is refused. */
bool media_source_decode_base64(const media_policy *policy, const char *text, const char *param,
                                uint8_t **out_bytes, size_t *out_length, openai_error *error);

#endif
