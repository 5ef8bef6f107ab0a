/* The cpu backend's store of packed linear weights: one packed copy per
 * (weight, bias), found again on later lookups, equal to packing directly. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu_packs.h"
#include "test.h"
#include "test_kernels_support.h"

static void packs_once_and_finds_again(void) {
  enum { OUT = 70, IN = 33, LAYERS = 100 };
  vlm_cpu_packs *packs = NULL;
  CHECK_OK(vlm_cpu_packs_create(&packs));
  /* Enough layers that the table grows several times. */
  static uint16_t weights[LAYERS][OUT * IN], bias[OUT];
  test_random random = {1};
  for (int l = 0; l < LAYERS; l++)
    for (int i = 0; i < OUT * IN; i++) weights[l][i] = (uint16_t)test_random_next(&random);
  for (int i = 0; i < OUT; i++) bias[i] = 0x3f80; /* 1.0 */
  const cpu_packed_linear *first[LAYERS];
  for (int l = 0; l < LAYERS; l++) {
    cpu_linear_weights w = {VLM_DTYPE_BF16, weights[l], NULL, OUT, IN};
    CHECK_OK(vlm_cpu_packs_get(packs, NULL, &w, NULL, &first[l]));
  }
  CHECK_INT_EQ(vlm_cpu_packs_count(packs), LAYERS);
  for (int l = 0; l < LAYERS; l++) {
    cpu_linear_weights w = {VLM_DTYPE_BF16, weights[l], NULL, OUT, IN};
    const cpu_packed_linear *again = NULL;
    CHECK_OK(vlm_cpu_packs_get(packs, NULL, &w, NULL, &again));
    CHECK(again == first[l]);
  }
  /* The same weight with a bias is another layer. */
  cpu_linear_weights with_bias = {VLM_DTYPE_BF16, weights[0], bias, OUT, IN};
  const cpu_packed_linear *biased = NULL;
  CHECK_OK(vlm_cpu_packs_get(packs, NULL, &with_bias, NULL, &biased));
  CHECK(biased != first[0] && biased->bias && biased->bias[OUT - 1] == 1.0f && biased->bias[OUT] == 0.0f);
  CHECK_INT_EQ(vlm_cpu_packs_count(packs), LAYERS + 1);
  /* Its panels are cpu_linear_pack's. */
  cpu_packed_linear *direct = NULL;
  CHECK_OK(cpu_linear_pack(NULL, &with_bias, &direct));
  CHECK(direct->panel_count == 2 && biased->panel_count == 2);
  CHECK(memcmp(direct->panels, biased->panels, (size_t)(2 * 64 * IN) * sizeof(uint16_t)) == 0);
  CHECK(vlm_cpu_packs_bytes(packs) == (LAYERS + 1) * cpu_packed_linear_bytes(direct) - (LAYERS * 2 * 64 * 4));
  cpu_packed_linear_release(direct);
  vlm_cpu_packs_release(packs);
}

static void refuses_what_the_kernels_cannot_read(void) {
  vlm_cpu_packs *packs = NULL;
  CHECK_OK(vlm_cpu_packs_create(&packs));
  int32_t weights[4] = {0};
  cpu_linear_weights w = {VLM_DTYPE_I32, weights, NULL, 2, 2};
  const cpu_packed_linear *packed = NULL;
  CHECK_ERROR(vlm_cpu_packs_get(packs, NULL, &w, NULL, &packed), VLM_STATUS_UNIMPLEMENTED, "i32");
  CHECK(packed == NULL && vlm_cpu_packs_count(packs) == 0);
  vlm_cpu_packs_release(packs);
}

TEST_MAIN(TEST(packs_once_and_finds_again), TEST(refuses_what_the_kernels_cannot_read))
