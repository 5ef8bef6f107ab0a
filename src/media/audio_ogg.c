/* Ogg Vorbis headers checked before libsndfile reads them.
 *
 * Why: Debian 12's libsndfile 1.2.0 leaks libvorbis's vorbis_info (about
 * 6 KB: vorbis_info_init's codec setup, and whatever headerin had parsed)
 * on every error return of its Vorbis header reader (ogg_vorbis.c,
 * vorbis_read_header, which returns before codec_close is installed). A
 * client sending malformed Ogg Vorbis headers could grow the server by that
 * much per request, without bound.
 *
 * So vlm walks the same steps with the same libraries (libogg, libvorbis)
 * first, and refuses — with its own vorbis_info released — everything that
 * reader would refuse: no beginning-of-stream page, a first page holding
 * more than the identification packet, an identification packet libvorbis
 * rejects, the data (or the stream, at its end-of-stream page) ending
 * before the comment and setup packets, a hole in them, an unreadable page
 * of the stream. It is stricter in two places libsndfile passes: junk
 * before the first page, and comment or setup packets libvorbis rejects
 * (libsndfile ignores that result and sets up a decoder from them). What
 * passes reaches libsndfile's success path, whose close releases its state.
 * tests/test_audio.c holds a case per refusal; under LeakSanitizer each
 * leaked before this check. */
#include "media/audio_ogg.h"

#include <ogg/ogg.h>
#include <stdbool.h>
#include <string.h>
#include <vorbis/codec.h>

/* libsndfile reads the stream in 2 KB steps; the size only bounds how far
 * past the headers the check reads. */
#define OGG_FEED_BYTES 4096

typedef struct ogg_reader {
  const uint8_t *data;
  size_t size, fed;
  ogg_sync_state sync;
  ogg_stream_state stream;
  bool stream_ready;
} ogg_reader;

enum { PAGE_READY = 1, PAGE_END = 0, PAGE_JUNK = -1, PAGE_NO_MEMORY = -2 };

/* The next page of the data, skipping junk between pages when asked to,
 * as libsndfile does after the first page. */
static int next_page(ogg_reader *reader, ogg_page *page, bool skip_junk) {
  for (;;) {
    long found = ogg_sync_pageseek(&reader->sync, page);
    if (found > 0) return PAGE_READY;
    if (found < 0) {
      if (!skip_junk) return PAGE_JUNK;
      continue;
    }
    if (reader->fed == reader->size) return PAGE_END;
    size_t count = reader->size - reader->fed < OGG_FEED_BYTES ? reader->size - reader->fed : OGG_FEED_BYTES;
    char *buffer = ogg_sync_buffer(&reader->sync, (long)count);
    if (!buffer) return PAGE_NO_MEMORY;
    memcpy(buffer, reader->data + reader->fed, count);
    ogg_sync_wrote(&reader->sync, (long)count);
    reader->fed += count;
  }
}

/* The first page: it begins the stream and holds the identification
 * packet alone (ogg.c ogg_read_first_page, then vorbis_read_header). */
static const char *read_identification(ogg_reader *reader, vorbis_info *info, vorbis_comment *comment,
                                       bool *out_eos) {
  ogg_page page;
  ogg_packet packet;
  int got = next_page(reader, &page, false);
  if (got == PAGE_NO_MEMORY) return "out of memory reading its first page";
  if (got != PAGE_READY) return "no Ogg page at the start of the data";
  if (!ogg_page_bos(&page)) return "the first Ogg page does not begin a stream";
  if (ogg_stream_init(&reader->stream, ogg_page_serialno(&page)) != 0) return "out of memory for the Ogg stream";
  reader->stream_ready = true;
  if (ogg_stream_pagein(&reader->stream, &page) < 0) return "the first Ogg page cannot be read";
  if (ogg_stream_packetout(&reader->stream, &packet) != 1) return "the first Ogg page holds no complete packet";
  if (!packet.b_o_s) return "the first packet does not begin the stream";
  if (ogg_stream_packetpeek(&reader->stream, NULL) != 0)
    return "the first Ogg page holds more than the Vorbis identification header";
  if (vorbis_synthesis_headerin(info, comment, &packet) < 0) return "the Vorbis identification header is corrupt";
  *out_eos = ogg_page_eos(&page) != 0;
  return NULL;
}

/* The comment and setup packets, from the stream's next pages
 * (vorbis_read_header's loop over ogg_stream_next_page). */
static const char *read_comment_and_setup(ogg_reader *reader, vorbis_info *info, vorbis_comment *comment,
                                          bool eos) {
  static const char *const corrupt[2] = {"the Vorbis comment header is corrupt", "the Vorbis setup header is corrupt"};
  ogg_page page;
  ogg_packet packet;
  for (int read = 0; read < 2;) {
    int out = ogg_stream_packetout(&reader->stream, &packet);
    if (out < 0) return "a Vorbis header is missing data (a hole in the Ogg stream)";
    if (out == 1) {
      if (vorbis_synthesis_headerin(info, comment, &packet) < 0) return corrupt[read];
      read++;
      continue;
    }
    if (eos) return "the Ogg stream ends before its Vorbis comment and setup headers";
    int got;
    do got = next_page(reader, &page, true);
    while (got == PAGE_READY && ogg_page_serialno(&page) != reader->stream.serialno);
    if (got == PAGE_NO_MEMORY) return "out of memory reading its headers";
    if (got != PAGE_READY) return "the data ends before the Vorbis comment and setup headers";
    eos = ogg_page_eos(&page) != 0;
    if (ogg_stream_pagein(&reader->stream, &page) < 0) return "an Ogg page of the stream cannot be read";
  }
  return NULL;
}

vlm_status vlm_ogg_vorbis_check_headers(const uint8_t *data, size_t size) {
  ogg_reader reader = {.data = data, .size = size};
  ogg_sync_init(&reader.sync);
  vorbis_info info;
  vorbis_comment comment;
  vorbis_info_init(&info);
  vorbis_comment_init(&comment);
  bool eos = false;
  const char *problem = read_identification(&reader, &info, &comment, &eos);
  if (!problem) problem = read_comment_and_setup(&reader, &info, &comment, eos);
  vorbis_comment_clear(&comment);
  vorbis_info_clear(&info);
  if (reader.stream_ready) ogg_stream_clear(&reader.stream);
  ogg_sync_clear(&reader.sync);
  if (problem) return VLM_ERROR(DATA_LOSS, "cannot decode the Ogg Vorbis data: %s", problem);
  return VLM_OK;
}
