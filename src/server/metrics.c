/* GET /metrics: the Prometheus text exposition format (version 0.0.4) of
 * the server's HTTP counters and the engine's vlm_engine_get_metrics.
 *
 * Load for a router: the Gateway API Inference Extension's endpoint picker
 * scores model servers on three gauges of its model-server protocol, whose
 * names it lets each server choose (docs/DEPLOY.md gives its flags):
 * TotalQueuedRequests is vlm_num_requests_waiting, TotalRunningRequests
 * vlm_num_requests_running and KVCacheUtilization (a fraction, 0 to 1, as
 * vLLM's vllm:kv_cache_usage_perc is) vlm_kv_cache_usage_ratio. The older
 * vlm_queue_depth and vlm_active_slots stay, with the same values. */
#include <stdio.h>
#include <string.h>

#include "server/server_internal.h"

static void append_header(vlm_string_builder *out, const char *name, const char *type,
                          const char *help) {
  vlm_sb_appendf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void append_counter(vlm_string_builder *out, const char *name, const char *help,
                           uint64_t value) {
  append_header(out, name, "counter", help);
  vlm_sb_appendf(out, "%s %llu\n", name, (unsigned long long)value);
}

static void append_gauge(vlm_string_builder *out, const char *name, const char *help, double value) {
  append_header(out, name, "gauge", help);
  vlm_sb_appendf(out, "%s %.17g\n", name, value);
}

static void append_seconds_counter(vlm_string_builder *out, const char *name, const char *help,
                                   double value) {
  append_header(out, name, "counter", help);
  vlm_sb_appendf(out, "%s %.9f\n", name, value);
}

/* The engine's buckets are already cumulative, as Prometheus wants them. */
static void append_histogram(vlm_string_builder *out, const char *name, const char *help,
                             const vlm_engine_histogram *histogram) {
  append_header(out, name, "histogram", help);
  for (int i = 0; i < VLM_ENGINE_HISTOGRAM_BUCKETS; i++)
    vlm_sb_appendf(out, "%s_bucket{le=\"%g\"} %llu\n", name, histogram->bounds[i],
                   (unsigned long long)histogram->bucket_counts[i]);
  vlm_sb_appendf(out, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.9f\n%s_count %llu\n", name,
                 (unsigned long long)histogram->count, name, histogram->sum, name,
                 (unsigned long long)histogram->count);
}

static void append_http_responses(vlm_string_builder *out, vlm_server *server) {
  append_header(out, "vlm_http_responses_total", "counter",
                "HTTP responses sent, by route and status code.");
  for (int route = 0; route < ROUTE_COUNT; route++)
    for (int kind = 0; kind < SERVER_STATUS_KINDS; kind++) {
      uint64_t count = atomic_load(&server->responses[route][kind]);
      if (!count) continue;
      char status[16] = "other";
      if (server_counted_statuses[kind]) snprintf(status, sizeof(status), "%d", server_counted_statuses[kind]);
      vlm_sb_appendf(out, "vlm_http_responses_total{route=\"%s\",status=\"%s\"} %llu\n",
                     server_route_name((server_route)route), status, (unsigned long long)count);
    }
}

/* The connection guard's deadlines (connection_guard.h). */
static void append_connections(vlm_string_builder *out, vlm_server *server) {
  connection_guard_counts counts;
  connection_guard_get_counts(server->guard, &counts);
  append_gauge(out, "vlm_http_connections_open", "HTTP connections open now.", (double)counts.open);
  append_header(out, "vlm_http_connections_closed_total", "counter",
                "Connections the server closed because a request did not arrive in time, by "
                "deadline (header: --header-timeout from accept; keep_alive: --timeout after the "
                "previous response; body: --body-timeout).");
  vlm_sb_appendf(out,
                 "vlm_http_connections_closed_total{deadline=\"header\"} %llu\n"
                 "vlm_http_connections_closed_total{deadline=\"keep_alive\"} %llu\n"
                 "vlm_http_connections_closed_total{deadline=\"body\"} %llu\n",
                 (unsigned long long)counts.header_deadline, (unsigned long long)counts.keep_alive_deadline,
                 (unsigned long long)counts.body_deadline);
  append_header(out, "vlm_http_connections_refused_total", "counter",
                "Connections closed at accept, by reason (per_client: the address held "
                "--max-connections-per-client; reserve: the last slots are kept for addresses "
                "holding few).");
  vlm_sb_appendf(out,
                 "vlm_http_connections_refused_total{reason=\"per_client\"} %llu\n"
                 "vlm_http_connections_refused_total{reason=\"reserve\"} %llu\n",
                 (unsigned long long)counts.refused_per_client, (unsigned long long)counts.refused_reserve);
  append_gauge(out, "vlm_http_connections_idle", "Idle keep-alive connections now (--max-idle-connections).",
               (double)counts.idle);
  append_header(out, "vlm_http_connections_idle_closed_total", "counter",
                "Idle connections closed to make room, by reason (cap: more were idle than "
                "--max-idle-connections; accept: a new connection found only the reserve left).");
  vlm_sb_appendf(out,
                 "vlm_http_connections_idle_closed_total{reason=\"cap\"} %llu\n"
                 "vlm_http_connections_idle_closed_total{reason=\"accept\"} %llu\n",
                 (unsigned long long)counts.idle_closed_cap, (unsigned long long)counts.idle_closed_accept);
  append_gauge(out, "vlm_http_request_body_bytes",
               "Request body bytes reserved now by requests being received or answered (--max-body-memory-mb).",
               (double)counts.body_bytes);
  append_header(out, "vlm_http_request_body_refused_total", "counter",
                "Requests refused with 503 server_busy because their body did not fit, by limit "
                "(total: --max-body-memory-mb; per_client: --max-body-memory-per-client-mb).");
  vlm_sb_appendf(out,
                 "vlm_http_request_body_refused_total{limit=\"total\"} %llu\n"
                 "vlm_http_request_body_refused_total{limit=\"per_client\"} %llu\n",
                 (unsigned long long)counts.body_refused_total, (unsigned long long)counts.body_refused_client);
}

static void append_requests(vlm_string_builder *out, const vlm_engine_metrics *metrics) {
  append_header(out, "vlm_requests_finished_total", "counter",
                "Completion requests the engine finished, by outcome (stop and length are "
                "finish reasons; cancelled includes client disconnects).");
  vlm_sb_appendf(out,
                 "vlm_requests_finished_total{reason=\"stop\"} %llu\n"
                 "vlm_requests_finished_total{reason=\"length\"} %llu\n"
                 "vlm_requests_finished_total{reason=\"cancelled\"} %llu\n"
                 "vlm_requests_finished_total{reason=\"failed\"} %llu\n",
                 (unsigned long long)metrics->requests_finished_stop,
                 (unsigned long long)metrics->requests_finished_length,
                 (unsigned long long)metrics->requests_cancelled,
                 (unsigned long long)metrics->requests_failed);
  append_counter(out, "vlm_requests_cancelled_total",
                 "Requests cancelled (client disconnects and shutdown).",
                 metrics->requests_cancelled);
  append_counter(out, "vlm_requests_rejected_total",
                 "Requests the engine refused at submission (capacity, queue full, shutting down).",
                 metrics->requests_rejected);
}

/* What a router balances on (see the top of the file). */
static void append_load(vlm_string_builder *out, const vlm_engine_metrics *metrics) {
  append_gauge(out, "vlm_num_requests_waiting",
               "Requests admitted and waiting for a slot (the queue a router and an autoscaler watch).",
               (double)metrics->queue_depth);
  append_gauge(out, "vlm_num_requests_running", "Requests in a slot: prefilling or decoding.",
               (double)metrics->active_slots);
}

/* The prefix and encoder caches (--prefix-cache-mb, --encoder-cache-mb;
 * zeros when off). As vLLM's vllm:prefix_cache_queries/hits, queries and
 * hits count prompt tokens (hits: positions copied from the cache instead
 * of prefilled); vlm_cache_config_info gives the Gateway API Inference
 * Extension's prefix-aware scorer the block size and count under the label
 * names its endpoint picker reads from vllm:cache_config_info (block_size,
 * num_gpu_blocks: the blocks the prefix cache's budget holds, which is what
 * the picker sizes its per-server prefix index by; "gpu" is vLLM's word). */
static void append_prefix_cache(vlm_string_builder *out, const vlm_engine_metrics *metrics) {
  append_counter(out, "vlm_prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache.",
                 metrics->prefix_cache_query_tokens);
  append_counter(out, "vlm_prefix_cache_hits_total",
                 "Prompt tokens whose KV came from the prefix cache instead of a prefill.",
                 metrics->prefix_cache_cached_tokens);
  append_header(out, "vlm_prefix_cache_requests_total", "counter",
                "Requests looked up in the prefix cache, by whether they reused at least one block.");
  vlm_sb_appendf(out, "vlm_prefix_cache_requests_total{result=\"hit\"} %llu\n"
                 "vlm_prefix_cache_requests_total{result=\"miss\"} %llu\n",
                 (unsigned long long)metrics->prefix_cache_hits,
                 (unsigned long long)(metrics->prefix_cache_queries - metrics->prefix_cache_hits));
  append_counter(out, "vlm_prefix_cache_evictions_total", "Prefix cache blocks evicted to stay within the budget.",
                 metrics->prefix_cache_evictions);
  append_gauge(out, "vlm_prefix_cache_blocks", "Blocks of KV in the prefix cache.",
               (double)metrics->prefix_cache_blocks);
  append_gauge(out, "vlm_prefix_cache_bytes", "Bytes the prefix cache holds (never above its budget).",
               (double)metrics->prefix_cache_bytes_used);
  append_gauge(out, "vlm_prefix_cache_budget_bytes", "The prefix cache's budget (--prefix-cache-mb; 0: off).",
               (double)metrics->prefix_cache_budget_bytes);
  append_gauge(out, "vlm_prefix_cache_usage_ratio", "Prefix cache bytes held over its budget.",
               metrics->prefix_cache_budget_bytes
                   ? (double)metrics->prefix_cache_bytes_used / (double)metrics->prefix_cache_budget_bytes : 0.0);
  append_header(out, "vlm_cache_config_info", "gauge",
                "The prefix cache's block size (positions) and the blocks its budget holds (labels; 1).");
  vlm_sb_appendf(out, "vlm_cache_config_info{block_size=\"%lld\",num_gpu_blocks=\"%lld\"} 1\n",
                 (long long)metrics->prefix_cache_block_positions, (long long)metrics->prefix_cache_block_capacity);
}

static void append_encoder_cache(vlm_string_builder *out, const vlm_engine_metrics *metrics) {
  append_counter(out, "vlm_media_items_encoded_total",
                 "Images and audio clips run through an encoder (not served by a cache).",
                 metrics->media_items_encoded);
  append_counter(out, "vlm_encoder_cache_queries_total", "Media items looked up in the encoder cache.",
                 metrics->encoder_cache_hits + metrics->encoder_cache_misses);
  append_counter(out, "vlm_encoder_cache_hits_total", "Media items whose features came from the encoder cache.",
                 metrics->encoder_cache_hits);
  append_counter(out, "vlm_encoder_cache_misses_total", "Media items looked up in the encoder cache and not found.",
                 metrics->encoder_cache_misses);
  append_counter(out, "vlm_encoder_cache_evictions_total", "Encoder cache entries evicted to stay within the budget.",
                 metrics->encoder_cache_evictions);
  append_gauge(out, "vlm_encoder_cache_entries", "Media items in the encoder cache.",
               (double)metrics->encoder_cache_entries);
  append_gauge(out, "vlm_encoder_cache_bytes", "Bytes the encoder cache holds (never above its budget).",
               (double)metrics->encoder_cache_bytes_used);
  append_gauge(out, "vlm_encoder_cache_budget_bytes", "The encoder cache's budget (--encoder-cache-mb; 0: off).",
               (double)metrics->encoder_cache_budget_bytes);
  append_gauge(out, "vlm_encoder_cache_usage_ratio", "Encoder cache bytes held over its budget.",
               metrics->encoder_cache_budget_bytes
                   ? (double)metrics->encoder_cache_bytes_used / (double)metrics->encoder_cache_budget_bytes : 0.0);
}

char *metrics_render(vlm_server *server) {
  vlm_engine_metrics metrics;
  memset(&metrics, 0, sizeof(metrics));
  /* While the model loads there is no engine: its numbers are zero. */
  bool ready = server_is_ready(server);
  if (ready) vlm_engine_get_metrics(server->engine, &metrics);
  vlm_string_builder out = {0};
  append_gauge(&out, "vlm_model_loaded",
               "1 once the model is loaded (on xla: compiled) and requests are taken, else 0.",
               ready ? 1.0 : 0.0);
  append_load(&out, &metrics);
  append_gauge(&out, "vlm_media_memory_bytes",
               "Bytes of the media memory budget in use: decodes in progress and the tensors of images and clips "
               "not yet released (never above the budget but by one item's outputs).",
               ready ? (double)vlm_engine_media_bytes_in_use(server->engine) : 0.0);
  append_gauge(&out, "vlm_media_memory_budget_bytes", "The media memory budget (--media-memory-mb).",
               ready ? (double)server->info.media_memory_budget : 0.0);
  append_http_responses(&out, server);
  append_requests(&out, &metrics);
  append_counter(&out, "vlm_client_disconnects_total",
                 "Requests cancelled because the client went away before the answer was sent.",
                 atomic_load(&server->client_disconnects));
  append_gauge(&out, "vlm_requests_in_flight", "Completion requests being answered.",
               (double)atomic_load(&server->active_requests));
  append_counter(&out, "vlm_requests_timed_out_total",
                 "Completion requests cancelled by --request-timeout.",
                 atomic_load(&server->requests_timed_out));
  append_connections(&out, server);
  append_gauge(&out, "vlm_queue_depth", "Requests waiting for a slot.", (double)metrics.queue_depth);
  append_gauge(&out, "vlm_active_slots", "Slots running a request.", (double)metrics.active_slots);
  append_gauge(&out, "vlm_slots", "Slots (--parallel).", (double)metrics.slot_count);
  append_counter(&out, "vlm_prompt_tokens_total",
                 "Prompt positions of the requests admitted, image placeholders included (those taken from "
                 "the prefix cache too).", metrics.prompt_tokens_total);
  append_counter(&out, "vlm_prefill_tokens_total",
                 "Prompt positions computed by prefill (not taken from the prefix cache, and once for all n "
                 "choices of a request).", metrics.prefill_tokens_total);
  append_counter(&out, "vlm_completion_tokens_total", "Tokens generated.",
                 metrics.completion_tokens_total);
  append_counter(&out, "vlm_images_total", "Images received in requests.", metrics.image_count_total);
  append_seconds_counter(&out, "vlm_preprocess_seconds_total",
                         "Time spent on chat templates, tokenization and image preprocessing.",
                         metrics.preprocess_seconds_total);
  append_seconds_counter(&out, "vlm_encode_seconds_total",
                         "Time spent in vision encoders, projectors and embedding merges.",
                         metrics.encode_seconds_total);
  append_gauge(&out, "vlm_kv_cache_positions_used", "KV cache positions in use over all slots.",
               (double)metrics.kv_positions_used);
  append_gauge(&out, "vlm_kv_cache_positions_capacity", "KV cache positions over all slots.",
               (double)metrics.kv_positions_capacity);
  append_gauge(&out, "vlm_kv_cache_usage_ratio", "Fraction of KV cache positions in use.",
               metrics.kv_positions_capacity
                   ? (double)metrics.kv_positions_used / (double)metrics.kv_positions_capacity : 0.0);
  append_gauge(&out, "vlm_kv_cache_bytes", "Bytes allocated for the KV cache.", (double)metrics.kv_bytes);
  append_prefix_cache(&out, &metrics);
  append_encoder_cache(&out, &metrics);
  append_histogram(&out, "vlm_time_to_first_token_seconds",
                   "Time from submission to the first sampled token.", &metrics.time_to_first_token);
  append_histogram(&out, "vlm_inter_token_latency_seconds",
                   "Time between two tokens of one request.", &metrics.inter_token_latency);
  return vlm_sb_finish(&out);
}
