/* --backend for `vlm run` and `vlm serve`: the cpu backend (the default,
 * the engine opens it itself) or the xla backend, whose text decoder is
 * compiled on first use and cached (vlm compile does the same ahead of
 * time). The xla runtime embeds CPython and is only linked into builds
 * that found python-3.11-embed. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "models/model.h"
#include "models/modules.h"

#ifdef VLM_HAVE_XLA_RUNTIME
#include "vlm/xla.h"
#endif

const char *cli_backend_choices(void) {
#ifdef VLM_HAVE_XLA_RUNTIME
  return "cpu (default) or xla";
#else
  return "cpu (this build has no xla runtime: libpython3.11-dev at build time)";
#endif
}

vlm_status cli_open_text_decoder(const char *backend, vlm_model *model, int32_t slot_count, int64_t capacity,
                                 int64_t prefill_chunk, int thread_count, vlm_text_decoder **out_decoder) {
  *out_decoder = NULL;
  if (!backend || strcmp(backend, "cpu") == 0) return VLM_OK;
  if (strcmp(backend, "xla") != 0)
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT, "unknown backend '%s' (cpu or xla)", backend);
#ifdef VLM_HAVE_XLA_RUNTIME
  vlm_xla_decoder_options options = {.slot_count = slot_count, .capacity = capacity,
                                     .prefill_chunk = prefill_chunk, .compile_if_missing = true,
                                     .progress = stderr, .thread_count = thread_count > 0 ? thread_count : -1};
  return vlm_xla_open_text_decoder(model, &options, out_decoder);
#else
  (void)model, (void)slot_count, (void)capacity, (void)prefill_chunk, (void)thread_count;
  return vlm_status_make(VLM_STATUS_UNIMPLEMENTED,
                         "this vlm was built without the xla runtime (it needs Debian's libpython3.11-dev "
                         "at build time: scripts/install-dependencies.sh)");
#endif
}

vlm_status cli_open_backend(const char *backend, vlm_model *model, int32_t slot_count, int64_t capacity,
                            int64_t prefill_chunk, int thread_count, vlm_text_decoder **out_decoder,
                            vlm_media_encoder **out_encoder) {
  *out_decoder = NULL;
  *out_encoder = NULL;
  if (!backend || strcmp(backend, "cpu") == 0) return VLM_OK;
  vlm_status status = cli_open_text_decoder(backend, model, slot_count, capacity, prefill_chunk, thread_count,
                                            out_decoder);
  if (status) return status;
#ifdef VLM_HAVE_XLA_RUNTIME
  vlm_xla_decoder_options options = {.compile_if_missing = true, .progress = stderr,
                                     .thread_count = thread_count > 0 ? thread_count : -1};
  /* Images too, where the family has a vision path the emitter can lower;
   * otherwise the engine encodes them on the cpu backend and says so. */
  status = vlm_xla_open_image_encoder(model, &options, out_encoder);
  if (vlm_status_code_of(status) == VLM_STATUS_UNIMPLEMENTED) {
    vlm_status_free(status);
    return VLM_OK;
  }
  if (status) {
    vlm_text_decoder_release(*out_decoder);
    *out_decoder = NULL;
  }
  return status;
#else
  return VLM_OK; /* not reached: cli_open_text_decoder refused */
#endif
}

vlm_status cli_open_image_encoder(const char *backend, vlm_model *model, int thread_count,
                                  vlm_media_encoder **out_encoder) {
  *out_encoder = NULL;
  if (!backend || strcmp(backend, "cpu") == 0) return VLM_OK;
  if (strcmp(backend, "xla") != 0)
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT, "unknown backend '%s' (cpu or xla)", backend);
#ifdef VLM_HAVE_XLA_RUNTIME
  vlm_xla_decoder_options options = {.compile_if_missing = true, .progress = stderr,
                                     .thread_count = thread_count > 0 ? thread_count : -1};
  return vlm_xla_open_image_encoder(model, &options, out_encoder);
#else
  (void)model, (void)thread_count;
  return vlm_status_make(VLM_STATUS_UNIMPLEMENTED,
                         "this vlm was built without the xla runtime (it needs Debian's libpython3.11-dev "
                         "at build time: scripts/install-dependencies.sh)");
#endif
}

vlm_status cli_open_audio_encoder(const char *backend, vlm_model *model, int thread_count,
                                  vlm_media_encoder **out_encoder) {
  *out_encoder = NULL;
  if (!backend || strcmp(backend, "cpu") == 0 || !model->family || !model->family->audio) return VLM_OK;
  if (strcmp(backend, "xla") != 0)
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT, "unknown backend '%s' (cpu or xla)", backend);
#ifdef VLM_HAVE_XLA_RUNTIME
  vlm_xla_decoder_options options = {.compile_if_missing = true, .progress = stderr,
                                     .thread_count = thread_count > 0 ? thread_count : -1};
  return vlm_xla_open_audio_encoder(model, &options, out_encoder);
#else
  (void)model, (void)thread_count;
  return vlm_status_make(VLM_STATUS_UNIMPLEMENTED,
                         "this vlm was built without the xla runtime (it needs Debian's libpython3.11-dev "
                         "at build time: scripts/install-dependencies.sh)");
#endif
}
