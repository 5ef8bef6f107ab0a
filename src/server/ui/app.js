// The chat page of `vlm serve`: a client of the server's public API only
// (GET /v1/models, POST /v1/chat/completions with SSE streaming), with the
// --api-key when the user gives one. Model text and error messages are
// always inserted as text, never as HTML.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const elements = {
    modelName: $("model-name"), connection: $("connection"), capabilities: $("capabilities"),
    log: $("log"), emptyHint: $("empty-hint"), composer: $("composer"), prompt: $("prompt"),
    send: $("send"), stop: $("stop"), attach: $("attach"), fileInput: $("file-input"),
    attachments: $("attachments"), note: $("composer-note"), dropOverlay: $("drop-overlay"),
    apiKey: $("api-key"), systemPrompt: $("system-prompt"), maxTokens: $("max-tokens"),
    temperature: $("temperature"), newChat: $("new-chat"), settingsToggle: $("settings-toggle"),
    sidePanel: $("side-panel"), announcer: $("announcer"),
  };

  const AUDIO_FORMATS = { "audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3" };

  const state = {
    model: null,            // the /v1/models entry
    inputs: ["text"],       // capabilities.modalities.input
    history: [],            // messages sent so far (OpenAI format), failed turns left out
    attachments: [],        // {kind: "image"|"audio", name, url, data, format}
    controller: null,       // the AbortController of the reply in flight
  };

  // ---------------------------------------------------------------- settings

  function loadSettings() {
    elements.apiKey.value = sessionStorage.getItem("vlm.apiKey") || "";
    elements.systemPrompt.value = localStorage.getItem("vlm.systemPrompt") || "";
    elements.maxTokens.value = localStorage.getItem("vlm.maxTokens") || "";
    elements.temperature.value = localStorage.getItem("vlm.temperature") || "";
  }

  function saveSettings() {
    sessionStorage.setItem("vlm.apiKey", elements.apiKey.value);
    localStorage.setItem("vlm.systemPrompt", elements.systemPrompt.value);
    localStorage.setItem("vlm.maxTokens", elements.maxTokens.value);
    localStorage.setItem("vlm.temperature", elements.temperature.value);
  }

  function headers(json) {
    const result = {};
    if (json) result["Content-Type"] = "application/json";
    const key = elements.apiKey.value.trim();
    if (key) result.Authorization = "Bearer " + key;
    return result;
  }

  function announce(text) {
    elements.announcer.textContent = "";
    // A change the screen reader notices even when the text repeats.
    setTimeout(() => { elements.announcer.textContent = text; }, 50);
  }

  // ------------------------------------------------------------ API errors

  // The OpenAI error object of a response, or one made from what came back.
  async function errorOf(response) {
    let body = null;
    try { body = await response.json(); } catch (_) { /* not JSON */ }
    if (body && body.error && typeof body.error === "object") return body.error;
    return { message: `The server answered ${response.status} ${response.statusText}.`, type: "http_error", code: null, param: null };
  }

  function renderError(container, error, status) {
    const box = document.createElement("div");
    box.className = "error";
    box.setAttribute("role", "alert");
    const code = document.createElement("span");
    code.className = "error-code";
    const parts = [];
    if (status) parts.push(String(status));
    if (error.type) parts.push(error.type);
    if (error.code) parts.push(error.code);
    code.textContent = (parts.length ? parts.join(" · ") : "error") + ": ";
    const message = document.createElement("span");
    message.className = "error-message";
    message.textContent = error.message || "unknown error";
    box.append(code, message);
    if (error.param && !(error.message || "").includes(error.param)) {
      const param = document.createElement("span");
      param.className = "error-param";
      param.textContent = ` (${error.param})`;
      box.append(param);
    }
    container.append(box);
    return box;
  }

  // ------------------------------------------------------------ the model

  function addCapability(term, value) {
    const dt = document.createElement("dt");
    dt.textContent = term;
    const dd = document.createElement("dd");
    dd.textContent = value;
    elements.capabilities.append(dt, dd);
  }

  function showModel(model) {
    const capabilities = model.capabilities || {};
    const modalities = capabilities.modalities || {};
    state.model = model;
    state.inputs = Array.isArray(modalities.input) ? modalities.input : ["text"];
    elements.modelName.textContent = model.id;
    elements.capabilities.replaceChildren();
    addCapability("Model", model.id);
    if (capabilities.model_type) addCapability("Type", capabilities.model_type);
    addCapability("Input", state.inputs.join(", "));
    addCapability("Output", (modalities.output || ["text"]).join(", "));
    if (capabilities.backend) addCapability("Backend", capabilities.backend);
    if (capabilities.vision_backend) addCapability("Vision on", capabilities.vision_backend);
    if (capabilities.capacity) addCapability("Context", `${capabilities.capacity} positions per slot`);
    if (capabilities.slots) addCapability("Slots", String(capabilities.slots));
    if (capabilities.queue_limit) addCapability("Queue", `${capabilities.queue_limit} requests`);
    addCapability("Chat template", capabilities.chat_template === false ? "none" : "yes");
    updateAttachAbility();
    if (capabilities.chat_template === false) {
      setConnection("This model has no chat template: the page needs /v1/chat/completions.", true);
      elements.send.disabled = true;
    } else {
      setConnection("Ready.", false);
      elements.send.disabled = false;
    }
  }

  function acceptedTypes() {
    const types = [];
    if (state.inputs.includes("image")) types.push("image/*");
    if (state.inputs.includes("audio")) types.push(...Object.keys(AUDIO_FORMATS));
    return types;
  }

  function updateAttachAbility() {
    const types = acceptedTypes();
    elements.fileInput.accept = types.join(",");
    elements.attach.disabled = types.length === 0;
    const what = [state.inputs.includes("image") ? "images" : null, state.inputs.includes("audio") ? "audio" : null].filter(Boolean);
    elements.attach.textContent = what.length ? `Attach ${what.join(" or ")}…` : "Attach…";
    elements.attach.title = types.length ? "" : "This model takes text only";
  }

  function setConnection(text, problem) {
    elements.connection.textContent = text;
    elements.connection.classList.toggle("problem", problem);
  }

  let modelsRequest = 0;
  async function loadModel() {
    const ticket = ++modelsRequest;
    let response;
    try {
      response = await fetch("/v1/models", { headers: headers(false), cache: "no-store" });
    } catch (error) {
      if (ticket === modelsRequest) setConnection(`Cannot reach the server: ${error.message}`, true);
      return;
    }
    if (ticket !== modelsRequest) return;
    if (!response.ok) {
      const error = await errorOf(response);
      if (response.status === 401) {
        setConnection("This server needs an API key: enter it under Settings.", true);
        showSettings(true);
        elements.apiKey.focus();
      } else if (response.status === 503 && error.code === "model_loading") {
        setConnection("The model is still loading…", true);
        setTimeout(loadModel, 2000);
      } else {
        setConnection(`/v1/models: ${error.message}`, true);
      }
      return;
    }
    const body = await response.json();
    if (!body.data || !body.data.length) {
      setConnection("The server lists no model.", true);
      return;
    }
    showModel(body.data[0]);
  }

  // ------------------------------------------------------------ attachments

  function readAsDataURL(file) {
    return new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(reader.result);
      reader.onerror = () => reject(reader.error || new Error("cannot read the file"));
      reader.readAsDataURL(file);
    });
  }

  function note(text) { elements.note.textContent = text; }

  async function addFiles(files) {
    note("");
    for (const file of files) {
      const isAudio = file.type in AUDIO_FORMATS;
      const isImage = file.type.startsWith("image/");
      // Images are sent as they are: what the server makes of the bytes
      // (a broken or unsupported image) comes back as its error.
      if (isImage && !state.inputs.includes("image")) { note(`${file.name}: this model does not take images.`); continue; }
      if (isAudio && !state.inputs.includes("audio")) { note(`${file.name}: this model does not take audio.`); continue; }
      if (!isImage && !isAudio) { note(`${file.name}: not an image or audio file (${file.type || "unknown type"}).`); continue; }
      let url;
      try { url = await readAsDataURL(file); } catch (error) { note(`${file.name}: ${error.message}`); continue; }
      const attachment = { kind: isAudio ? "audio" : "image", name: file.name, url };
      if (isAudio) { attachment.format = AUDIO_FORMATS[file.type]; attachment.data = url.slice(url.indexOf(",") + 1); }
      state.attachments.push(attachment);
    }
    renderAttachments();
  }

  function renderAttachments() {
    elements.attachments.replaceChildren();
    state.attachments.forEach((attachment, index) => {
      const item = document.createElement("li");
      item.className = "attachment";
      if (attachment.kind === "image") {
        const image = document.createElement("img");
        image.src = attachment.url;
        image.alt = "";
        item.append(image);
      }
      const name = document.createElement("span");
      name.textContent = attachment.name;
      const remove = document.createElement("button");
      remove.type = "button";
      remove.textContent = "✕";
      remove.setAttribute("aria-label", `Remove ${attachment.name}`);
      remove.addEventListener("click", () => { state.attachments.splice(index, 1); renderAttachments(); elements.prompt.focus(); });
      item.append(name, remove);
      elements.attachments.append(item);
    });
  }

  // ------------------------------------------------------------ the log

  function addMessage(role) {
    elements.emptyHint.hidden = true;
    const item = document.createElement("li");
    item.className = `message ${role}`;
    const label = document.createElement("p");
    label.className = "role";
    label.textContent = role === "user" ? "You" : (state.model ? state.model.id : "Model");
    const content = document.createElement("p");
    content.className = "content";
    item.append(label, content);
    elements.log.append(item);
    return item;
  }

  function scrollToEnd() { elements.log.scrollTop = elements.log.scrollHeight; }

  function seconds(milliseconds) { return (milliseconds / 1000).toFixed(2) + " s"; }

  function describeTimings(reply) {
    const parts = [];
    if (reply.usage) {
      const usage = reply.usage;
      const details = usage.prompt_tokens_details || {};
      const image = details.image_tokens ? ` (${details.image_tokens} image)` : "";
      parts.push(`${usage.prompt_tokens} prompt${image} + ${usage.completion_tokens} completion tokens`);
    } else if (reply.chunks) {
      parts.push(`${reply.chunks} chunks received`);
    }
    if (reply.firstAt !== null) parts.push(`first token ${seconds(reply.firstAt - reply.startedAt)}`);
    const completion = reply.usage ? reply.usage.completion_tokens : 0;
    if (reply.firstAt !== null && completion > 1 && reply.endedAt > reply.firstAt)
      parts.push(`${((completion - 1) / ((reply.endedAt - reply.firstAt) / 1000)).toFixed(1)} tokens/s`);
    parts.push(`total ${seconds(reply.endedAt - reply.startedAt)}`);
    if (reply.finishReason === "length") parts.push("stopped at the token limit");
    if (reply.stopped) parts.push("stopped");
    return parts.join(" · ");
  }

  // ------------------------------------------------------------ sending

  function userContent(text, attachments) {
    if (!attachments.length) return text;
    const parts = attachments.map((attachment) => attachment.kind === "image"
      ? { type: "image_url", image_url: { url: attachment.url } }
      : { type: "input_audio", input_audio: { data: attachment.data, format: attachment.format } });
    if (text) parts.push({ type: "text", text });
    return parts;
  }

  function requestBody(messages) {
    const body = { model: state.model ? state.model.id : undefined, messages, stream: true, stream_options: { include_usage: true } };
    const maxTokens = parseInt(elements.maxTokens.value, 10);
    if (Number.isFinite(maxTokens) && maxTokens > 0) body.max_tokens = maxTokens;
    const temperature = parseFloat(elements.temperature.value);
    if (Number.isFinite(temperature)) body.temperature = temperature;
    return body;
  }

  function setBusy(busy) {
    elements.send.hidden = busy;
    elements.stop.hidden = !busy;
    elements.prompt.setAttribute("aria-busy", busy ? "true" : "false");
  }

  // Reads an SSE body, calling onEvent with each event's data (a string).
  async function readEvents(response, onEvent) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block.split("\n").filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5)).join("\n");
        if (data && onEvent(data) === false) return;
      }
    }
  }

  async function send() {
    if (state.controller) return;
    const text = elements.prompt.value.trim();
    const attachments = state.attachments.slice();
    if (!text && !attachments.length) { note("Write a message or attach something first."); return; }
    note("");
    saveSettings();

    const content = userContent(text, attachments);
    const userItem = addMessage("user");
    userItem.querySelector(".content").textContent = text;
    if (attachments.some((attachment) => attachment.kind === "image")) {
      const images = document.createElement("ul");
      images.className = "images";
      for (const attachment of attachments.filter((a) => a.kind === "image")) {
        const item = document.createElement("li");
        const image = document.createElement("img");
        image.src = attachment.url;
        image.alt = `attached image ${attachment.name}`;
        item.append(image);
        images.append(item);
      }
      userItem.insertBefore(images, userItem.querySelector(".content"));
    }
    elements.prompt.value = "";
    state.attachments = [];
    renderAttachments();

    const messages = [];
    const system = elements.systemPrompt.value.trim();
    if (system) messages.push({ role: "system", content: system });
    messages.push(...state.history, { role: "user", content });

    const replyItem = addMessage("assistant");
    const replyText = replyItem.querySelector(".content");
    replyItem.dataset.state = "streaming";
    replyItem.setAttribute("aria-busy", "true");
    const meta = document.createElement("p");
    meta.className = "meta";
    const reply = { startedAt: performance.now(), firstAt: null, endedAt: 0, usage: null, chunks: 0,
                    finishReason: null, stopped: false, text: "" };
    const controller = new AbortController();
    state.controller = controller;
    setBusy(true);
    scrollToEnd();

    // The text is redrawn at most once a frame: a fast model sends far more
    // chunks than a screen shows, and redrawing a long reply for each would
    // cost time quadratic in its length.
    let redraw = 0;
    const show = () => { redraw = 0; replyText.textContent = reply.text; scrollToEnd(); };
    const showSoon = () => { if (!redraw) redraw = requestAnimationFrame(show); };
    let failure = null, failureStatus = 0, finished = false;
    try {
      const response = await fetch("/v1/chat/completions", {
        method: "POST", headers: headers(true), body: JSON.stringify(requestBody(messages)), signal: controller.signal,
      });
      if (!response.ok) {
        failureStatus = response.status;
        failure = await errorOf(response);
      } else {
        await readEvents(response, (data) => {
          if (data === "[DONE]") { finished = true; return false; }
          let event;
          try { event = JSON.parse(data); } catch (_) { failure = { message: "The server sent an event that is not JSON.", type: "client_error" }; return false; }
          if (event.error) { failure = event.error; return false; }
          if (event.usage) reply.usage = event.usage;
          for (const choice of event.choices || []) {
            const delta = choice.delta || {};
            if (delta.content) {
              if (reply.firstAt === null) reply.firstAt = performance.now();
              reply.text += delta.content;
              reply.chunks++;
              showSoon();
            }
            if (choice.finish_reason) reply.finishReason = choice.finish_reason;
          }
          return true;
        });
        if (!finished && !failure) failure = { message: "The connection closed before the reply finished.", type: "connection_error" };
      }
    } catch (error) {
      if (error.name === "AbortError") reply.stopped = true;
      else failure = { message: `The request failed: ${error.message}`, type: "connection_error" };
    }
    reply.endedAt = performance.now();
    if (redraw) cancelAnimationFrame(redraw);
    show();
    state.controller = null;
    setBusy(false);
    replyItem.removeAttribute("aria-busy");

    if (failure) {
      replyItem.dataset.state = "error";
      if (!reply.text) replyText.remove();
      renderError(replyItem, failure, failureStatus);
      announce(`Error: ${failure.message}`);
      // The failed turn is not part of the conversation the model sees.
    } else {
      replyItem.dataset.state = reply.stopped ? "stopped" : "done";
      state.history.push({ role: "user", content }, { role: "assistant", content: reply.text });
      announce(reply.stopped ? "Reply stopped." : `Reply finished: ${reply.text.length} characters.`);
    }
    meta.textContent = describeTimings(reply);
    replyItem.append(meta);
    scrollToEnd();
    elements.prompt.focus();
  }

  function stop() {
    if (state.controller) state.controller.abort();
  }

  function newChat() {
    stop();
    state.history = [];
    state.attachments = [];
    renderAttachments();
    elements.log.replaceChildren();
    elements.emptyHint.hidden = false;
    note("");
    elements.prompt.focus();
  }

  function showSettings(visible) {
    elements.sidePanel.hidden = !visible;
    elements.settingsToggle.setAttribute("aria-expanded", visible ? "true" : "false");
  }

  // ------------------------------------------------------------ wiring

  elements.composer.addEventListener("submit", (event) => { event.preventDefault(); send(); });
  elements.prompt.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) { event.preventDefault(); send(); }
  });
  elements.stop.addEventListener("click", stop);
  elements.newChat.addEventListener("click", newChat);
  elements.attach.addEventListener("click", () => elements.fileInput.click());
  elements.fileInput.addEventListener("change", () => { addFiles(Array.from(elements.fileInput.files)); elements.fileInput.value = ""; });
  elements.settingsToggle.addEventListener("click", () => showSettings(elements.sidePanel.hidden));
  elements.apiKey.addEventListener("change", () => { saveSettings(); loadModel(); });
  for (const field of [elements.systemPrompt, elements.maxTokens, elements.temperature]) field.addEventListener("change", saveSettings);
  document.addEventListener("keydown", (event) => { if (event.key === "Escape" && state.controller) stop(); });

  // Drag and drop onto the whole chat area; paste from the clipboard.
  let dragDepth = 0;
  const chat = $("chat");
  const hasFiles = (event) => event.dataTransfer && Array.from(event.dataTransfer.types || []).includes("Files");
  chat.addEventListener("dragenter", (event) => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    if (dragDepth++ === 0) { elements.composer.classList.add("dragging"); elements.dropOverlay.hidden = false; }
  });
  chat.addEventListener("dragover", (event) => { if (hasFiles(event)) event.preventDefault(); });
  chat.addEventListener("dragleave", () => {
    if (dragDepth > 0 && --dragDepth === 0) { elements.composer.classList.remove("dragging"); elements.dropOverlay.hidden = true; }
  });
  chat.addEventListener("drop", (event) => {
    if (!event.dataTransfer) return;
    event.preventDefault();
    dragDepth = 0;
    elements.composer.classList.remove("dragging");
    elements.dropOverlay.hidden = true;
    addFiles(Array.from(event.dataTransfer.files || []));
  });
  elements.prompt.addEventListener("paste", (event) => {
    const files = Array.from((event.clipboardData && event.clipboardData.files) || []);
    if (files.length) { event.preventDefault(); addFiles(files); }
  });

  loadSettings();
  if (window.matchMedia && window.matchMedia("(max-width: 48rem)").matches) showSettings(false);
  elements.send.disabled = true;
  loadModel();
})();
