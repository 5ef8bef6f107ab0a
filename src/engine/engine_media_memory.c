/* The media memory budget: bytes that image and audio decoding and
 * preprocessing hold at once across all callers (vlm_engine_load_image_*,
 * vlm_engine_load_audio_*), reserved from each item's header before it is
 * decoded; once its features are made the reservation shrinks to what the
 * item's tensors hold, which stays charged until the item is released
 * (the request done, refused or cancelled: vlm_media_item_release). A caller over the
 * budget waits (polling its cancel flag) up to media_wait_seconds, then
 * gets RESOURCE_EXHAUSTED, a "busy, retry later" answer. An item larger
 * than the whole budget waits until it is the only one, so nothing the
 * decode limits admit is refused for size alone. */
#include <time.h>

#include "core/status.h"
#include "engine/engine_internal.h"

static bool cancelled(const void *cancel) {
  return cancel && atomic_load_explicit((const atomic_bool *)cancel, memory_order_relaxed);
}

/* Waits until `bytes` fit the budget (or, for an item over the whole
 * budget, until nothing else is in flight), then reserves them. */
vlm_status engine_reserve_media_memory(vlm_engine *engine, uint64_t bytes, const void *cancel, const char *name,
                                        uint64_t *out_reserved) {
  *out_reserved = 0;
  if (bytes > engine->media_memory_budget) bytes = engine->media_memory_budget;
  double deadline = engine_now_seconds() + engine->media_wait_seconds;
  vlm_status status = VLM_OK;
  pthread_mutex_lock(&engine->media_mutex);
  while (engine->media_bytes_in_flight + bytes > engine->media_memory_budget) {
    if (cancelled(cancel)) {
      status = VLM_ERROR(CANCELLED, "%s: cancelled while waiting to decode", name);
      break;
    }
    if (engine_now_seconds() >= deadline) {
      status = VLM_ERROR(RESOURCE_EXHAUSTED,
                         "%s: the server is busy decoding other media (%llu of its %llu bytes for images and "
                         "audio in use for %.0f s); retry later", name,
                         (unsigned long long)engine->media_bytes_in_flight,
                         (unsigned long long)engine->media_memory_budget, engine->media_wait_seconds);
      break;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 20 * 1000 * 1000;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&engine->media_released, &engine->media_mutex, &until);
  }
  if (!status) {
    engine->media_bytes_in_flight += bytes;
    engine->media_bytes_peak = engine->media_bytes_in_flight > engine->media_bytes_peak
                                   ? engine->media_bytes_in_flight : engine->media_bytes_peak;
    *out_reserved = bytes;
  }
  pthread_mutex_unlock(&engine->media_mutex);
  return status;
}

/* From a request's reservation (vlm_engine_reserve_media) when there is
 * one: what it lacks is taken at once, without waiting, since a caller
 * holding a reservation must never wait on others while it holds it (two
 * requests each holding half the budget would wait for each other); the
 * reservation was sized from the same headers, so that is a liar's excess. */
vlm_status engine_take_media_memory(vlm_engine *engine, vlm_media_reservation *from, uint64_t bytes,
                                    const void *cancel, const char *name, uint64_t *out_reserved) {
  if (!from) return engine_reserve_media_memory(engine, bytes, cancel, name, out_reserved);
  if (bytes > engine->media_memory_budget) bytes = engine->media_memory_budget;
  uint64_t taken = bytes < from->bytes ? bytes : from->bytes;
  from->bytes -= taken;
  if (taken < bytes) {
    pthread_mutex_lock(&engine->media_mutex);
    engine->media_bytes_in_flight += bytes - taken;
    if (engine->media_bytes_in_flight > engine->media_bytes_peak) engine->media_bytes_peak = engine->media_bytes_in_flight;
    pthread_mutex_unlock(&engine->media_mutex);
  }
  *out_reserved = bytes;
  return VLM_OK;
}

vlm_status vlm_engine_reserve_media(vlm_engine *engine, uint64_t bytes, const void *cancel, const char *name,
                                    vlm_media_reservation *out) {
  out->bytes = 0;
  return engine_reserve_media_memory(engine, bytes, cancel, name ? name : "media", &out->bytes);
}

void vlm_engine_release_media(vlm_engine *engine, vlm_media_reservation *reservation) {
  if (!reservation) return;
  engine_release_media_memory(engine, reservation->bytes);
  reservation->bytes = 0;
}

uint64_t vlm_engine_media_bytes_in_use(vlm_engine *engine) {
  pthread_mutex_lock(&engine->media_mutex);
  uint64_t bytes = engine->media_bytes_in_flight;
  pthread_mutex_unlock(&engine->media_mutex);
  return bytes;
}

void engine_release_media_memory(vlm_engine *engine, uint64_t reserved) {
  if (!reserved) return;
  pthread_mutex_lock(&engine->media_mutex);
  engine->media_bytes_in_flight -= reserved;
  pthread_cond_broadcast(&engine->media_released);
  pthread_mutex_unlock(&engine->media_mutex);
}

static void release_charge(void *owner, uint64_t bytes) { engine_release_media_memory(owner, bytes); }

/* Turns the decode's reservation into the item's charge: what its tensors
 * hold (taken even where the reservation fell short: they are allocated
 * already; the budget waits for them to go). */
void engine_charge_media_item(vlm_engine *engine, vlm_media_item *item, uint64_t reserved) {
  uint64_t bytes = vlm_media_item_bytes(item);
  pthread_mutex_lock(&engine->media_mutex);
  engine->media_bytes_in_flight = engine->media_bytes_in_flight - reserved + bytes;
  if (engine->media_bytes_in_flight > engine->media_bytes_peak) engine->media_bytes_peak = engine->media_bytes_in_flight;
  pthread_cond_broadcast(&engine->media_released);
  pthread_mutex_unlock(&engine->media_mutex);
  item->charge = (vlm_media_charge){release_charge, engine, bytes};
}

uint64_t engine_media_bytes_peak(vlm_engine *engine) {
  pthread_mutex_lock(&engine->media_mutex);
  uint64_t peak = engine->media_bytes_peak;
  pthread_mutex_unlock(&engine->media_mutex);
  return peak;
}

