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

Issue 29's: with a scripted tiny Qwen2 (scripted_model.py) that writes
"- <script>" itself, the markdown is rendered and the tag shown as text
(and hostile text through the renderer stays text); conversations persist
across a reload, are renamed, exported and deleted; regenerate and
edit-last; every sampler setting is sent; a 1,500-token prefill shows its
progress with an estimate; and with the tiny Phi-4-multimodal, FLAC and MP3
clips are sent and play in their bubble.

Screenshots go to $VLM_ARTIFACTS_DIR, by default the build directory's
artifacts/ (next to the vlm binary): chat-page.png (after the text and
image replies), chat-error.png (the bad image), chat-stopped.png (the
cancelled reply), chat-api-key.png, chat-progress.png (midway, when caught),
chat-progress-done.png, chat-audio.png.

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
    def make_model(cls, scratch):
        return model_without_eos(scratch)

    @classmethod
    def setUpClass(cls):
        require_chromium()
        cls.scratch = tempfile.mkdtemp(prefix="vlm-browser-")
        try:
            model = cls.make_model(cls.scratch)
        except BaseException:
            shutil.rmtree(cls.scratch, ignore_errors=True)
            raise
        cls.server = harness.Server(VLM, model, "--parallel", "1", "--ctx", str(LONG_CONTEXT), *cls.arguments)
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

    def open_page(self, new_chat=True):
        """Loads the page; it shows the chat saved last, so a test starts a
        new one unless it asks for that one."""
        self.driver.get(self.url())
        self.wait_until(lambda: self.find("#connection").text in ("Ready.",), "the page to load the model")
        if new_chat:
            self.find("#new-chat").click()
            self.wait_until(lambda: not self.find_all("#log li"), "an empty chat")

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


# The scripted model's reply (tests/server/scripted_model.py): a markdown
# list item whose text is an HTML tag, token by token.
SCRIPT_PIECES = ["-", "Ġ", "<", "s", "c", "r", "i", "p", "t", ">"]
SCRIPT_REPLY = "- <script>"


class ScriptedModelPageTests(PageTestCase):
    """The page's own features against a model that writes markdown with a
    <script> in it: rendering, conversations kept across a reload, rename,
    export, delete, regenerate and edit-last, the sampler settings, and the
    progress of a long prefill. The model's MLP is wide (16384) and the
    prefill chunks short (32 rows), so a 1,500-token prompt takes a second
    or more: long enough to be seen."""
    arguments = ("--prefill-chunk", "32", "--decoding-prefill-chunk", "32")

    @classmethod
    def make_model(cls, scratch):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import scripted_model
        return scripted_model.write(os.path.join(scratch, "scripted"), SCRIPT_PIECES, intermediate_size=16384)

    # Read in one script: the list is drawn anew whenever a chat is saved.
    def conversation_titles(self):
        return self.driver.execute_script(
            "return [...document.querySelectorAll('#conversations .conversation-title')].map((e) => e.textContent);")

    def wait_titles(self, expected):
        self.wait_until(lambda: self.conversation_titles() == expected, f"the chats {expected}")

    def messages(self):
        """(role, text) of every message in the log."""
        return [tuple(pair) for pair in self.driver.execute_script("""
            return [...document.querySelectorAll('#log > li')].map((item) =>
              [item.classList.contains('user') ? 'user' : 'assistant', item.querySelector('.content').innerText]);""")]

    def test_markdown_from_the_model_is_rendered_not_injected(self):
        self.open_page()
        self.driver.execute_script("window.__injected = false;")
        reply = self.send("Write some HTML")
        self.assertEqual(self.wait_finished(reply), "done", reply.text)
        content = reply.find_element("css selector", ".content")
        # Markdown: the model's "- " made a list item; its "<script>" is text.
        items = content.find_elements("css selector", "ul > li")
        self.assertEqual([item.text for item in items], ["<script>"])
        self.assertEqual(items[0].get_attribute("innerHTML"), "&lt;script&gt;")
        self.assertEqual(self.find_all("#log script"), [])
        # The renderer itself on hostile text: nothing but text and its own
        # elements, no attribute from the text but a checked link.
        hostile = "\n\n".join([
            "<img src=x onerror=\"window.__injected = true\">",
            "<script>window.__injected = true</script>",
            "[click](javascript:window.__injected=true) and [ok](https://example.com/a?b=1)",
            "![pic](https://example.com/p.png) <iframe src=\"https://example.com\"></iframe>",
            "```html\n</code></pre><script>window.__injected = true</script>\n```",
            "**bold** *em* ~~gone~~ `code <b>`",
            "| a | b |\n|---|:-:|\n| <i>1</i> | 2 |",
            "> quoted <u>x</u>\n\n1. one\n2. two\n   - nested",
        ])
        result = self.driver.execute_script("""
            const box = document.createElement('div');
            box.append(window.vlmMarkdown.render(arguments[0]));
            document.body.append(box);
            const tags = [...box.querySelectorAll('*')].map((e) => e.tagName.toLowerCase());
            const attributes = [...box.querySelectorAll('*')].flatMap((e) => [...e.attributes].map((a) => a.name + '=' + a.value));
            const out = {tags: [...new Set(tags)].sort(), attributes, text: box.textContent,
                         links: [...box.querySelectorAll('a')].map((a) => a.getAttribute('href')),
                         code: [...box.querySelectorAll('pre code')].map((c) => c.textContent),
                         copy: box.querySelectorAll('.code-block button.copy').length};
            box.remove();
            return out;""", hostile)
        self.assertFalse(self.driver.execute_script("return window.__injected"))
        allowed = {"a", "blockquote", "br", "button", "code", "del", "div", "em", "li", "ol", "p", "pre", "span",
                   "strong", "table", "tbody", "td", "th", "thead", "tr", "ul"}
        self.assertLessEqual(set(result["tags"]), allowed, result["tags"])
        self.assertEqual(result["links"], ["https://example.com/a?b=1", "https://example.com/p.png"])
        for attribute in result["attributes"]:
            name = attribute.split("=")[0]
            self.assertIn(name, {"class", "href", "rel", "target", "type", "style"}, attribute)
            if name == "style":
                self.assertRegex(attribute, r"^style=text-align: (left|center|right);$")
        for text in ("<img src=x onerror=", "<script>window.__injected = true</script>", "<iframe src=", "<i>1</i>",
                     "<u>x</u>", "(javascript:window.__injected=true)"):
            self.assertIn(text, result["text"])
        self.assertEqual(result["code"], ["</code></pre><script>window.__injected = true</script>"])
        self.assertEqual(result["copy"], 1)
        self.assertEqual(self.severe_console_messages(), [])

    def test_conversations_persist_across_a_reload(self):
        self.open_page()
        self.assertTrue(self.send("First question"))
        self.wait_finished(self.last_reply())
        self.send("Second question")
        self.assertEqual(self.wait_finished(self.last_reply()), "done")
        expected = [("user", "First question"), ("assistant", "<script>"),
                    ("user", "Second question"), ("assistant", "<script>")]
        self.assertEqual(self.messages(), expected)
        self.assertEqual(self.conversation_titles()[0], "First question")

        self.driver.refresh()
        self.open_page(new_chat=False)
        self.assertEqual(self.messages(), expected)  # the chat saved last is shown again
        self.assertEqual(self.conversation_titles()[0], "First question")
        reply = self.last_reply()
        self.assertEqual(reply.find_element("css selector", ".content ul > li").get_attribute("innerHTML"),
                         "&lt;script&gt;")
        self.assertIn("completion tokens", reply.find_element("css selector", ".meta").text)

        # Rename, and the name is kept.
        first = self.find_all("#conversations .conversation")[0]
        first.find_element("css selector", "button.rename").click()
        field = self.find("#conversations .rename-input")
        self.driver.execute_script("arguments[0].value = '';", field)  # clear() would blur it
        field.send_keys("Renamed chat\n")
        self.wait_titles(["Renamed chat"] + self.conversation_titles()[1:])
        self.driver.refresh()
        self.open_page(new_chat=False)
        self.assertEqual(self.conversation_titles()[0], "Renamed chat")

        # Export: the JSON file the browser is handed.
        self.driver.execute_script("""
            window.__exports = [];
            const create = URL.createObjectURL;
            URL.createObjectURL = (blob) => { window.__exports.push(blob); return create.call(URL, blob); };""")
        self.find_all("#conversations .conversation")[0].find_element("css selector", "button.export").click()
        exported = json.loads(self.driver.execute_async_script(
            "const done = arguments[0]; window.__exports[0].text().then(done);"))
        self.assertEqual(exported["format"], "vlm-chat")
        self.assertEqual(exported["conversation"]["title"], "Renamed chat")
        self.assertEqual([(m["role"], m["text"]) for m in exported["conversation"]["messages"]],
                         [("user", "First question"), ("assistant", SCRIPT_REPLY),
                          ("user", "Second question"), ("assistant", SCRIPT_REPLY)])
        self.assertIn("timings", exported["conversation"]["messages"][1])

        # Another chat, then the first one deleted (two clicks).
        before = len(self.conversation_titles())
        self.find("#new-chat").click()
        self.send("Another chat")
        self.wait_finished(self.last_reply())
        self.wait_until(lambda: len(self.conversation_titles()) == before + 1, "the new chat in the list")
        self.assertEqual(self.conversation_titles()[:2], ["Another chat", "Renamed chat"])
        renamed = self.find_all("#conversations .conversation")[1]
        delete = renamed.find_element("css selector", "button.delete")
        delete.click()
        self.assertEqual(delete.text, "Delete?")
        delete.click()
        self.wait_until(lambda: "Renamed chat" not in self.conversation_titles(), "the chat to be deleted")
        self.driver.refresh()
        self.open_page(new_chat=False)
        self.assertNotIn("Renamed chat", self.conversation_titles())
        self.assertEqual(self.conversation_titles()[0], "Another chat")
        self.assertEqual(self.messages(), [("user", "Another chat"), ("assistant", "<script>")])
        # And an older chat opens from the list.
        self.assertEqual(self.severe_console_messages(), [])

    def test_regenerate_and_edit_the_last_message(self):
        self.open_page()
        self.send("Question one")
        self.assertEqual(self.wait_finished(self.last_reply()), "done")
        before = self.server.metrics()["vlm_completion_tokens_total"]
        self.last_reply().find_element("css selector", "button.regenerate").click()
        self.wait_until(lambda: self.server.metrics()["vlm_completion_tokens_total"] > before, "a second reply")
        self.assertEqual(self.wait_finished(self.last_reply()), "done")
        self.assertEqual(self.messages(), [("user", "Question one"), ("assistant", "<script>")])

        user = self.find_all("li.message.user")[-1]
        user.find_element("css selector", "button.edit").click()
        box = self.find("li.message.user .edit-box")
        box.clear()
        box.send_keys("Question one, edited")
        self.find("li.message.user .edit-send").click()
        self.wait_until(lambda: len(self.find_all("li.message.assistant")) == 1 and
                        self.reply_state(self.last_reply()) == "done", "the edited message's reply")
        self.assertEqual(self.messages(), [("user", "Question one, edited"), ("assistant", "<script>")])
        self.driver.refresh()
        self.open_page(new_chat=False)
        self.assertEqual(self.messages(), [("user", "Question one, edited"), ("assistant", "<script>")])

    def test_the_sampler_settings_are_sent(self):
        self.open_page()
        self.driver.execute_script("""
            window.__bodies = [];
            const original = window.fetch;
            window.fetch = (url, options) => {
              if (String(url).endsWith('/v1/chat/completions')) window.__bodies.push(JSON.parse(options.body));
              return original(url, options);
            };""")
        values = {"#max-tokens": 16, "#temperature": 0.7, "#top-p": 0.9, "#top-k": 40, "#min-p": 0.05,
                  "#repetition-penalty": 1.1, "#presence-penalty": 0.5, "#frequency-penalty": -0.5, "#seed": 1234}
        for css, value in values.items():
            self.set_field(css, value)
        self.set_field("#stop-strings", "never\nnor this")
        reply = self.send("Settings")
        self.assertEqual(self.wait_finished(reply), "done", reply.text)
        body = self.driver.execute_script("return window.__bodies[0]")
        self.assertEqual({key: body[key] for key in ("max_tokens", "temperature", "top_p", "top_k", "min_p",
                                                      "repetition_penalty", "presence_penalty", "frequency_penalty",
                                                      "seed", "stop")},
                         {"max_tokens": 16, "temperature": 0.7, "top_p": 0.9, "top_k": 40, "min_p": 0.05,
                          "repetition_penalty": 1.1, "presence_penalty": 0.5, "frequency_penalty": -0.5,
                          "seed": 1234, "stop": ["never", "nor this"]})
        self.assertTrue(body["stream"] and body["return_progress"])
        # A value the API refuses is named before anything is sent.
        self.set_field("#top-p", 3)
        self.find("#prompt").send_keys("again")
        self.find("#send").click()
        self.wait_until(lambda: "Top p" in self.find("#composer-note").text, "the page to name the bad setting")
        self.assertEqual(len(self.driver.execute_script("return window.__bodies")), 1)
        for css in values:
            self.set_field(css, "")
        self.set_field("#stop-strings", "")

    def test_the_progress_of_a_long_prefill(self):
        self.open_page()
        # Every state the indicator is in, as the page shows it.
        self.driver.execute_script("""
            window.__progress = [];
            new MutationObserver(() => {
              for (const box of document.querySelectorAll('#log .prompt-progress'))
                window.__progress.push([box.dataset.percent, box.querySelector('.progress-label').textContent]);
            }).observe(document.getElementById('log'), {subtree: true, childList: true, characterData: true, attributes: true});""")
        prompt = "hello world " * 300  # about 1,500 tokens
        self.driver.execute_script("document.getElementById('prompt').value = arguments[0];", prompt)
        before = self.server.metrics()["vlm_prompt_tokens_total"]
        self.find("#send").click()
        reply = self.wait_until(lambda: self.last_reply(), "the reply")
        # A picture of it midway, when the machine is slow enough to catch one.
        while self.reply_state(reply) == "streaming":
            boxes = reply.find_elements("css selector", ".prompt-progress[data-percent]")
            if boxes and (boxes[0].get_attribute("data-percent") or "0") not in ("0", "100"):
                self.screenshot("chat-progress")
                break
            time.sleep(0.05)
        self.assertEqual(self.wait_finished(reply), "done", reply.text)
        prompt_tokens = int(self.server.metrics()["vlm_prompt_tokens_total"] - before)
        self.assertGreater(prompt_tokens, 1000)
        seen = self.driver.execute_script("return window.__progress")
        percents = sorted({int(percent) for percent, _ in seen if percent})
        self.assertTrue(any(0 < percent < 100 for percent in percents), seen[:20])
        during = [label for percent, label in seen if percent and 0 < int(percent) < 100]
        self.assertRegex(during[-1], r"^Reading the prompt: \d+%% \(\d+ of %d tokens(, \d+ from the cache)?\)" % prompt_tokens)
        self.assertTrue(any(" left" in label for label in during), during)
        self.assertEqual(reply.find_elements("css selector", ".prompt-progress"), [])
        meta = reply.find_element("css selector", ".meta").text
        self.assertIn(f"{prompt_tokens} prompt + 10 completion tokens", meta)
        self.assertRegex(meta, r"prompt \d+ tokens/s")
        self.screenshot("chat-progress-done")


class AudioPageTests(PageTestCase):
    """A model with an audio path (the tiny Phi-4-multimodal): audio files
    the API takes are attached, sent, and shown in the bubble as players."""
    arguments = ()

    @classmethod
    def make_model(cls, scratch):
        sys.path.insert(0, os.path.join(SOURCE, "tools", "oracle"))
        import tokenizer_files
        out = os.path.join(scratch, "phi4_multimodal")
        status = tokenizer_files.unpack(os.path.join(SOURCE, "tests", "models", "phi4_multimodal"), out,
                                        os.path.join(os.path.dirname(os.path.dirname(FIXTURES)), "tokenizers"))
        if status == tokenizer_files.SKIP:
            raise unittest.SkipTest("no-fixtures: the Phi-4 tokenizer patch needs the shared tokenizers")
        if status:
            raise AssertionError(f"unpacking the phi4_multimodal model failed ({status})")
        return out

    def test_audio_is_sent_and_shown_in_its_bubble(self):
        self.open_page()
        self.assertIn("audio", self.find("#capabilities").text)
        accept = self.find("#file-input").get_attribute("accept")
        for kind in ("audio/wav", "audio/flac", "audio/ogg", "audio/mpeg"):
            self.assertIn(kind, accept)
        audio = os.path.join(os.path.dirname(FIXTURES), "audio")
        for name in ("speech_quick_fox_16k.flac", "speech_quick_fox.mp3"):
            path = os.path.realpath(os.path.join(audio, name))
            if not os.path.exists(path):
                raise unittest.SkipTest(f"no-fixtures: {path} is absent")
            self.find("#file-input").send_keys(path)
        self.wait_until(lambda: len(self.find_all("#attachments li")) == 2, "the clips to be attached")
        self.set_field("#max-tokens", 4)
        reply = self.send("What is said?")
        self.assertEqual(self.wait_finished(reply), "done", reply.text)
        user = self.find_all("li.message.user")[-1]
        players = user.find_elements("css selector", ".audio-clips audio")
        self.assertEqual(len(players), 2)
        self.assertTrue(players[0].get_attribute("src").startswith("data:audio/flac;base64,"))
        self.assertTrue(players[1].get_attribute("src").startswith("data:audio/mpeg;base64,"))
        self.assertTrue(self.driver.execute_script("return arguments[0].controls", players[0]))
        meta = reply.find_element("css selector", ".meta").text
        self.assertRegex(meta, r"\(\d+ audio\)")
        # A file of another audio type is refused by name before sending.
        self.driver.execute_script("""
            const transfer = new DataTransfer();
            transfer.items.add(new File([new Uint8Array(8)], 'clip.aac', {type: 'audio/aac'}));
            const target = document.getElementById('chat');
            for (const kind of ['dragenter', 'dragover', 'drop'])
              target.dispatchEvent(new DragEvent(kind, {dataTransfer: transfer, bubbles: true, cancelable: true}));""")
        self.wait_until(lambda: "audio/aac is not an audio format the server takes" in self.find("#composer-note").text,
                        "the page to refuse the AAC file")
        self.screenshot("chat-audio")


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
