/* Per-layer KV layouts (models/kv_layout.h) and the cpu cache that holds
 * them (backends/cpu/kv_cache.h): K and V widths of each layer's own,
 * layers that read an earlier layer's KV and store nothing, latent layers
 * (keys only), with the bytes per token, the prefix cache's packed
 * read/write and clearing following the layout; and every layout a cache
 * cannot hold refused naming the layer. */
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/kv_cache.h"
#include "models/kv_layout.h"
#include "test.h"

static void standard_layout_is_the_uniform_one(void) {
  vlm_kv_layout layout;
  CHECK_OK(vlm_kv_layout_standard(3, 2, 16, &layout));
  CHECK_INT_EQ(layout.layer_count, 3);
  int64_t width = 0;
  CHECK(vlm_kv_layout_is_uniform(&layout, &width));
  CHECK_INT_EQ(width, 32);
  CHECK_INT_EQ(vlm_kv_layout_token_values(&layout), 3 * 2 * 32);
  CHECK_INT_EQ(vlm_kv_layout_storing_layers(&layout), 3);
  CHECK_OK(vlm_kv_layout_check(&layout));
  CHECK_ERROR(vlm_kv_layout_standard(0, 2, 16, &layout), VLM_STATUS_INVALID_ARGUMENT, "0 layers");
  CHECK_ERROR(vlm_kv_layout_standard(VLM_KV_MAX_LAYERS + 1, 2, 16, &layout), VLM_STATUS_INVALID_ARGUMENT, "layers");
  CHECK_ERROR(vlm_kv_layout_standard(2, 0, 16, &layout), VLM_STATUS_INVALID_ARGUMENT, "KV heads");
  /* The standard cache (no layout given) is the same as the layout's. */
  vlm_kv_cache *plain = NULL, *laid_out = NULL;
  CHECK_OK(vlm_kv_cache_create(&(vlm_kv_cache_shape){2, 3, 2, 16, 8, NULL}, NULL, &plain));
  CHECK_OK(vlm_kv_layout_standard(3, 2, 16, &layout));
  CHECK_OK(vlm_kv_cache_create(&(vlm_kv_cache_shape){2, 3, 2, 16, 8, &layout}, NULL, &laid_out));
  if (plain && laid_out) {
    CHECK(vlm_kv_cache_bytes(plain) == vlm_kv_cache_bytes(laid_out));
    CHECK(vlm_kv_cache_bytes(plain) == 2ull * 3 * 2 * 8 * 32 * sizeof(float));
    CHECK(vlm_kv_cache_position_bytes(plain) == 3ull * 2 * 32 * sizeof(float));
    CHECK(vlm_kv_cache_values(plain, 1, 2) - vlm_kv_cache_keys(plain, 1, 2) == 8 * 32);
  }
  vlm_kv_cache_release(plain);
  vlm_kv_cache_release(laid_out);
}

/* Layer 0: K 64 / V 64; layer 1: K 32 / V 48; layer 2 reads layer 0;
 * layer 3: a latent of 40 (MLA's kv_lora_rank + qk_rope_head_dim). */
static void mixed(vlm_kv_layout *layout) {
  memset(layout, 0, sizeof(*layout));
  layout->layer_count = 4;
  layout->layers[0] = (vlm_kv_layer){64, 64, -1, false};
  layout->layers[1] = (vlm_kv_layer){32, 48, -1, false};
  layout->layers[2] = (vlm_kv_layer){64, 64, 0, false};
  layout->layers[3] = (vlm_kv_layer){40, 0, -1, true};
}

static void a_cache_follows_a_per_layer_layout(void) {
  static vlm_kv_layout layout;
  mixed(&layout);
  CHECK_OK(vlm_kv_layout_check(&layout));
  CHECK(!vlm_kv_layout_is_uniform(&layout, NULL));
  CHECK_INT_EQ(vlm_kv_layout_token_values(&layout), 128 + 80 + 40);
  CHECK_INT_EQ(vlm_kv_layout_storing_layers(&layout), 3);
  enum { SLOTS = 2, CAPACITY = 10, TOKEN = 128 + 80 + 40 };
  vlm_kv_cache *cache = NULL;
  CHECK_OK(vlm_kv_cache_create(&(vlm_kv_cache_shape){SLOTS, 4, 0, 0, CAPACITY, &layout}, NULL, &cache));
  if (!cache) return;
  CHECK(vlm_kv_cache_position_bytes(cache) == TOKEN * sizeof(float));
  CHECK(vlm_kv_cache_bytes(cache) == (uint64_t)SLOTS * CAPACITY * TOKEN * sizeof(float));
  CHECK(vlm_kv_cache_layout(cache)->layers[1].value_width == 48);
  for (int32_t slot = 0; slot < SLOTS; slot++) {
    CHECK(vlm_kv_cache_keys(cache, slot, 2) == vlm_kv_cache_keys(cache, slot, 0));
    CHECK(vlm_kv_cache_values(cache, slot, 2) == vlm_kv_cache_values(cache, slot, 0));
    CHECK(vlm_kv_cache_values(cache, slot, 3) == NULL);
    CHECK(vlm_kv_cache_keys(cache, slot, 3) != NULL);
    /* Arrays of one slot do not overlap: each layer's [capacity, width]. */
    CHECK(vlm_kv_cache_values(cache, slot, 0) - vlm_kv_cache_keys(cache, slot, 0) == CAPACITY * 64);
    CHECK(vlm_kv_cache_keys(cache, slot, 1) - vlm_kv_cache_values(cache, slot, 0) == CAPACITY * 64);
    CHECK(vlm_kv_cache_values(cache, slot, 1) - vlm_kv_cache_keys(cache, slot, 1) == CAPACITY * 32);
    CHECK(vlm_kv_cache_keys(cache, slot, 3) - vlm_kv_cache_values(cache, slot, 1) == CAPACITY * 48);
  }
  /* The prefix cache's packed form round-trips, per storing layer keys
   * then values, and lands where the layer's arrays are. */
  enum { COUNT = 3 };
  float *packed = malloc(COUNT * TOKEN * sizeof(float)), *back = malloc(COUNT * TOKEN * sizeof(float));
  for (int i = 0; i < COUNT * TOKEN; i++) packed[i] = (float)i;
  CHECK_OK(vlm_kv_cache_write(cache, 1, 0, COUNT, packed));
  CHECK_INT_EQ(vlm_kv_cache_length(cache, 1), COUNT);
  CHECK_OK(vlm_kv_cache_read(cache, 1, 0, COUNT, back));
  CHECK(memcmp(packed, back, COUNT * TOKEN * sizeof(float)) == 0);
  CHECK(vlm_kv_cache_keys(cache, 1, 0)[0] == 0.0f);
  CHECK(vlm_kv_cache_values(cache, 1, 0)[0] == (float)(COUNT * 64));
  CHECK(vlm_kv_cache_keys(cache, 1, 1)[0] == (float)(COUNT * 128));
  CHECK(vlm_kv_cache_values(cache, 1, 1)[0] == (float)(COUNT * (128 + 32)));
  CHECK(vlm_kv_cache_keys(cache, 1, 3)[COUNT * 40 - 1] == (float)(COUNT * TOKEN - 1));
  CHECK_OK(vlm_kv_cache_read(cache, 1, 1, 2, back));
  CHECK(back[0] == (float)64); /* position 1 of layer 0's keys */
  CHECK_ERROR(vlm_kv_cache_read(cache, 1, 2, 2, back), VLM_STATUS_OUT_OF_RANGE, "outside [0, 3)");
  vlm_kv_cache_clear(cache, 1);
  CHECK_INT_EQ(vlm_kv_cache_length(cache, 1), 0);
  CHECK(vlm_kv_cache_keys(cache, 1, 3)[COUNT * 40 - 1] == 0.0f);
  CHECK(vlm_kv_cache_values(cache, 1, 1)[COUNT * 48 - 1] == 0.0f);
  free(packed);
  free(back);
  vlm_kv_cache_release(cache);
}

/* vlm compare's kv stage: packed KV into Transformers' cache order, per
 * storing layer K then V [heads, position, width / heads]; a latent layer
 * one head; a reading layer nothing. */
static void packed_kv_reorders_into_the_golden_order(void) {
  static vlm_kv_layout layout;
  memset(&layout, 0, sizeof(layout));
  layout.layer_count = 3;
  layout.layers[0] = (vlm_kv_layer){4, 6, -1, false}; /* 2 heads: K dim 2, V dim 3 */
  layout.layers[1] = (vlm_kv_layer){4, 6, 0, false};
  layout.layers[2] = (vlm_kv_layer){3, 0, -1, true};
  CHECK_OK(vlm_kv_layout_check(&layout));
  enum { LENGTH = 3 };
  float packed[LENGTH * (4 + 6 + 3)];
  for (int i = 0; i < LENGTH * 13; i++) packed[i] = (float)i;
  const int64_t positions[] = {2, 0};
  double out[2 * 13];
  CHECK_INT_EQ(vlm_kv_layout_to_golden(&layout, 2, packed, LENGTH, positions, 2, out), 2 * 13);
  /* Layer 0 K, head 0: position 2's [8, 9], then position 0's [0, 1]. */
  const double keys[8] = {8, 9, 0, 1, 10, 11, 2, 3};
  for (int i = 0; i < 8; i++) CHECK(out[i] == keys[i]);
  /* Layer 0 V starts at 12; head 1 of position 2 is 12 + 2 * 6 + 3. */
  CHECK(out[8] == 12 + 12 + 0);
  CHECK(out[8 + 3 + 3] == 12 + 12 + 3);
  /* Layer 2's latent starts at 30: position 2 then 0, one head of 3. */
  const double latent[6] = {36, 37, 38, 30, 31, 32};
  for (int i = 0; i < 6; i++) CHECK(out[20 + i] == latent[i]);
}

static void layouts_a_cache_cannot_hold_are_refused(void) {
  static vlm_kv_layout layout;
  mixed(&layout);
  layout.layers[2].source = 2;
  CHECK_ERROR(vlm_kv_layout_check(&layout), VLM_STATUS_INVALID_ARGUMENT, "layer 2 reads layer 2's KV");
  mixed(&layout);
  layout.layers[1].source = 2;
  CHECK_ERROR(vlm_kv_layout_check(&layout), VLM_STATUS_INVALID_ARGUMENT, "not an earlier layer");
  mixed(&layout);
  layout.layer_count = 5;
  layout.layers[4] = (vlm_kv_layer){64, 64, 2, false};
  CHECK_ERROR(vlm_kv_layout_check(&layout), VLM_STATUS_INVALID_ARGUMENT, "stores none of its own");
  mixed(&layout);
  layout.layers[2].value_width = 32;
  CHECK_ERROR(vlm_kv_layout_check(&layout), VLM_STATUS_INVALID_ARGUMENT, "other widths");
  mixed(&layout);
  layout.layers[3].value_width = 8;
  CHECK_ERROR(vlm_kv_layout_check(&layout), VLM_STATUS_INVALID_ARGUMENT, "layer 3 has K width 40 and V width 8");
  mixed(&layout);
  layout.layers[1].value_width = 0;
  CHECK_ERROR(vlm_kv_layout_check(&layout), VLM_STATUS_INVALID_ARGUMENT, "layer 1");
  mixed(&layout);
  layout.layers[0].key_width = 0;
  CHECK_ERROR(vlm_kv_layout_check(&layout), VLM_STATUS_INVALID_ARGUMENT, "layer 0");
  /* The cache checks the layout it is given, and its layer count. */
  mixed(&layout);
  layout.layers[2].source = 3;
  vlm_kv_cache *cache = NULL;
  CHECK_ERROR(vlm_kv_cache_create(&(vlm_kv_cache_shape){1, 4, 0, 0, 4, &layout}, NULL, &cache),
              VLM_STATUS_INVALID_ARGUMENT, "layer 2");
  mixed(&layout);
  CHECK_ERROR(vlm_kv_cache_create(&(vlm_kv_cache_shape){1, 3, 0, 0, 4, &layout}, NULL, &cache),
              VLM_STATUS_INVALID_ARGUMENT, "a layout of 4 layers for 3 layers");
  CHECK(cache == NULL);
}

TEST_MAIN(TEST(standard_layout_is_the_uniform_one), TEST(a_cache_follows_a_per_layer_layout),
          TEST(layouts_a_cache_cannot_hold_are_refused), TEST(packed_kv_reorders_into_the_golden_order))
