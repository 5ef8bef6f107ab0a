"""The chat page at / in a real browser (issue 20): Debian's chromium and
chromium-driver, driven by selenium, load the page from a `vlm serve` on
loopback with the tiny LLaVA and use it as a person would: a text message,
an image from the file picker and one dropped on the page, a bad image
whose API error the page shows as the API gave it, a long reply that
streams and is cancelled with Stop (the server must cancel the request:
its slot frees long before the reply could have finished), and a server
with --api-key, whose key the page asks for.

The long reply needs a reply that lasts: the tiny LLaVA generates ~10,000
tokens/s and stops at its EOS within a few hundred to a few thousand
tokens. The server therefore runs on a copy of tests/models/llava whose
configs name no EOS token (weights, tokenizer, template and processor
unchanged), with a 65536-position context, so a reply runs to max_tokens:
65,000 tokens, about two minutes here (32,000 took 28.5 s); Stop comes
about a second in.

Screenshots go to $VLM_ARTIFACTS_DIR, by default the build directory's
artifacts/ (next to the vlm binary): chat-page.png (after the text and
image replies), chat-error.png (the bad image), chat-stopped.png (the
cancelled reply), chat-api-key.png.

Run: .venv-browser/bin/python tests/server/test_browser.py [-v]
Skips (tagged): no-chromium when /usr/bin/chromium or /usr/bin/chromedriver
is absent (scripts/install-dependencies.sh installs them), no-fixtures
without the shared images."""
import base64
import json
import os
import shutil
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

SOURCE = os.path.abspath(os.environ.get("VLM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")))
VLM = os.path.abspath(os.environ.get("VLM_BINARY", os.path.join(SOURCE, "build", "vlm")))
MODEL = os.path.join(SOURCE, "tests", "models", "llava")
FIXTURES = os.path.join(os.environ.get("VLM_FIXTURES_DIR") or os.path.join(SOURCE, "..", "shared", "fixtures"),
                        "media", "images")
ARTIFACTS = os.environ.get("VLM_ARTIFACTS_DIR") or os.path.join(os.path.dirname(VLM), "artifacts")
CHROMIUM = os.environ.get("VLM_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("VLM_CHROMEDRIVER", "/usr/bin/chromedriver")
LONG_CONTEXT = 65536
LONG_REPLY_TOKENS = 65000


def fixture(name):
    # chromedriver takes only canonical paths for file inputs.
    path = os.path.realpath(os.path.join(FIXTURES, name))
    if not os.path.exists(path):
        raise unittest.SkipTest(f"no-fixtures: {path} is absent (../shared/fixtures missing)")
    return path


def require_chromium():
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            raise unittest.SkipTest(f"no-chromium: {path} is absent (Debian's chromium and chromium-driver, "
                                    "installed by scripts/install-dependencies.sh)")


def model_without_eos(directory):
    """A copy of the tiny LLaVA whose replies only end at max_tokens."""
    copy = os.path.join(directory, "llava")
    shutil.copytree(MODEL, copy)
    for name, section in (("generation_config.json", None), ("config.json", "text_config")):
        path = os.path.join(copy, name)
        with open(path) as file:
            config = json.load(file)
        target = config[section] if section else config
        target["eos_token_id"] = None
        with open(path, "w") as file:
            json.dump(config, file, indent=2)
    return copy


def start_browser():
    # Imported here so that a missing browser is reported as a skip first.
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1280,900", "--no-first-run", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--disable-extensions"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


class PageTestCase(unittest.TestCase):
    arguments = ()

    @classmethod
    def setUpClass(cls):
        require_chromium()
        cls.scratch = tempfile.mkdtemp(prefix="vlm-browser-")
        cls.server = harness.Server(VLM, model_without_eos(cls.scratch), "--parallel", "1",
                                    "--ctx", str(LONG_CONTEXT), *cls.arguments)
        try:
            cls.driver = start_browser()
        except Exception:
            cls.server.stop()
            shutil.rmtree(cls.scratch, ignore_errors=True)
            raise
        cls.driver.set_script_timeout(30)
        os.makedirs(ARTIFACTS, exist_ok=True)

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        status = cls.server.stop()
        shutil.rmtree(cls.scratch, ignore_errors=True)
        if status != 0:
            raise AssertionError(f"vlm serve exited {status} on SIGTERM:\n{cls.server.stderr()}")

    # -------------------------------------------------------------- helpers

    def url(self):
        return f"http://{self.server.host}:{self.server.port}/"

    def find(self, css):
        from selenium.webdriver.common.by import By
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def find_all(self, css):
        from selenium.webdriver.common.by import By
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def wait_until(self, condition, what, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = condition()
            if value:
                return value
            time.sleep(0.02)
        self.screenshot(f"failed-{self.id().split('.')[-1]}")
        raise AssertionError(f"timed out after {timeout} s waiting for {what}")

    def screenshot(self, name):
        path = os.path.join(ARTIFACTS, f"{name}.png")
        self.driver.save_screenshot(path)
        return path

    def open_page(self):
        self.driver.get(self.url())
        self.wait_until(lambda: self.find("#connection").text in ("Ready.",), "the page to load the model")

    def set_field(self, css, value):
        field = self.find(css)
        field.clear()
        if value != "":
            field.send_keys(str(value))
        self.driver.execute_script("arguments[0].dispatchEvent(new Event('change'))", field)

    def send(self, text):
        box = self.find("#prompt")
        box.send_keys(text)
        self.find("#send").click()
        return self.wait_until(lambda: self.last_reply(), "a reply to appear")

    def last_reply(self):
        replies = self.find_all("li.message.assistant")
        return replies[-1] if replies else None

    def reply_state(self, reply):
        return reply.get_attribute("data-state")

    def wait_finished(self, reply, timeout=120):
        return self.wait_until(lambda: self.reply_state(reply) in ("done", "stopped", "error") and self.reply_state(reply),
                               "the reply to finish", timeout)

    def severe_console_messages(self):
        """Browser console errors other than the failed responses the page shows itself."""
        return [entry["message"] for entry in self.driver.get_log("browser")
                if entry["level"] == "SEVERE" and "the server responded with a status of" not in entry["message"]]


class ChatPageTests(PageTestCase):

    def test_1_text_then_images(self):
        self.open_page()
        capabilities = self.find("#capabilities").text
        self.assertIn("text, image", capabilities)
        self.assertIn(f"{LONG_CONTEXT} positions per slot", capabilities)
        self.assertEqual(self.find("#model-name").text, "llava")
        self.assertIn("image", self.find("#file-input").get_attribute("accept"))
        self.set_field("#max-tokens", 24)

        before = self.server.metrics()
        reply = self.send("Hello there")
        self.assertEqual(self.wait_finished(reply), "done", reply.text)
        self.assertTrue(reply.find_element("css selector", ".content").text)
        meta = reply.find_element("css selector", ".meta").text
        self.assertIn("completion tokens", meta)
        self.assertIn("24 completion tokens", meta)  # the reply ran to the page's max tokens
        self.assertIn("first token", meta)
        self.assertIn("stopped at the token limit", meta)
        after = self.server.metrics()
        self.assertEqual(after["vlm_completion_tokens_total"] - before["vlm_completion_tokens_total"], 24)

        # An image from the file picker, one dropped on the page: both go in
        # the next message, each as its own image part (576 image tokens each).
        self.find("#file-input").send_keys(fixture("chelsea.png"))
        self.wait_until(lambda: len(self.find_all("#attachments li")) == 1, "the picked image to be attached")
        self.drop_file(fixture("coffee.jpg"), "image/jpeg")
        self.wait_until(lambda: len(self.find_all("#attachments li")) == 2, "the dropped image to be attached")
        reply = self.send("What is in these images?")
        self.assertEqual(self.wait_finished(reply), "done", reply.text)
        user = self.find_all("li.message.user")[-1]
        self.assertEqual(len(user.find_elements("css selector", ".images img")), 2)
        self.assertIn("(1152 image)", reply.find_element("css selector", ".meta").text)
        self.assertEqual(self.find_all("#attachments li"), [])
        self.screenshot("chat-page")
        self.assertEqual(self.severe_console_messages(), [])

    def drop_file(self, path, mime):
        """Drops the file on the chat area as a drag from the desktop would."""
        with open(path, "rb") as file:
            data = base64.b64encode(file.read()).decode()
        self.driver.execute_script("""
            const [data, name, type] = arguments;
            const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
            const transfer = new DataTransfer();
            transfer.items.add(new File([bytes], name, {type}));
            const target = document.getElementById('chat');
            for (const kind of ['dragenter', 'dragover', 'drop'])
              target.dispatchEvent(new DragEvent(kind, {dataTransfer: transfer, bubbles: true, cancelable: true}));
        """, data, os.path.basename(path), mime)

    def test_2_a_bad_image_shows_the_api_error(self):
        self.open_page()
        bad = os.path.join(self.scratch, "broken.png")
        with open(bad, "wb") as file:
            file.write(b"\x89PNG\r\n\x1a\n" + b"this is not the rest of a PNG" * 4)
        # What the API itself answers for the same bytes.
        with open(bad, "rb") as file:
            url = "data:image/png;base64," + base64.b64encode(file.read()).decode()
        status, api = self.server.post_json("/v1/chat/completions", {"messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": url}}, {"type": "text", "text": "What is this?"}]}]})
        self.assertEqual(status, 400, api)

        self.find("#file-input").send_keys(bad)
        self.wait_until(lambda: len(self.find_all("#attachments li")) == 1, "the bad image to be attached")
        reply = self.send("What is this?")
        self.assertEqual(self.wait_finished(reply), "error")
        error = reply.find_element("css selector", ".error")
        self.assertEqual(error.get_attribute("role"), "alert")
        self.assertEqual(error.find_element("css selector", ".error-message").text, api["error"]["message"])
        code = error.find_element("css selector", ".error-code").text
        self.assertIn("400", code)
        self.assertIn(api["error"]["type"], code)
        if api["error"]["code"]:
            self.assertIn(api["error"]["code"], code)
        self.assertIn(api["error"]["param"], error.text)  # in the message, or after it
        self.screenshot("chat-error")
        # The failed turn is not sent again: the next message works.
        self.set_field("#max-tokens", 4)
        reply = self.send("And now?")
        self.assertEqual(self.wait_finished(reply), "done", reply.text)

    def test_3_a_long_reply_streams_and_stop_cancels_it(self):
        self.open_page()
        self.set_field("#max-tokens", LONG_REPLY_TOKENS)
        before = self.server.metrics()
        reply = self.send("hello")
        content = reply.find_element("css selector", ".content")
        # Streamed: text is there, and grows, while the reply is still running.
        first = len(self.wait_until(lambda: content.text, "the first streamed text"))
        self.wait_until(lambda: len(content.text) > first + 20, "more streamed text")
        self.assertEqual(self.reply_state(reply), "streaming", reply.text[-300:])
        self.assertFalse(self.find("#send").is_displayed())
        self.assertTrue(self.find("#stop").is_displayed())
        self.assertEqual(self.server.metrics()["vlm_num_requests_running"], 1)
        stopped_at = time.monotonic()
        self.find("#stop").click()
        self.assertEqual(self.wait_finished(reply, 10), "stopped")
        self.assertIn("stopped", reply.find_element("css selector", ".meta").text)
        # The server cancelled it: the slot is free at once, not after the
        # tens of seconds the whole reply takes.
        metrics = self.wait_until(
            lambda: (lambda m: m if m["vlm_num_requests_running"] == 0 else None)(self.server.metrics()),
            "the server to free the slot", 10)
        freed_after = time.monotonic() - stopped_at
        self.assertLess(freed_after, 5.0)
        cancelled = 'vlm_requests_finished_total{reason="cancelled"}'
        self.assertEqual(metrics[cancelled] - before[cancelled], 1)
        self.assertEqual(metrics["vlm_client_disconnects_total"] - before["vlm_client_disconnects_total"], 1)
        generated = metrics["vlm_completion_tokens_total"] - before["vlm_completion_tokens_total"]
        self.assertLess(generated, LONG_REPLY_TOKENS)
        self.screenshot("chat-stopped")
        # The page is usable again, and the partial reply is part of the chat.
        self.set_field("#max-tokens", 4)
        reply = self.send("Go on")
        self.assertEqual(self.wait_finished(reply), "done", reply.text)
        self.assertEqual(self.severe_console_messages(), [])


class ApiKeyPageTests(PageTestCase):
    arguments = ("--api-key", "browser-secret")

    def test_the_page_asks_for_the_key_and_sends_it(self):
        self.driver.get(self.url())
        self.wait_until(lambda: "API key" in self.find("#connection").text, "the page to ask for the key")
        self.assertEqual(self.driver.switch_to.active_element.get_attribute("id"), "api-key")
        self.set_field("#api-key", "wrong")
        self.wait_until(lambda: "API key" in self.find("#connection").text, "the wrong key to be refused")
        self.set_field("#api-key", "browser-secret")
        self.wait_until(lambda: self.find("#connection").text == "Ready.", "the model with the key")
        self.set_field("#max-tokens", 4)
        reply = self.send("Hello")
        self.assertEqual(self.wait_finished(reply), "done", reply.text)
        self.assertIn("4 completion tokens", reply.find_element("css selector", ".meta").text)
        self.screenshot("chat-api-key")


if __name__ == "__main__":
    unittest.main()
