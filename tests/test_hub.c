/* Models by Hugging Face id (src/io/hub.c): model ids as huggingface_hub
 * validates them, the cache directory from the environment, a snapshot
 * found by commit or through refs/, and the hub's answers `vlm pull` reads
 * (the model-info JSON, a resolve request's headers), whose names become
 * paths under the cache and so must be refused when unsafe. The downloads
 * themselves run against a stand-in hub in tests/cli/hub.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/hub.h"
#include "test.h"

static void parses_model_ids(void) {
  vlm_hub_id id;
  CHECK(vlm_hub_id_parse("Qwen/Qwen2-VL-2B-Instruct", &id));
  CHECK_STR_EQ(id.repo, "Qwen/Qwen2-VL-2B-Instruct");
  CHECK_STR_EQ(id.revision, "main");
  CHECK(!id.revision_given);
  CHECK(vlm_hub_id_parse("org/name.v1_x@refs/pr/12", &id));
  CHECK_STR_EQ(id.repo, "org/name.v1_x");
  CHECK_STR_EQ(id.revision, "refs/pr/12");
  CHECK(id.revision_given);
  const char *bad[] = {"name", "/abs/path", "a/b/c", "a//b", "./x", "a/b@", "a/b@../x", "a--b/c", "a/b..c",
                       "-a/b", "a/b-", "a/.b", "a/b@/x", "a b/c", "a/b@x y", "", "../x"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    if (vlm_hub_id_parse(bad[i], &id)) {
      fprintf(stderr, "  accepted '%s'\n", bad[i]);
      CHECK(false);
    }
  }
  char longer[120];
  memset(longer, 'a', sizeof(longer));
  longer[0] = 'o', longer[1] = '/', longer[sizeof(longer) - 1] = '\0';
  CHECK(!vlm_hub_id_parse(longer, &id)); /* over 96 characters */
}

static char scratch[256];

static void write_file(const char *path, const char *text) {
  FILE *file = fopen(path, "w");
  CHECK(file != NULL);
  if (!file) return;
  fputs(text, file);
  fclose(file);
}

static void finds_snapshots_in_the_cache(void) {
  snprintf(scratch, sizeof(scratch), "/tmp/vlm-test-hub-XXXXXX");
  CHECK(mkdtemp(scratch) != NULL);
  char path[1024];
  setenv("HF_HOME", "/nonexistent-home", 1);
  setenv("HF_HUB_CACHE", scratch, 1);
  CHECK_OK(vlm_hub_cache_dir(path, sizeof(path)));
  CHECK_STR_EQ(path, scratch);
  unsetenv("HF_HUB_CACHE");
  CHECK_OK(vlm_hub_cache_dir(path, sizeof(path)));
  CHECK_STR_EQ(path, "/nonexistent-home/hub");
  unsetenv("HF_HOME");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  CHECK_OK(vlm_hub_cache_dir(path, sizeof(path)));
  CHECK_STR_EQ(path, "/xdg/huggingface/hub");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  setenv("HF_HOME", "~/hf", 1);
  CHECK_OK(vlm_hub_cache_dir(path, sizeof(path)));
  CHECK_STR_EQ(path, "/home/u/hf/hub");
  setenv("HUGGINGFACE_HUB_CACHE", "/legacy", 1);
  CHECK_OK(vlm_hub_cache_dir(path, sizeof(path)));
  CHECK_STR_EQ(path, "/legacy");
  unsetenv("HUGGINGFACE_HUB_CACHE");
  setenv("HF_HUB_CACHE", scratch, 1);

  const char *commit = "0123456789abcdef0123456789abcdef01234567";
  snprintf(path, sizeof(path), "mkdir -p %s/models--org--tiny/refs %s/models--org--tiny/snapshots/%s", scratch,
           scratch, commit);
  CHECK(system(path) == 0);
  vlm_hub_id id;
  CHECK(vlm_hub_id_parse("org/tiny", &id));
  char found[VLM_HUB_PATH_MAX], expected[1024];
  CHECK_ERROR(vlm_hub_cache_find(&id, found, sizeof(found)), VLM_STATUS_NOT_FOUND, "vlm pull org/tiny");
  snprintf(path, sizeof(path), "%s/models--org--tiny/refs/main", scratch);
  write_file(path, commit);
  snprintf(expected, sizeof(expected), "%s/models--org--tiny/snapshots/%s", scratch, commit);
  CHECK_OK(vlm_hub_cache_find(&id, found, sizeof(found)));
  CHECK_STR_EQ(found, expected);
  CHECK(vlm_hub_id_parse("org/tiny@0123456789abcdef0123456789abcdef01234567", &id));
  CHECK_OK(vlm_hub_cache_find(&id, found, sizeof(found)));
  CHECK_STR_EQ(found, expected);
  CHECK(vlm_hub_id_parse("org/tiny@v2", &id));
  CHECK_ERROR(vlm_hub_cache_find(&id, found, sizeof(found)), VLM_STATUS_NOT_FOUND, "revision v2");
  snprintf(path, sizeof(path), "%s/models--org--tiny/refs/v2", scratch);
  write_file(path, "not a commit\n");
  CHECK_ERROR(vlm_hub_cache_find(&id, found, sizeof(found)), VLM_STATUS_DATA_LOSS, "not a commit hash");
  /* A file named like an id that exists wins; an id with no cache entry says pull. */
  CHECK_ERROR(vlm_hub_model_dir("org/other", VLM_HUB_NEEDS_WEIGHTS, found, sizeof(found)), VLM_STATUS_NOT_FOUND, "--download");
  snprintf(path, sizeof(path), "rm -rf %s", scratch);
  CHECK(system(path) == 0);
  unsetenv("HF_HUB_CACHE");
  unsetenv("HF_HOME");
}

static void parses_the_model_info(void) {
  const char *json =
      "{\"id\": \"org/tiny\", \"sha\": \"0123456789ABCDEF0123456789abcdef01234567\", \"gated\": \"manual\","
      " \"siblings\": [{\"rfilename\": \"config.json\", \"size\": 10},"
      " {\"rfilename\": \"model.safetensors\", \"size\": 134, \"lfs\": {\"sha256\": "
      "\"AAB89448d4f2757122e03679d910f6b9a4ef6f8a7418edb87e8c641513e31d84\", \"size\": 1449112}},"
      " {\"rfilename\": \"vision-lora/adapter_config.json\"}, {\"rfilename\": \"README.md\"},"
      " {\"rfilename\": \"pytorch_model.bin\"}, {\"rfilename\": \"tokenizer.model\"}]}";
  vlm_hub_listing listing;
  CHECK_OK(vlm_hub_listing_parse(json, strlen(json), &listing));
  CHECK_STR_EQ(listing.commit, "0123456789abcdef0123456789abcdef01234567");
  CHECK_STR_EQ(listing.gated, "manual");
  CHECK_INT_EQ(listing.file_count, 3);
  if (listing.file_count == 3) {
    CHECK_STR_EQ(listing.files[1].name, "model.safetensors");
    CHECK_INT_EQ(listing.files[1].size, 1449112); /* the LFS size, not the pointer's */
    CHECK_STR_EQ(listing.files[1].lfs_sha256, "aab89448d4f2757122e03679d910f6b9a4ef6f8a7418edb87e8c641513e31d84");
    CHECK_STR_EQ(listing.files[0].lfs_sha256, "");
    CHECK_STR_EQ(listing.files[2].name, "vision-lora/adapter_config.json");
  }
  CHECK(listing.has_safetensors && listing.has_pytorch_bin && listing.has_tokenizer_model);
  CHECK(!listing.has_tokenizer_json && !listing.has_gguf);
  vlm_hub_listing_release(&listing);
  const char *sha = "\"sha\": \"0123456789abcdef0123456789abcdef01234567\"";
  char text[512];
  /* Mistral's double weights: the consolidated copy is not fetched. */
  snprintf(text, sizeof(text), "{%s, \"siblings\": [{\"rfilename\": \"consolidated.safetensors\"},"
           " {\"rfilename\": \"model-00001-of-00002.safetensors\"}, {\"rfilename\": \"params.json\"}]}", sha);
  CHECK_OK(vlm_hub_listing_parse(text, strlen(text), &listing));
  CHECK_INT_EQ(listing.file_count, 2);
  if (listing.file_count == 2) CHECK_STR_EQ(listing.files[0].name, "model-00001-of-00002.safetensors");
  vlm_hub_listing_release(&listing);
  snprintf(text, sizeof(text), "{%s, \"siblings\": [{\"rfilename\": \"consolidated.safetensors\"}]}", sha);
  CHECK_OK(vlm_hub_listing_parse(text, strlen(text), &listing));
  CHECK_INT_EQ(listing.file_count, 1);
  vlm_hub_listing_release(&listing);
  snprintf(text, sizeof(text), "{%s, \"siblings\": [{\"rfilename\": \"../escape.json\"}]}", sha);
  CHECK_ERROR(vlm_hub_listing_parse(text, strlen(text), &listing), VLM_STATUS_DATA_LOSS, "unsafe path");
  snprintf(text, sizeof(text), "{%s, \"siblings\": [{\"rfilename\": \"/etc/x.json\"}]}", sha);
  CHECK_ERROR(vlm_hub_listing_parse(text, strlen(text), &listing), VLM_STATUS_DATA_LOSS, "unsafe path");
  snprintf(text, sizeof(text), "{%s, \"siblings\": [{\"rfilename\": \"a.json\"}, {\"rfilename\": \"a.json\"}]}", sha);
  CHECK_ERROR(vlm_hub_listing_parse(text, strlen(text), &listing), VLM_STATUS_DATA_LOSS, "twice");
  snprintf(text, sizeof(text), "{%s, \"siblings\": [{\"rfilename\": \"m.safetensors\", \"lfs\": {\"sha256\": \"x\"}}]}",
           sha);
  CHECK_ERROR(vlm_hub_listing_parse(text, strlen(text), &listing), VLM_STATUS_DATA_LOSS, "lfs.sha256");
  snprintf(text, sizeof(text), "{\"sha\": \"main\", \"siblings\": []}");
  CHECK_ERROR(vlm_hub_listing_parse(text, strlen(text), &listing), VLM_STATUS_DATA_LOSS, "commit");
  snprintf(text, sizeof(text), "{%s}", sha);
  CHECK_ERROR(vlm_hub_listing_parse(text, strlen(text), &listing), VLM_STATUS_DATA_LOSS, "siblings");
  CHECK_ERROR(vlm_hub_listing_parse("[", 1, &listing), VLM_STATUS_DATA_LOSS, "invalid JSON");
}

static void reads_the_resolve_headers(void) {
  vlm_hub_file_headers headers;
  vlm_hub_file_headers_init(&headers);
  const char *lines[] = {"Content-Length: 0\r\n", "etag: \"pointer-sha1\"\r\n",
                         "X-Linked-Etag: \"aab89448d4f2757122e03679d910f6b9a4ef6f8a7418edb87e8c641513e31d84\"\r\n",
                         "ETag: \"late\"\r\n", "X-Linked-Size:  1449112 \r\n",
                         "x-repo-commit: 0123456789ABCDEF0123456789abcdef01234567\r\n",
                         "Location: https://cdn-lfs.hf.co/repos/x\r\n", "X-Error-Code: GatedRepo\r\n"};
  for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
    CHECK(vlm_hub_header_line(lines[i], strlen(lines[i]), &headers));
  CHECK(!vlm_hub_header_line("\r\n", 2, &headers));
  CHECK_STR_EQ(headers.etag, "aab89448d4f2757122e03679d910f6b9a4ef6f8a7418edb87e8c641513e31d84");
  CHECK_INT_EQ(headers.size, 1449112);
  CHECK_STR_EQ(headers.commit, "0123456789abcdef0123456789abcdef01234567");
  CHECK_STR_EQ(headers.location, "https://cdn-lfs.hf.co/repos/x");
  CHECK_STR_EQ(headers.error_code, "GatedRepo");
  vlm_hub_file_headers_init(&headers);
  const char *weak = "ETag: W/\"abc123\"\r\n";
  vlm_hub_header_line(weak, strlen(weak), &headers);
  CHECK_STR_EQ(headers.etag, "abc123");
  const char *huge = "Content-Length: 99999999999999999999999\r\n";
  vlm_hub_header_line(huge, strlen(huge), &headers);
  CHECK_INT_EQ(headers.size, -1);
  CHECK(vlm_hub_etag_valid("abc123"));
  CHECK(!vlm_hub_etag_valid("../x") && !vlm_hub_etag_valid("") && !vlm_hub_etag_valid("a/b") && !vlm_hub_etag_valid(".x"));
  CHECK(vlm_hub_safe_path("a/b.json") && !vlm_hub_safe_path("a/../b") && !vlm_hub_safe_path("a//b") &&
        !vlm_hub_safe_path("./a") && !vlm_hub_safe_path("a\\b"));
  CHECK(vlm_hub_wanted_file("model-00001-of-00002.safetensors") && vlm_hub_wanted_file("chat_template.jinja") &&
        vlm_hub_wanted_file("speech-lora/adapter_config.json") && !vlm_hub_wanted_file("pytorch_model.bin") &&
        !vlm_hub_wanted_file("README.md") && !vlm_hub_wanted_file("model.gguf"));
}

TEST_MAIN(TEST(parses_model_ids), TEST(finds_snapshots_in_the_cache), TEST(parses_the_model_info),
          TEST(reads_the_resolve_headers))
