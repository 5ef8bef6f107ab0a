// The chat page of `vlm serve`: a client of the server's public API only
// (GET /v1/models, POST /v1/chat/completions with SSE streaming and
// return_progress), with the --api-key when the user gives one.
//
// Conversations are kept in this browser (IndexedDB, "vlm-chat"), listed
// on the left, renamed, deleted and exported as JSON. Model text goes
// through markdown.js, which builds nodes and never parses HTML; error
// messages and the user's own text are inserted as text.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const elements = {
    modelName: $("model-name"), connection: $("connection"), capabilities: $("capabilities"),
    log: $("log"), emptyHint: $("empty-hint"), composer: $("composer"), prompt: $("prompt"),
    send: $("send"), stop: $("stop"), attach: $("attach"), fileInput: $("file-input"),
    attachments: $("attachments"), note: $("composer-note"), dropOverlay: $("drop-overlay"),
    apiKey: $("api-key"), systemPrompt: $("system-prompt"), stopStrings: $("stop-strings"),
    newChat: $("new-chat"), settingsToggle: $("settings-toggle"), sidePanel: $("side-panel"),
    historyToggle: $("history-toggle"), historyPanel: $("history-panel"), historyNote: $("history-note"),
    conversations: $("conversations"), announcer: $("announcer"),
  };
  const markdown = window.vlmMarkdown;

  // The audio the API takes as input_audio.format: WAV, FLAC, Ogg Vorbis
  // and MP3 (the server checks the bytes are the format named).
  const AUDIO_TYPES = {
    "audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/vnd.wave": "wav",
    "audio/flac": "flac", "audio/x-flac": "flac",
    "audio/ogg": "ogg", "audio/vorbis": "ogg", "audio/x-vorbis+ogg": "ogg",
    "audio/mpeg": "mp3", "audio/mp3": "mp3",
  };
  const AUDIO_EXTENSIONS = { wav: "wav", flac: "flac", ogg: "ogg", oga: "ogg", mp3: "mp3" };
  const AUDIO_MIME = { wav: "audio/wav", flac: "audio/flac", ogg: "audio/ogg", mp3: "audio/mpeg" };

  // The sampler settings the API accepts, each sent only when filled in.
  const SAMPLER_FIELDS = [
    { id: "max-tokens", key: "max_tokens", integer: true, valid: (v) => v >= 1 },
    { id: "temperature", key: "temperature", valid: (v) => v >= 0 && v <= 2 },
    { id: "top-p", key: "top_p", valid: (v) => v > 0 && v <= 1 },
    { id: "top-k", key: "top_k", integer: true, valid: (v) => v >= -1 },
    { id: "min-p", key: "min_p", valid: (v) => v >= 0 && v <= 1 },
    { id: "repetition-penalty", key: "repetition_penalty", valid: (v) => v > 0 },
    { id: "presence-penalty", key: "presence_penalty", valid: (v) => v >= -2 && v <= 2 },
    { id: "frequency-penalty", key: "frequency_penalty", valid: (v) => v >= -2 && v <= 2 },
    { id: "seed", key: "seed", integer: true, valid: () => true },
  ];
  const MAX_STOP_STRINGS = 4;

  // What an assistant message takes from a streamed delta: field -> key.
  // delta.reasoning_content comes from a server run with --reasoning-parser.
  const DELTA_FIELDS = [["reasoning_content", "reasoning"], ["content", "text"]];

  const state = {
    model: null,            // the /v1/models entry
    inputs: ["text"],       // capabilities.modalities.input
    conversation: null,     // the one shown: {id, title, created, updated, messages}
    conversations: [],      // every saved one, newest first
    attachments: [],        // {kind: "image"|"audio", name, url, format}
    controller: null,       // the AbortController of the reply in flight
    editing: false,         // the last user message is being edited
  };

  // ---------------------------------------------------------------- storage

  // Conversations in IndexedDB; in memory only when it is unavailable (a
  // private window may refuse it), which the list says.
  const store = (() => {
    let db = null;
    const memory = new Map();
    function open() {
      return new Promise((resolve) => {
        let request;
        try { request = window.indexedDB && indexedDB.open("vlm-chat", 1); } catch (_) { request = null; }
        if (!request) { resolve(false); return; }
        request.onupgradeneeded = () => request.result.createObjectStore("conversations", { keyPath: "id" });
        request.onsuccess = () => { db = request.result; resolve(true); };
        request.onerror = () => resolve(false);
        request.onblocked = () => resolve(false);
      });
    }
    function run(mode, work) {
      return new Promise((resolve, reject) => {
        const transaction = db.transaction("conversations", mode);
        const request = work(transaction.objectStore("conversations"));
        transaction.oncomplete = () => resolve(request ? request.result : undefined);
        transaction.onerror = () => reject(transaction.error);
        transaction.onabort = () => reject(transaction.error || new Error("the transaction was aborted"));
      });
    }
    return {
      open,
      get persistent() { return db !== null; },
      async list() {
        if (db) for (const conversation of await run("readonly", (s) => s.getAll())) memory.set(conversation.id, conversation);
        return [...memory.values()];
      },
      async put(conversation) {
        memory.set(conversation.id, conversation);
        if (db) await run("readwrite", (s) => s.put(conversation));
      },
      async remove(id) {
        memory.delete(id);
        if (db) await run("readwrite", (s) => s.delete(id));
      },
    };
  })();

  function newId() {
    if (window.crypto && crypto.randomUUID && window.isSecureContext) return crypto.randomUUID();
    return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  }

  function newConversation() {
    const now = Date.now();
    return { id: newId(), title: "New chat", titled: false, created: now, updated: now, messages: [] };
  }

  async function save(conversation) {
    conversation.updated = Date.now();
    if (!state.conversations.includes(conversation)) state.conversations.unshift(conversation);
    state.conversations.sort((a, b) => b.updated - a.updated);
    try {
      await store.put(conversation);
    } catch (error) {
      note(`This chat could not be saved: ${error.message}`);
    }
    renderConversationList();
  }

  // ---------------------------------------------------------------- settings

  function loadSettings() {
    elements.apiKey.value = sessionStorage.getItem("vlm.apiKey") || "";
    let saved = {};
    try { saved = JSON.parse(localStorage.getItem("vlm.settings") || "{}") || {}; } catch (_) { saved = {}; }
    elements.systemPrompt.value = saved.system || "";
    elements.stopStrings.value = saved.stop || "";
    for (const field of SAMPLER_FIELDS) $(field.id).value = saved[field.id] || "";
  }

  function saveSettings() {
    sessionStorage.setItem("vlm.apiKey", elements.apiKey.value);
    const saved = { system: elements.systemPrompt.value, stop: elements.stopStrings.value };
    for (const field of SAMPLER_FIELDS) saved[field.id] = $(field.id).value;
    localStorage.setItem("vlm.settings", JSON.stringify(saved));
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

  function note(text) { elements.note.textContent = text; }

  // ------------------------------------------------------------ API errors

  // The OpenAI error object of a response, or one made from what came back.
  async function errorOf(response) {
    let body = null;
    try { body = await response.json(); } catch (_) { /* not JSON */ }
    if (body && body.error && typeof body.error === "object") return body.error;
    return { message: `The server answered ${response.status} ${response.statusText}.`, type: "http_error", code: null, param: null };
  }

  function renderError(error, status) {
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
    if (state.inputs.includes("audio")) types.push(...Object.keys(AUDIO_TYPES), ...Object.keys(AUDIO_EXTENSIONS).map((e) => `.${e}`));
    return types;
  }

  function updateAttachAbility() {
    const types = acceptedTypes();
    elements.fileInput.accept = types.join(",");
    elements.attach.disabled = types.length === 0;
    const what = [state.inputs.includes("image") ? "images" : null, state.inputs.includes("audio") ? "audio" : null].filter(Boolean);
    elements.attach.textContent = what.length ? `Attach ${what.join(" or ")}…` : "Attach…";
    elements.attach.title = types.length ? "" : "This model takes text only";
    elements.attach.setAttribute("aria-describedby", "attach-help");
    $("attach-help").textContent = state.inputs.includes("audio")
      ? "or drop or paste files here (audio: WAV, FLAC, Ogg Vorbis, MP3)" : "or drop or paste files here";
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
        showPanel(elements.sidePanel, elements.settingsToggle, true);
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

  function audioFormatOf(file) {
    if (AUDIO_TYPES[file.type]) return AUDIO_TYPES[file.type];
    const extension = (file.name.split(".").pop() || "").toLowerCase();
    return (!file.type || file.type === "application/octet-stream" || file.type.startsWith("audio/")) ? AUDIO_EXTENSIONS[extension] || null : null;
  }

  async function addFiles(files) {
    note("");
    for (const file of files) {
      const format = audioFormatOf(file);
      const isImage = file.type.startsWith("image/");
      // Images and clips are sent as they are: what the server makes of the
      // bytes (broken, or not the format named) comes back as its error.
      if (isImage && !state.inputs.includes("image")) { note(`${file.name}: this model does not take images.`); continue; }
      if (format && !state.inputs.includes("audio")) { note(`${file.name}: this model does not take audio.`); continue; }
      if (!isImage && !format) {
        note(file.type.startsWith("audio/")
          ? `${file.name}: ${file.type} is not an audio format the server takes (WAV, FLAC, Ogg Vorbis, MP3).`
          : `${file.name}: not an image or audio file (${file.type || "unknown type"}).`);
        continue;
      }
      let url;
      try { url = await readAsDataURL(file); } catch (error) { note(`${file.name}: ${error.message}`); continue; }
      const attachment = { kind: format ? "audio" : "image", name: file.name, url };
      if (format) attachment.format = format;
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
      name.textContent = attachment.kind === "audio" ? `♪ ${attachment.name}` : attachment.name;
      const remove = document.createElement("button");
      remove.type = "button";
      remove.textContent = "✕";
      remove.setAttribute("aria-label", `Remove ${attachment.name}`);
      remove.addEventListener("click", () => { state.attachments.splice(index, 1); renderAttachments(); elements.prompt.focus(); });
      item.append(name, remove);
      elements.attachments.append(item);
    });
  }

  // ------------------------------------------------------------ the list of chats

  function formatDate(time) {
    const date = new Date(time);
    const today = new Date();
    return date.toDateString() === today.toDateString()
      ? date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
      : date.toLocaleDateString([], { year: "numeric", month: "short", day: "numeric" });
  }

  function button(label, className, onClick, ariaLabel) {
    const node = document.createElement("button");
    node.type = "button";
    node.className = className;
    node.textContent = label;
    if (ariaLabel) node.setAttribute("aria-label", ariaLabel);
    node.addEventListener("click", onClick);
    return node;
  }

  function renderConversationList() {
    const list = elements.conversations;
    list.replaceChildren();
    elements.historyNote.textContent = store.persistent
      ? "Kept in this browser only."
      : "This browser keeps no storage for the page: chats last until the tab closes.";
    for (const conversation of state.conversations) {
      const item = document.createElement("li");
      item.className = "conversation";
      item.dataset.id = conversation.id;
      const current = state.conversation && state.conversation.id === conversation.id;
      if (current) item.setAttribute("aria-current", "true");
      const open = document.createElement("button");
      open.type = "button";
      open.className = "conversation-open";
      const title = document.createElement("span");
      title.className = "conversation-title";
      title.textContent = conversation.title;
      const date = document.createElement("span");
      date.className = "conversation-date";
      date.textContent = formatDate(conversation.updated);
      open.append(title, date);
      open.addEventListener("click", () => selectConversation(conversation));
      const actions = document.createElement("div");
      actions.className = "conversation-actions";
      actions.append(
        button("Rename", "link-button rename", () => startRename(item, conversation), `Rename ${conversation.title}`),
        button("Export", "link-button export", () => exportConversation(conversation), `Export ${conversation.title} as JSON`),
        deleteButton(conversation));
      item.append(open, actions);
      list.append(item);
    }
  }

  // Two clicks within a few seconds: a chat is not lost to a stray one.
  function deleteButton(conversation) {
    let armed = null;
    const node = button("Delete", "link-button delete", async () => {
      if (!armed) {
        node.textContent = "Delete?";
        node.classList.add("armed");
        armed = setTimeout(() => { armed = null; node.textContent = "Delete"; node.classList.remove("armed"); }, 4000);
        return;
      }
      clearTimeout(armed);
      await deleteConversation(conversation);
    }, `Delete ${conversation.title}`);
    return node;
  }

  async function deleteConversation(conversation) {
    if (state.conversation === conversation) stop();
    state.conversations = state.conversations.filter((c) => c !== conversation);
    try { await store.remove(conversation.id); } catch (error) { note(`The chat could not be deleted: ${error.message}`); }
    if (state.conversation === conversation) showConversation(state.conversations[0] || newConversation());
    renderConversationList();
    announce(`Deleted ${conversation.title}.`);
  }

  function startRename(item, conversation) {
    const open = item.querySelector(".conversation-open");
    const input = document.createElement("input");
    input.type = "text";
    input.className = "rename-input";
    input.value = conversation.title;
    input.setAttribute("aria-label", "New name");
    let done = false;
    const finish = async (keep) => {
      if (done) return;
      done = true;
      const title = input.value.trim();
      if (keep && title) {
        conversation.title = title;
        conversation.titled = true;
        await save(conversation);
      } else {
        renderConversationList();
      }
    };
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") { event.preventDefault(); finish(true); }
      if (event.key === "Escape") { event.preventDefault(); finish(false); }
    });
    input.addEventListener("blur", () => finish(true));
    open.replaceWith(input);
    input.focus();
    input.select();
  }

  function exportConversation(conversation) {
    const data = JSON.stringify({ format: "vlm-chat", version: 1, exported: new Date().toISOString(), conversation }, null, 2);
    const url = URL.createObjectURL(new Blob([data], { type: "application/json" }));
    const anchor = document.createElement("a");
    anchor.href = url;
    const slug = conversation.title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 40) || "chat";
    anchor.download = `vlm-chat-${slug}.json`;
    document.body.append(anchor);
    anchor.click();
    anchor.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }

  function selectConversation(conversation) {
    if (state.conversation === conversation) return;
    stop();
    showConversation(conversation);
    elements.prompt.focus();
  }

  function showConversation(conversation) {
    state.conversation = conversation;
    state.editing = false;
    renderLog();
    renderConversationList();
  }

  // ------------------------------------------------------------ messages

  function seconds(milliseconds) { return (milliseconds / 1000).toFixed(2) + " s"; }

  // Token counts and speeds: the server's timings (the decode steps' own
  // time, not when chunks happened to arrive), the client's total.
  function describeTimings(message) {
    const parts = [];
    const usage = message.usage;
    if (usage) {
      const details = usage.prompt_tokens_details || {};
      const media = [details.image_tokens ? `${details.image_tokens} image` : null,
                     details.audio_tokens ? `${details.audio_tokens} audio` : null].filter(Boolean);
      parts.push(`${usage.prompt_tokens} prompt${media.length ? ` (${media.join(", ")})` : ""} + ${usage.completion_tokens} completion tokens`);
      if (details.cached_tokens) parts.push(`${details.cached_tokens} from the cache`);
    }
    const timings = message.timings;
    if (timings) {
      if (timings.first_token_ms) parts.push(`first token ${seconds(timings.first_token_ms)}`);
      if (timings.prompt_n > 1 && timings.prompt_per_second) parts.push(`prompt ${Math.round(timings.prompt_per_second)} tokens/s`);
      if (timings.predicted_n > 1 && timings.predicted_per_second) parts.push(`${timings.predicted_per_second.toFixed(1)} tokens/s`);
    } else if (message.firstTokenMs != null) {
      parts.push(`first token ${seconds(message.firstTokenMs)}`);
    }
    if (message.elapsedMs != null) parts.push(`total ${seconds(message.elapsedMs)}`);
    if (message.finishReason === "length") parts.push("stopped at the token limit");
    if (message.state === "stopped") parts.push(message.interrupted ? "interrupted" : "stopped");
    return parts.join(" · ");
  }

  function roleLabel(message) {
    const label = document.createElement("p");
    label.className = "role";
    label.textContent = message.role === "user" ? "You" : message.model || (state.model ? state.model.id : "Model");
    return label;
  }

  function renderUser(item, message) {
    const images = message.attachments.filter((a) => a.kind === "image");
    const clips = message.attachments.filter((a) => a.kind === "audio");
    if (images.length) {
      const list = document.createElement("ul");
      list.className = "images";
      for (const attachment of images) {
        const entry = document.createElement("li");
        const image = document.createElement("img");
        image.src = attachment.url;
        image.alt = `attached image ${attachment.name}`;
        entry.append(image);
        list.append(entry);
      }
      item.append(list);
    }
    if (clips.length) {
      const list = document.createElement("ul");
      list.className = "audio-clips";
      for (const attachment of clips) {
        const entry = document.createElement("li");
        const player = document.createElement("audio");
        player.controls = true;
        player.preload = "metadata";
        // The data URL carries the file's own type; a generic one gets the format's.
        player.src = attachment.url.replace(/^data:(application\/octet-stream)?;/, `data:${AUDIO_MIME[attachment.format] || "audio/wav"};`);
        player.setAttribute("aria-label", `attached audio ${attachment.name}`);
        const name = document.createElement("span");
        name.className = "clip-name";
        name.textContent = attachment.name;
        entry.append(player, name);
        list.append(entry);
      }
      item.append(list);
    }
    const content = document.createElement("p");
    content.className = "content";
    content.textContent = message.text;
    item.append(content);
  }

  // The assistant message's parts, in order; each returns a node or null.
  // Each takes the message and its node from the last render (or null)
  // and returns the node to show, or null for none.
  const ASSISTANT_SECTIONS = [
    // The model's reasoning, collapsed: a <details> the reader opens. It
    // stays closed while streaming (the summary says it is thinking) and
    // keeps whatever the reader chose on later renders.
    ["reasoning", (message, node) => {
      if (!message.reasoning) return null;
      if (!node) {
        node = document.createElement("details");
        node.className = "reasoning";
        const summary = document.createElement("summary");
        const body = document.createElement("div");
        body.className = "reasoning-text markdown";
        node.append(summary, body);
      }
      const thinking = message.state === "streaming" && !message.text;
      node.querySelector("summary").textContent = thinking ? "Thinking…" : "Reasoning";
      markdown.update(node.querySelector(".reasoning-text"), message.reasoning, { streaming: thinking });
      return node;
    }],
    ["content", (message, node) => {
      if (!message.text && message.state === "error") return null;
      if (!node) { node = document.createElement("div"); node.className = "content markdown"; }
      markdown.update(node, message.text, { streaming: message.state === "streaming" });
      return node;
    }],
  ];

  function renderProgress(item, message) {
    let box = item.querySelector(":scope > .prompt-progress");
    const waiting = message.state === "streaming" && !message.text && !message.reasoning;
    if (!waiting) { if (box) box.remove(); return; }
    if (!box) {
      box = document.createElement("div");
      box.className = "prompt-progress";
      box.setAttribute("role", "status");
      const bar = document.createElement("progress");
      bar.max = 100;
      const label = document.createElement("span");
      label.className = "progress-label";
      box.append(bar, label);
      item.insertBefore(box, item.children[1] || null);
    }
    const bar = box.querySelector("progress");
    const label = box.querySelector(".progress-label");
    const progress = message.progress;
    if (!progress) {
      bar.removeAttribute("value");
      box.dataset.percent = "";
      label.textContent = "Waiting for the server…";
      return;
    }
    const percent = progress.total > 0 ? Math.floor((100 * progress.processed) / progress.total) : 100;
    bar.value = percent;
    box.dataset.percent = String(percent);
    if (progress.processed >= progress.total) {
      label.textContent = `Prompt read (${progress.total} tokens); waiting for the first token…`;
      return;
    }
    // The estimate: the positions left at the rate of those prefilled so far.
    const done = progress.processed - progress.cache;
    const rate = progress.time_ms > 0 ? done / progress.time_ms : 0;
    const cached = progress.cache ? `, ${progress.cache} from the cache` : "";
    let text = `Reading the prompt: ${percent}% (${progress.processed} of ${progress.total} tokens${cached})`;
    if (rate > 0) {
      const left = (progress.total - progress.processed) / rate / 1000;
      text += left < 1 ? " · less than a second left" : ` · about ${left < 90 ? `${Math.round(left)} s` : `${Math.round(left / 60)} min`} left`;
    }
    label.textContent = text;
  }

  function updateAssistant(item, message) {
    item.dataset.state = message.state;
    if (message.state === "streaming") item.setAttribute("aria-busy", "true");
    else item.removeAttribute("aria-busy");
    renderProgress(item, message);
    let anchor = item.querySelector(":scope > .prompt-progress") || item.querySelector(":scope > .role");
    for (const [name, section] of ASSISTANT_SECTIONS) {
      const old = item.querySelector(`:scope > .${name}`);
      const node = section(message, old);
      if (old && old !== node) old.remove();
      if (!node) continue;
      if (anchor.nextSibling !== node) anchor.after(node);
      anchor = node;
    }
    const oldError = item.querySelector(":scope > .error");
    if (oldError) oldError.remove();
    if (message.state === "error" && message.error) item.append(renderError(message.error, message.errorStatus));
    let meta = item.querySelector(":scope > .meta");
    if (message.state !== "streaming") {
      if (!meta) { meta = document.createElement("p"); meta.className = "meta"; }
      meta.textContent = describeTimings(message);
      item.append(meta);
    } else if (meta) meta.remove();
  }

  function renderActions(item, message, index) {
    const old = item.querySelector(":scope > .message-actions");
    if (old) old.remove();
    if (state.controller) return;
    const messages = state.conversation.messages;
    const last = index === messages.length - 1;
    const actions = document.createElement("div");
    actions.className = "message-actions";
    if (message.role === "assistant") {
      if (message.text) actions.append(markdown.copyButton(() => message.text, "Copy"));
      if (last) actions.append(button("Regenerate", "link-button regenerate", regenerate, "Regenerate this reply"));
    } else {
      const lastUser = messages.map((m) => m.role).lastIndexOf("user");
      if (index === lastUser) actions.append(button("Edit", "link-button edit", () => startEdit(item, message), "Edit your last message"));
    }
    if (actions.childElementCount) item.append(actions);
  }

  function renderMessage(message, index) {
    const item = document.createElement("li");
    item.className = `message ${message.role}`;
    item.append(roleLabel(message));
    if (message.role === "user") renderUser(item, message);
    else updateAssistant(item, message);
    renderActions(item, message, index);
    return item;
  }

  function renderLog() {
    const messages = state.conversation ? state.conversation.messages : [];
    elements.log.replaceChildren(...messages.map(renderMessage));
    elements.emptyHint.hidden = messages.length > 0;
    scrollToEnd();
  }

  function refreshActions() {
    const items = elements.log.children;
    state.conversation.messages.forEach((message, index) => { if (items[index]) renderActions(items[index], message, index); });
  }

  function scrollToEnd() { elements.log.scrollTop = elements.log.scrollHeight; }

  // ------------------------------------------------------------ sending

  function userContent(message) {
    if (!message.attachments.length) return message.text;
    const parts = message.attachments.map((attachment) => attachment.kind === "image"
      ? { type: "image_url", image_url: { url: attachment.url } }
      : { type: "input_audio", input_audio: { data: attachment.url.slice(attachment.url.indexOf(",") + 1), format: attachment.format } });
    if (message.text) parts.push({ type: "text", text: message.text });
    return parts;
  }

  // What the model sees: the system prompt, then every turn but the failed
  // ones (a reply that is an error, and the message it answered).
  function apiMessages(conversation) {
    const out = [];
    const system = elements.systemPrompt.value.trim();
    if (system) out.push({ role: "system", content: system });
    const messages = conversation.messages;
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i];
      if (message.role === "user") {
        const reply = messages[i + 1];
        if (reply && reply.role === "assistant" && reply.state === "error") { i++; continue; }
        out.push({ role: "user", content: userContent(message) });
      } else if (message.state !== "error") {
        out.push({ role: "assistant", content: message.text });
      }
    }
    return out;
  }

  function requestBody(messages) {
    const body = { model: state.model ? state.model.id : undefined, messages, stream: true,
                   stream_options: { include_usage: true }, return_progress: true };
    for (const field of SAMPLER_FIELDS) {
      const text = $(field.id).value.trim();
      if (!text) continue;
      const value = field.integer ? Number.parseInt(text, 10) : Number.parseFloat(text);
      if (Number.isFinite(value) && field.valid(value)) body[field.key] = value;
    }
    const stops = elements.stopStrings.value.split("\n").filter((line) => line.length > 0).slice(0, MAX_STOP_STRINGS);
    if (stops.length) body.stop = stops;
    return body;
  }

  // Fields the page cannot send as they are, named before anything is sent.
  function settingsProblem() {
    for (const field of SAMPLER_FIELDS) {
      const input = $(field.id);
      const text = input.value.trim();
      if (!text) continue;
      const value = field.integer ? Number(text) : Number.parseFloat(text);
      if (!Number.isFinite(value) || (field.integer && !Number.isInteger(value)) || !field.valid(value))
        return `${input.parentElement.firstChild.textContent.trim()}: ${text} is not a value the server takes.`;
    }
    const stops = elements.stopStrings.value.split("\n").filter((line) => line.length > 0);
    if (stops.length > MAX_STOP_STRINGS) return `Stop strings: at most ${MAX_STOP_STRINGS} (there are ${stops.length}).`;
    return null;
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

  // Streams the reply to the conversation's last user message.
  async function runTurn(conversation) {
    const messages = apiMessages(conversation);
    const reply = { role: "assistant", model: state.model ? state.model.id : null, text: "", reasoning: "", state: "streaming",
                    progress: null, usage: null, timings: null,
                    finishReason: null, error: null, errorStatus: 0, firstTokenMs: null, elapsedMs: null };
    conversation.messages.push(reply);
    const item = renderMessage(reply, conversation.messages.length - 1);
    elements.log.append(item);
    elements.emptyHint.hidden = true;
    const controller = new AbortController();
    state.controller = controller;
    setBusy(true);
    refreshActions();
    scrollToEnd();
    save(conversation);

    const startedAt = performance.now();
    // The text is redrawn at most once a frame: a fast model sends far more
    // chunks than a screen shows.
    let redraw = 0;
    const show = () => { redraw = 0; updateAssistant(item, reply); scrollToEnd(); };
    const showSoon = () => { if (!redraw) redraw = requestAnimationFrame(show); };
    let failure = null, failureStatus = 0, finished = false, stopped = false;
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
          if (event.timings) reply.timings = event.timings;
          if (event.prompt_progress && !reply.text) {
            // Shown at once, not once a frame: each is a step of real work.
            reply.progress = event.prompt_progress;
            renderProgress(item, reply);
          }
          for (const choice of event.choices || []) {
            const delta = choice.delta || {};
            for (const [field, key] of DELTA_FIELDS) {
              if (typeof delta[field] !== "string" || !delta[field]) continue;
              if (reply.firstTokenMs === null) reply.firstTokenMs = performance.now() - startedAt;
              reply[key] += delta[field];
              showSoon();
            }
            if (choice.finish_reason) reply.finishReason = choice.finish_reason;
          }
          return true;
        });
        if (!finished && !failure) failure = { message: "The connection closed before the reply finished.", type: "connection_error" };
      }
    } catch (error) {
      if (error.name === "AbortError") stopped = true;
      else failure = { message: `The request failed: ${error.message}`, type: "connection_error" };
    }
    if (redraw) cancelAnimationFrame(redraw);
    reply.elapsedMs = performance.now() - startedAt;
    reply.progress = null;
    if (failure) {
      reply.state = "error";
      reply.error = failure;
      reply.errorStatus = failureStatus;
    } else {
      reply.state = stopped ? "stopped" : "done";
    }
    // Saved before the bubble says it is done, so that once it does, the
    // list of chats and the bubble's actions stay as they are.
    await save(conversation);
    if (state.controller === controller) {
      state.controller = null;
      setBusy(false);
    }
    updateAssistant(item, reply);
    if (state.conversation === conversation) {
      refreshActions();
      scrollToEnd();
      elements.prompt.focus();
    }
    if (failure) announce(`Error: ${failure.message}`);
    else announce(stopped ? "Reply stopped." : `Reply finished: ${reply.text.length} characters.`);
  }

  function titleFrom(message) {
    const text = message.text.replace(/\s+/g, " ").trim();
    if (text) return text.length > 48 ? `${text.slice(0, 47)}…` : text;
    return message.attachments.length ? message.attachments[0].name : "New chat";
  }

  async function send() {
    if (state.controller) return;
    const text = elements.prompt.value.trim();
    const attachments = state.attachments.slice();
    if (!text && !attachments.length) { note("Write a message or attach something first."); return; }
    const problem = settingsProblem();
    if (problem) { note(problem); return; }
    note("");
    saveSettings();
    const conversation = state.conversation;
    const message = { role: "user", text, attachments };
    conversation.messages.push(message);
    if (!conversation.titled) { conversation.title = titleFrom(conversation.messages.find((m) => m.role === "user")); conversation.titled = true; }
    elements.log.append(renderMessage(message, conversation.messages.length - 1));
    elements.prompt.value = "";
    state.attachments = [];
    renderAttachments();
    await runTurn(conversation);
  }

  // The last reply again, from the same conversation up to it.
  async function regenerate() {
    if (state.controller) return;
    const conversation = state.conversation;
    const messages = conversation.messages;
    if (!messages.length || messages[messages.length - 1].role !== "assistant") return;
    const problem = settingsProblem();
    if (problem) { note(problem); return; }
    messages.pop();
    elements.log.lastElementChild.remove();
    await runTurn(conversation);
  }

  // The last user message in place: a text box, then its reply anew.
  function startEdit(item, message) {
    if (state.controller || state.editing) return;
    state.editing = true;
    const content = item.querySelector(".content");
    const actions = item.querySelector(".message-actions");
    const box = document.createElement("div");
    box.className = "edit";
    const area = document.createElement("textarea");
    area.className = "edit-box";
    area.value = message.text;
    area.rows = Math.min(10, Math.max(2, message.text.split("\n").length));
    area.setAttribute("aria-label", "Edit your message");
    const cancel = () => { state.editing = false; box.replaceWith(content); if (actions) item.append(actions); };
    const submit = async () => {
      const text = area.value.trim();
      if (!text && !message.attachments.length) return;
      const problem = settingsProblem();
      if (problem) { note(problem); return; }
      state.editing = false;
      const conversation = state.conversation;
      const index = conversation.messages.indexOf(message);
      message.text = text;
      conversation.messages.length = index + 1;
      renderLog();
      await runTurn(conversation);
    };
    area.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) { event.preventDefault(); submit(); }
      if (event.key === "Escape") { event.preventDefault(); event.stopPropagation(); cancel(); }
    });
    const row = document.createElement("div");
    row.className = "edit-actions";
    row.append(button("Cancel", "button", cancel), button("Send", "button primary edit-send", submit));
    box.append(area, row);
    content.replaceWith(box);
    if (actions) actions.remove();
    area.focus();
  }

  function stop() {
    if (state.controller) state.controller.abort();
  }

  function newChat() {
    stop();
    state.attachments = [];
    renderAttachments();
    note("");
    const empty = state.conversation && state.conversation.messages.length === 0;
    if (!empty) showConversation(newConversation());
    elements.prompt.focus();
  }

  function showPanel(panel, toggle, visible) {
    panel.hidden = !visible;
    toggle.setAttribute("aria-expanded", visible ? "true" : "false");
  }

  // A chat saved while a reply streamed (the tab closed, the page was
  // reloaded) ends there: that reply was stopped.
  function settle(conversation) {
    for (const message of conversation.messages)
      if (message.role === "assistant" && message.state === "streaming") {
        message.state = "stopped";
        message.interrupted = true;
        message.progress = null;
      }
    return conversation;
  }

  async function loadConversations() {
    await store.open();
    try {
      state.conversations = (await store.list()).map(settle).sort((a, b) => b.updated - a.updated);
    } catch (error) {
      state.conversations = [];
      note(`Saved chats could not be read: ${error.message}`);
    }
    showConversation(state.conversations[0] || newConversation());
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
  elements.settingsToggle.addEventListener("click", () => showPanel(elements.sidePanel, elements.settingsToggle, elements.sidePanel.hidden));
  elements.historyToggle.addEventListener("click", () => showPanel(elements.historyPanel, elements.historyToggle, elements.historyPanel.hidden));
  elements.apiKey.addEventListener("change", () => { saveSettings(); loadModel(); });
  for (const field of [elements.systemPrompt, elements.stopStrings, ...SAMPLER_FIELDS.map((f) => $(f.id))])
    field.addEventListener("change", saveSettings);
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
  if (window.matchMedia && window.matchMedia("(max-width: 48rem)").matches) {
    showPanel(elements.sidePanel, elements.settingsToggle, false);
    showPanel(elements.historyPanel, elements.historyToggle, false);
  }
  elements.send.disabled = true;
  loadConversations().then(loadModel);
})();
