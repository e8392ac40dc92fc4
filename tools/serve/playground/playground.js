// The Baton playground: chat and raw completion against this server's OpenAI-compatible API,
// streamed as Server-Sent Events, with time to first token and decode speed for each answer.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const ui = {
    model: $("model"),
    modeChat: $("mode-chat"),
    modeCompletion: $("mode-completion"),
    messages: $("messages"),
    output: $("output"),
    error: $("error"),
    ttft: $("ttft"),
    tps: $("tps"),
    tokens: $("tokens"),
    composer: $("composer"),
    prompt: $("prompt"),
    send: $("send"),
    stop: $("stop"),
    reset: $("reset"),
    settings: $("settings"),
    apiKey: $("api-key"),
    system: $("system"),
    temperature: $("temperature"),
    topP: $("top-p"),
    topK: $("top-k"),
    maxTokens: $("max-tokens"),
    seed: $("seed"),
    stopSeq: $("stop-seq"),
  };

  const state = {
    mode: "chat",
    history: [],  // the chat so far, as sent to the server
    drafts: { chat: "", completion: "Once upon a time" },
    modelId: null,
    controller: null,  // aborts the request in flight
  };

  // Paths are relative so the page also works behind a proxy that mounts the server under a prefix.
  const kModelsPath = "v1/models";
  const kChatPath = "v1/chat/completions";
  const kCompletionsPath = "v1/completions";

  function headers() {
    const result = { "Content-Type": "application/json" };
    const key = ui.apiKey.value.trim();
    if (key) result.Authorization = "Bearer " + key;
    return result;
  }

  function showError(message) {
    ui.error.textContent = message;
    ui.error.hidden = !message;
  }

  // The message of an error response: OpenAI's {"error": {"message"}}, TGI's {"error": "..."}, or
  // the raw body.
  async function responseError(response) {
    const text = await response.text();
    let message = text || response.statusText;
    try {
      const error = JSON.parse(text).error;
      if (typeof error === "string") message = error;
      else if (error && error.message) message = error.message;
    } catch (_) {
      // Not JSON: the raw body is the message.
    }
    return new Error(`HTTP ${response.status}: ${message}`);
  }

  async function loadModel() {
    try {
      const response = await fetch(kModelsPath, { headers: headers() });
      if (!response.ok) throw await responseError(response);
      const body = await response.json();
      state.modelId = body.data && body.data.length ? body.data[0].id : null;
      ui.model.textContent = state.modelId || "no model";
      if (ui.error.dataset.source === "models") showError("");
    } catch (e) {
      state.modelId = null;
      ui.model.textContent = "model unavailable";
      showError(`Cannot list models: ${e.message}`);
      ui.error.dataset.source = "models";
    }
  }

  function optionalNumber(input, parse) {
    const text = input.value.trim();
    if (text === "") return undefined;
    const value = parse(text);
    return Number.isFinite(value) ? value : undefined;
  }

  // "\n", "\t" and "\\" in a stop sequence stand for a newline, a tab and a backslash.
  function unescapeStop(text) {
    return text.replace(/\\([nt\\])/g, (_, c) => ({ n: "\n", t: "\t", "\\": "\\" })[c]);
  }

  // The request fields both modes share; empty settings are left to the server's defaults.
  function requestFields() {
    const fields = { stream: true, stream_options: { include_usage: true } };
    if (state.modelId) fields.model = state.modelId;
    const numbers = {
      temperature: optionalNumber(ui.temperature, parseFloat),
      top_p: optionalNumber(ui.topP, parseFloat),
      top_k: optionalNumber(ui.topK, (t) => parseInt(t, 10)),
      max_tokens: optionalNumber(ui.maxTokens, (t) => parseInt(t, 10)),
      seed: optionalNumber(ui.seed, (t) => parseInt(t, 10)),
    };
    for (const [name, value] of Object.entries(numbers)) {
      if (value !== undefined) fields[name] = value;
    }
    const stops = ui.stopSeq.value.split("\n").filter((s) => s !== "").map(unescapeStop);
    if (stops.length) fields.stop = stops;
    return fields;
  }

  // Posts `body` and hands each SSE `data:` payload, parsed, to `onData` until `[DONE]`.
  async function streamEvents(path, body, signal, onData) {
    const response = await fetch(path, {
      method: "POST",
      headers: headers(),
      body: JSON.stringify(body),
      signal,
    });
    if (!response.ok) throw await responseError(response);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let data = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error("the stream ended before [DONE]");
      buffer += decoder.decode(value, { stream: true });
      for (let end; (end = buffer.indexOf("\n")) >= 0;) {
        const line = buffer.slice(0, end).replace(/\r$/, "");
        buffer = buffer.slice(end + 1);
        if (line.startsWith("data:")) {
          data.push(line.slice(5).replace(/^ /, ""));
        } else if (line === "" && data.length) {
          // A blank line ends an event; its data lines join with newlines.
          const payload = data.join("\n");
          data = [];
          if (payload === "[DONE]") return;
          const event = JSON.parse(payload);
          if (event.error) throw new Error(event.error.message || JSON.stringify(event.error));
          onData(event);
        }
      }
    }
  }

  // One answer's timings: TTFT runs from sending to the first text; the decode rate counts the
  // tokens after the first over the time since the first.
  class AnswerStats {
    constructor() {
      this.sent = performance.now();
      this.first = null;
      this.last = null;
      this.tokens = 0;
    }
    onText() {
      const now = performance.now();
      if (this.first === null) this.first = now;
      this.last = now;
      this.tokens += 1;  // one streamed chunk is one token until usage gives the exact count
    }
    ttftMs() {
      return this.first === null ? null : this.first - this.sent;
    }
    tokensPerSecond() {
      if (this.first === null || this.tokens < 2 || this.last <= this.first) return null;
      return (this.tokens - 1) / ((this.last - this.first) / 1000);
    }
  }

  function showStats(stats, view) {
    const ttft = stats.ttftMs();
    const tps = stats.tokensPerSecond();
    ui.ttft.textContent = ttft === null ? "…" : Math.round(ttft).toString();
    ui.tps.textContent = tps === null ? "–" : tps.toFixed(1);
    ui.tokens.textContent = stats.tokens.toString();
    if (view) {
      view.textContent = `TTFT ${ui.ttft.textContent} ms · ${ui.tps.textContent} tok/s · ` +
                         `${stats.tokens} tokens`;
    }
  }

  function setBusy(busy) {
    document.body.dataset.busy = String(busy);
    ui.send.disabled = busy;
    ui.stop.disabled = !busy;
    ui.reset.disabled = busy;
    ui.modeChat.disabled = busy;
    ui.modeCompletion.disabled = busy;
  }

  // Streams one answer; `onEvent` returns whether the event carried text. Returns "done",
  // "stopped" or "failed" (the error is shown).
  async function generate(path, body, statsView, onEvent) {
    showError("");
    const stats = new AnswerStats();
    state.controller = new AbortController();
    setBusy(true);
    showStats(stats, statsView);
    try {
      await streamEvents(path, body, state.controller.signal, (event) => {
        if (onEvent(event)) stats.onText();
        if (event.usage) stats.tokens = event.usage.completion_tokens;
        showStats(stats, statsView);
      });
      return "done";
    } catch (e) {
      if (e.name === "AbortError") return "stopped";
      showError(e.message);
      ui.error.dataset.source = "generate";
      return "failed";
    } finally {
      state.controller = null;
      setBusy(false);
      showStats(stats, statsView);
    }
  }

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function addMessage(role, text) {
    const view = element("div", `msg ${role}`);
    view.append(element("div", "role", role), element("div", "content", text));
    ui.messages.append(view);
    return view;
  }

  // Keeps the newest text in sight unless the reader has scrolled up.
  function follow(container, update) {
    const atBottom = container.scrollHeight - container.scrollTop - container.clientHeight < 40;
    update();
    if (atBottom) container.scrollTop = container.scrollHeight;
  }

  async function sendChat() {
    const text = ui.prompt.value;
    if (!text.trim()) return;
    ui.prompt.value = "";
    const messages = [];
    if (ui.system.value.trim()) messages.push({ role: "system", content: ui.system.value });
    state.history.push({ role: "user", content: text });
    messages.push(...state.history);

    const question = addMessage("user", text);
    const answer = addMessage("assistant", "");
    const content = answer.querySelector(".content");
    const statsView = element("div", "stats");
    answer.append(statsView);
    answer.classList.add("streaming");
    ui.messages.scrollTop = ui.messages.scrollHeight;

    let reply = "";
    const body = { ...requestFields(), messages };
    const outcome = await generate(kChatPath, body, statsView, (event) => {
      const delta = event.choices && event.choices[0] && event.choices[0].delta.content;
      if (!delta) return false;
      reply += delta;
      follow(ui.messages, () => { content.textContent = reply; });
      return true;
    });
    answer.classList.remove("streaming");

    if (outcome !== "done" && reply === "") {
      // Nothing came back: the turn is withdrawn, so the history keeps alternating and the text
      // can be sent again.
      state.history.pop();
      question.remove();
      answer.remove();
      if (ui.prompt.value === "") ui.prompt.value = text;
      return;
    }
    state.history.push({ role: "assistant", content: reply });
    if (outcome === "stopped") answer.insertBefore(element("div", "note", "stopped"), statsView);
    else if (reply === "") content.append(element("span", "note", "(empty reply)"));
  }

  async function sendCompletion() {
    const prompt = ui.prompt.value;
    if (!prompt) return;
    const generated = element("span", "generated");
    ui.output.replaceChildren(element("span", "prompt-text", prompt), generated);
    ui.output.classList.add("streaming");
    await generate(kCompletionsPath, { ...requestFields(), prompt }, null, (event) => {
      const text = event.choices && event.choices[0] && event.choices[0].text;
      if (!text) return false;
      follow(ui.output, () => { generated.textContent += text; });
      return true;
    });
    ui.output.classList.remove("streaming");
  }

  function setMode(mode) {
    state.drafts[state.mode] = ui.prompt.value;
    state.mode = mode;
    ui.prompt.value = state.drafts[mode];
    document.body.dataset.mode = mode;
    const chat = mode === "chat";
    ui.modeChat.setAttribute("aria-selected", String(chat));
    ui.modeCompletion.setAttribute("aria-selected", String(!chat));
    ui.messages.hidden = !chat;
    ui.output.hidden = chat;
    ui.reset.textContent = chat ? "New chat" : "Clear";
    ui.prompt.placeholder = chat ? "Message (Enter sends, Shift+Enter for a new line)"
                                 : "Prompt (Ctrl+Enter sends)";
    ui.prompt.focus();
  }

  function reset() {
    if (state.mode === "chat") {
      state.history = [];
      ui.messages.replaceChildren();
    } else {
      ui.output.replaceChildren();
    }
    showError("");
    for (const view of [ui.ttft, ui.tps, ui.tokens]) view.textContent = "–";
    ui.prompt.focus();
  }

  ui.composer.addEventListener("submit", (event) => {
    event.preventDefault();
    if (state.controller) return;
    if (state.mode === "chat") sendChat();
    else sendCompletion();
  });
  ui.prompt.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.isComposing) return;
    const send = event.ctrlKey || event.metaKey || (state.mode === "chat" && !event.shiftKey);
    if (send) {
      event.preventDefault();
      ui.composer.requestSubmit();
    }
  });
  ui.stop.addEventListener("click", () => state.controller && state.controller.abort());
  ui.reset.addEventListener("click", reset);
  ui.modeChat.addEventListener("click", () => setMode("chat"));
  ui.modeCompletion.addEventListener("click", () => setMode("completion"));
  ui.apiKey.addEventListener("change", loadModel);

  if (window.matchMedia("(max-width: 760px)").matches) ui.settings.open = false;
  loadModel();
  ui.prompt.focus();
})();
