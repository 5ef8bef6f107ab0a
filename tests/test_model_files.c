/* Hostile model directories.
 *
 * A safetensors header whose length is not a multiple of 8 (the reference
 * writer pads it; readers must accept any length) leaves every tensor at an
 * odd address. cpu_embedding then loaded floats from odd addresses, which
 * UBSan aborts on (the ASan/UBSan build runs this test). Misaligned tensors
 * are now copied to aligned memory when the file is opened: the model
 * gives the same tokens as from the well-formed file.
 *
 * A FIFO (or device, or directory) where a model file should be: opening
 * it for reading blocked until a writer came (vlm inspect hung forever).
 * Every loader refuses it at once. */
#include <stdint.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/status.h"
#include "io/checkpoint.h"
#include "io/config.h"
#include "io/file.h"
#include "io/safetensors.h"
#include "test.h"
#include "vlm/model.h"
#include "vlm/generate.h"
#include "vlm/tokenizer.h"

#define TEXT_MODEL VLM_SOURCE_DIR "/tests/models/qwen2"

static uint64_t read_u64(const uint8_t *p) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; i--) value = value << 8 | p[i];
  return value;
}

/* The file with one more space of header padding. */
static char *misaligned_copy(const char *data, size_t size, size_t *out_size) {
  uint64_t header = read_u64((const uint8_t *)data);
  char *out = malloc(size + 1);
  uint64_t padded = header + 1;
  for (int i = 0; i < 8; i++) out[i] = (char)(padded >> (8 * i));
  memcpy(out + 8, data + 8, (size_t)header);
  out[8 + header] = ' ';
  memcpy(out + 9 + header, data + 8 + header, size - 8 - (size_t)header);
  *out_size = size + 1;
  return out;
}

static void misaligned_tensors_are_copied_aligned(void) {
  char *data = NULL;
  size_t size = 0;
  CHECK_OK(vlm_file_read_all(TEXT_MODEL "/model.safetensors", 64 << 20, &data, &size));
  size_t misaligned_size = 0;
  char *misaligned = misaligned_copy(data, size, &misaligned_size);
  vlm_safetensors_file good, odd;
  memset(&good, 0, sizeof(good));
  memset(&odd, 0, sizeof(odd));
  CHECK_OK(vlm_safetensors_parse_buffer((const uint8_t *)data, size, NULL, "good", &good));
  CHECK_OK(vlm_safetensors_parse_buffer((const uint8_t *)misaligned, misaligned_size, NULL, "odd", &odd));
  CHECK(good.aligned_copy == NULL);
  CHECK(odd.aligned_copy != NULL);
  CHECK_INT_EQ(odd.entry_count, good.entry_count);
  for (size_t i = 0; i < good.entry_count && i < odd.entry_count; i++) {
    size_t bytes = good.entries[i].data_end - good.entries[i].data_begin;
    size_t element = vlm_dtype_size(odd.entries[i].dtype);
    CHECK((uintptr_t)odd.entries[i].data % element == 0);
    CHECK(memcmp(odd.entries[i].data, good.entries[i].data, bytes) == 0);
  }
  vlm_safetensors_release_parsed(&good);
  vlm_safetensors_release_parsed(&odd);
  free(misaligned);
  free(data);
}

static vlm_status generate(const char *model_dir, vlm_generation_result *out) {
  vlm_generator_options options = {.thread_count = 2, .capacity = 64};
  vlm_model *model = NULL;
  VLM_RETURN_IF_ERROR(vlm_model_open(model_dir, NULL, &model));
  vlm_generator *generator = NULL;
  vlm_status opened = vlm_generator_open(model, &options, &generator);
  vlm_model_release(model); /* the generator keeps its own reference */
  VLM_RETURN_IF_ERROR(opened);
  vlm_generation_request request = {.prompt = "Hello", .max_tokens = 6,
                                    .sampling = vlm_generator_default_sampling(generator)};
  request.sampling.temperature = 0;
  vlm_status status = vlm_generate(generator, &request, out);
  vlm_generator_release(generator);
  return status;
}

static void a_misaligned_checkpoint_runs_like_the_original(void) {
  const char *dir = test_temp_dir();
  char model[1024];
  snprintf(model, sizeof(model), "%s/misaligned", dir);
  CHECK(mkdir(model, 0755) == 0);
  const char *files[] = {"config.json", "generation_config.json", "special_tokens_map.json", "tokenizer.json",
                         "tokenizer_config.json", "model.safetensors"};
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
    char source[1024];
    snprintf(source, sizeof(source), "%s/%s", TEXT_MODEL, files[i]);
    char *data = NULL;
    size_t size = 0;
    CHECK_OK(vlm_file_read_all(source, 64 << 20, &data, &size));
    if (!data) continue;
    if (strcmp(files[i], "model.safetensors") == 0) {
      size_t padded_size = 0;
      char *padded = misaligned_copy(data, size, &padded_size);
      free(data);
      data = padded, size = padded_size;
    }
    free(test_write_file(model, files[i], data, size));
    free(data);
  }
  vlm_generation_result expected, actual;
  CHECK_OK(generate(TEXT_MODEL, &expected));
  CHECK_OK(generate(model, &actual));
  CHECK_INT_EQ(actual.completion_tokens, expected.completion_tokens);
  CHECK(actual.tokens && expected.tokens &&
        memcmp(actual.tokens, expected.tokens, (size_t)expected.completion_tokens * sizeof(int32_t)) == 0);
  vlm_generation_result_release(&expected);
  vlm_generation_result_release(&actual);
}

/* Each loader on a directory whose file is a FIFO, in a child process
 * with an alarm: a blocking open is a failure, not a hung test. */
static void fifos_are_refused_without_blocking(void) {
  const char *dir = test_temp_dir();
  char model[1024];
  snprintf(model, sizeof(model), "%s/fifos", dir);
  CHECK(mkdir(model, 0755) == 0);
  const char *names[] = {"config.json", "tokenizer.json", "model.safetensors"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    char path[1100];
    snprintf(path, sizeof(path), "%s/%s", model, names[i]);
    CHECK(mkfifo(path, 0644) == 0);
  }
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    fflush(stdout);
    fflush(stderr);
    pid_t child = fork();
    if (child == 0) {
      alarm(10);
      vlm_status status = VLM_OK;
      if (i == 0) {
        vlm_model_config config;
        status = vlm_model_config_load(model, NULL, &config);
        if (!status) vlm_model_config_release(&config);
      } else if (i == 1) {
        vlm_tokenizer *tokenizer = NULL;
        status = vlm_tokenizer_create(model, NULL, &tokenizer);
        vlm_tokenizer_release(tokenizer);
      } else {
        vlm_checkpoint *checkpoint = NULL;
        status = vlm_checkpoint_open(model, NULL, &checkpoint);
        vlm_checkpoint_release(checkpoint);
      }
      bool refused = vlm_status_code_of(status) == VLM_STATUS_INVALID_ARGUMENT &&
                     strstr(vlm_status_message(status), "not a regular file (a FIFO)") &&
                     strstr(vlm_status_message(status), names[i]);
      if (!refused) fprintf(stderr, "  %s: %s\n", names[i], status ? vlm_status_message(status) : "loaded");
      _exit(refused ? 0 : 1);
    }
    int wait_status = 0;
    waitpid(child, &wait_status, 0);
    if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
      fprintf(stderr, "  %s as a FIFO: %s\n", names[i],
              WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGALRM ? "the open blocked" : "not refused");
      test_failures++;
    }
  }
}

TEST_MAIN(TEST(misaligned_tensors_are_copied_aligned), TEST(a_misaligned_checkpoint_runs_like_the_original),
          TEST(fifos_are_refused_without_blocking))
