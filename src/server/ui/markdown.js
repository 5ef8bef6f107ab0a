// Markdown for the chat page's model replies: a small renderer of our own
// that builds DOM nodes with createElement and text nodes only. No HTML in
// the model's text is ever parsed as HTML (a "<script>" is shown as those
// characters), no attribute but a checked link's href is set from the text,
// and nothing is fetched: images become links, and links only go to
// http(s) and mailto.
//
// What it knows (a pragmatic subset of CommonMark and GitHub's tables):
// paragraphs (a single newline is a line break: models rely on it),
// ATX headings, fenced code blocks (``` or ~~~, with the language shown and
// a Copy button), blockquotes, bullet and numbered lists (nested by
// indentation), thematic breaks, pipe tables; inline code, **strong**,
// *emphasis*, ~~strikethrough~~, [links](https://...), <https://autolinks>
// and backslash escapes.
//
// update(container, text) renders into a container incrementally: blocks
// whose source did not change keep their nodes, so a streamed reply costs
// one re-rendered block per frame, not the whole reply.
"use strict";

window.vlmMarkdown = (() => {
  // ------------------------------------------------------------ clipboard

  // navigator.clipboard exists only in a secure context (https, localhost);
  // a page served on a LAN address over http falls back to a selection.
  async function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      try { await navigator.clipboard.writeText(text); return true; } catch (_) { /* fall back */ }
    }
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.append(area);
    area.select();
    let copied = false;
    try { copied = document.execCommand("copy"); } catch (_) { copied = false; }
    area.remove();
    return copied;
  }

  function copyButton(getText, label) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = label || "Copy";
    button.addEventListener("click", async () => {
      const copied = await copyText(getText());
      button.textContent = copied ? "Copied" : "Copy failed";
      setTimeout(() => { button.textContent = label || "Copy"; }, 1500);
    });
    return button;
  }

  // ------------------------------------------------------------ inline

  const PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

  function safeHref(url) {
    const trimmed = url.trim();
    // Only absolute http(s) and mailto: a "javascript:" or "data:" link
    // from the model is shown as text.
    return /^(https?:\/\/|mailto:)[^\s]+$/i.test(trimmed) ? trimmed : null;
  }

  function link(href, children) {
    const anchor = document.createElement("a");
    anchor.href = href;
    anchor.rel = "noopener noreferrer nofollow";
    anchor.target = "_blank";
    anchor.append(...children);
    return anchor;
  }

  function element(tag, children) {
    const node = document.createElement(tag);
    node.append(...children);
    return node;
  }

  // The index of the matching `]` for the `[` at `open`, or -1.
  function closingBracket(text, open) {
    let depth = 0;
    for (let i = open; i < text.length; i++) {
      const c = text[i];
      if (c === "\\") { i++; continue; }
      if (c === "`") { const end = text.indexOf("`", i + 1); if (end < 0) return -1; i = end; continue; }
      if (c === "[") depth++;
      else if (c === "]" && --depth === 0) return i;
    }
    return -1;
  }

  const isSpace = (c) => c === undefined || /\s/.test(c);
  const isWordChar = (c) => c !== undefined && /[\p{L}\p{N}]/u.test(c);

  // A closing delimiter run for `marker` (e.g. "**") at or after `from`,
  // not preceded by whitespace; for "_" not followed by a word character.
  function findClosing(text, marker, from) {
    for (let i = from; i < text.length; i++) {
      if (text[i] === "\\") { i++; continue; }
      if (text[i] === "`") { const end = text.indexOf("`", i + 1); if (end >= 0) { i = end; continue; } }
      if (!text.startsWith(marker, i)) continue;
      if (isSpace(text[i - 1])) continue;
      if (marker[0] === "_" && isWordChar(text[i + marker.length])) continue;
      // "**" inside "***": take the outermost.
      if (marker.length === 1 && text[i + 1] === marker) { i++; continue; }
      return i;
    }
    return -1;
  }

  function inline(text, depth = 0) {
    const nodes = [];
    let plain = "";
    const flush = () => { if (plain) { nodes.push(document.createTextNode(plain)); plain = ""; } };
    if (depth > 8) return [document.createTextNode(text)]; // hostile nesting stays text
    for (let i = 0; i < text.length;) {
      const c = text[i];
      if (c === "\\" && i + 1 < text.length && PUNCTUATION.includes(text[i + 1])) {
        plain += text[i + 1];
        i += 2;
        continue;
      }
      if (c === "`") {
        let run = 1;
        while (text[i + run] === "`") run++;
        const fence = "`".repeat(run);
        let end = text.indexOf(fence, i + run);
        while (end >= 0 && text[end + run] === "`") end = text.indexOf(fence, end + run + 1);
        if (end >= 0) {
          let code = text.slice(i + run, end).replace(/\n/g, " ");
          if (code.length > 2 && code[0] === " " && code[code.length - 1] === " ") code = code.slice(1, -1);
          flush();
          const node = document.createElement("code");
          node.textContent = code;
          nodes.push(node);
          i = end + run;
          continue;
        }
        plain += fence;
        i += run;
        continue;
      }
      if (c === "<") {
        const match = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i.exec(text.slice(i));
        if (match) {
          flush();
          nodes.push(link(match[1], [document.createTextNode(match[1])]));
          i += match[0].length;
          continue;
        }
      }
      if (c === "[" || (c === "!" && text[i + 1] === "[")) {
        const image = c === "!";
        const open = image ? i + 1 : i;
        const close = closingBracket(text, open);
        if (close > 0 && text[close + 1] === "(") {
          const end = text.indexOf(")", close + 2);
          if (end > 0) {
            const target = text.slice(close + 2, end).trim().split(/\s+/)[0] || "";
            const href = safeHref(target.replace(/^<|>$/g, ""));
            const label = text.slice(open + 1, close);
            flush();
            if (href) {
              nodes.push(link(href, image ? [document.createTextNode(`image: ${label || href}`)] : inline(label, depth + 1)));
            } else {
              // Not a link we follow: the label, then the target as text.
              nodes.push(...inline(label, depth + 1), document.createTextNode(` (${target})`));
            }
            i = end + 1;
            continue;
          }
        }
      }
      const markers = ["**", "__", "~~", "*", "_"];
      const marker = markers.find((m) => text.startsWith(m, i));
      if (marker) {
        const next = text[i + marker.length];
        const opens = !isSpace(next) && !(marker[0] === "_" && isWordChar(text[i - 1]));
        const close = opens ? findClosing(text, marker, i + marker.length + 1) : -1;
        if (close > 0) {
          flush();
          const tag = marker === "~~" ? "del" : marker.length === 2 ? "strong" : "em";
          nodes.push(element(tag, inline(text.slice(i + marker.length, close), depth + 1)));
          i = close + marker.length;
          continue;
        }
        plain += marker;
        i += marker.length;
        continue;
      }
      plain += c;
      i++;
    }
    flush();
    return nodes;
  }

  // Lines of a paragraph, each line's inline content, with line breaks.
  function paragraphContent(lines) {
    const nodes = [];
    lines.forEach((line, index) => {
      if (index) nodes.push(document.createElement("br"));
      nodes.push(...inline(line.replace(/^\s+/, "")));
    });
    return nodes;
  }

  // ------------------------------------------------------------ blocks

  const FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*([^`\s]*)[^`]*$/;
  const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
  const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
  const QUOTE = /^ {0,3}> ?/;
  const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])([ \t]+|$)(.*)$/;
  const TABLE_RULE = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

  const blank = (line) => /^\s*$/.test(line);
  const startsBlock = (line) => FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || ITEM.test(line);

  function splitRow(line) {
    let row = line.trim();
    if (row.startsWith("|")) row = row.slice(1);
    if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
    const cells = [];
    let cell = "";
    for (let i = 0; i < row.length; i++) {
      if (row[i] === "\\" && row[i + 1] === "|") { cell += "|"; i++; continue; }
      if (row[i] === "|") { cells.push(cell.trim()); cell = ""; continue; }
      cell += row[i];
    }
    cells.push(cell.trim());
    return cells;
  }

  function codeBlock(info, code) {
    const box = document.createElement("div");
    box.className = "code-block";
    const header = document.createElement("div");
    header.className = "code-header";
    const language = document.createElement("span");
    language.className = "code-language";
    language.textContent = info || "text";
    header.append(language, copyButton(() => code, "Copy code"));
    const pre = document.createElement("pre");
    const body = document.createElement("code");
    body.textContent = code;
    pre.append(body);
    box.append(header, pre);
    return box;
  }

  function table(lines) {
    const head = splitRow(lines[0]);
    const aligns = splitRow(lines[1]).map((cell) =>
      cell.startsWith(":") && cell.endsWith(":") ? "center" : cell.endsWith(":") ? "right" : cell.startsWith(":") ? "left" : "");
    const node = document.createElement("table");
    const row = (cells, tag) => {
      const tr = document.createElement("tr");
      head.forEach((_, index) => {
        const cell = element(tag, inline(cells[index] || ""));
        if (aligns[index]) cell.style.textAlign = aligns[index];
        tr.append(cell);
      });
      return tr;
    };
    node.append(element("thead", [row(head, "th")]));
    const body = document.createElement("tbody");
    for (const line of lines.slice(2)) body.append(row(splitRow(line), "td"));
    node.append(body);
    const wrapper = document.createElement("div");
    wrapper.className = "table-wrapper";
    wrapper.append(node);
    return wrapper;
  }

  // A list starting at lines[start]: its items' lines (dedented), and where it ends.
  function collectList(lines, start) {
    const first = ITEM.exec(lines[start]);
    const ordered = /\d/.test(first[2]);
    const items = [];
    let i = start;
    while (i < lines.length) {
      const match = ITEM.exec(lines[i]);
      if (!match || /\d/.test(match[2]) !== ordered) break;
      const indent = match[1].length + match[2].length + Math.max(1, Math.min(4, match[3].length || 1));
      const item = { start: parseInt(match[2], 10), lines: [match[4]] };
      i++;
      while (i < lines.length) {
        const line = lines[i];
        const leading = line.length - line.replace(/^ +/, "").length;
        if (blank(line)) {
          // A blank line continues the item only before an indented line.
          const next = lines[i + 1];
          if (next !== undefined && !blank(next) && next.length - next.replace(/^ +/, "").length >= indent) {
            item.lines.push("");
            i++;
            continue;
          }
          break;
        }
        if (leading >= indent) { item.lines.push(line.slice(indent)); i++; continue; }
        if (leading >= 2 && ITEM.test(line.slice(leading))) { item.lines.push(line.slice(Math.min(leading, indent))); i++; continue; }
        if (!startsBlock(line) && item.lines[item.lines.length - 1] !== "") { item.lines.push(line); i++; continue; }
        break;
      }
      items.push(item);
      // A blank line between items keeps the list going.
      if (i < lines.length && blank(lines[i]) && lines[i + 1] !== undefined && ITEM.test(lines[i + 1])) i++;
    }
    return { ordered, items, end: i };
  }

  const splitLines = (text) => text.replace(/\r\n?/g, "\n").split("\n");

  // Splits lines[from..] into top-level blocks: {source, startLine,
  // build()}. build() is called only for blocks whose source changed.
  function parseLines(lines, from, depth) {
    const blocks = [];
    const add = (start, to, build) => blocks.push({ source: lines.slice(start, to).join("\n"), startLine: start, build });
    let i = from;
    while (i < lines.length) {
      const line = lines[i];
      if (blank(line)) { i++; continue; }
      const start = i;
      const fence = FENCE.exec(line);
      if (fence) {
        const marker = fence[1];
        const info = fence[2];
        const indent = line.length - line.replace(/^ +/, "").length;
        const body = [];
        const closing = new RegExp(`^ {0,3}${marker[0] === "`" ? "`" : "~"}{${marker.length},}[ \\t]*$`);
        i++;
        // An unclosed fence (a reply still streaming) runs to the end.
        while (i < lines.length && !closing.test(lines[i])) {
          body.push(lines[i].slice(Math.min(indent, lines[i].length - lines[i].replace(/^ +/, "").length)));
          i++;
        }
        if (i < lines.length) i++;
        const code = body.join("\n");
        add(start, i, () => codeBlock(info, code));
        continue;
      }
      const heading = HEADING.exec(line);
      if (heading) {
        i++;
        // A reply's "# Title" is a heading inside the page's own structure.
        const level = Math.min(6, heading[1].length + 2);
        add(start, i, () => { const node = element(`h${level}`, inline(heading[2] || "")); node.className = `md-h${heading[1].length}`; return node; });
        continue;
      }
      if (RULE.test(line)) { i++; add(start, i, () => document.createElement("hr")); continue; }
      if (QUOTE.test(line)) {
        const inner = [];
        while (i < lines.length && !blank(lines[i]) && (QUOTE.test(lines[i]) || !startsBlock(lines[i]))) {
          inner.push(lines[i].replace(QUOTE, ""));
          i++;
        }
        const nested = inner.join("\n");
        add(start, i, () => element("blockquote", depth < 8 ? render(nested, depth + 1) : [document.createTextNode(nested)]));
        continue;
      }
      if (ITEM.test(line)) {
        const list = collectList(lines, i);
        i = list.end;
        add(start, i, () => {
          const node = document.createElement(list.ordered ? "ol" : "ul");
          if (list.ordered && list.items[0].start !== 1) node.start = list.items[0].start;
          for (const item of list.items) {
            const content = item.lines.join("\n");
            const li = document.createElement("li");
            // A one-paragraph item is its text, not a <p> in the <li>.
            if (depth < 8 && (item.lines.some((l) => startsBlock(l) || blank(l)) && item.lines.length > 1)) li.append(...render(content, depth + 1));
            else li.append(...paragraphContent(item.lines));
            node.append(li);
          }
          return node;
        });
        continue;
      }
      if (line.includes("|") && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1]) && lines[i + 1].includes("-")) {
        const rows = [line, lines[i + 1]];
        i += 2;
        while (i < lines.length && !blank(lines[i]) && lines[i].includes("|")) { rows.push(lines[i]); i++; }
        add(start, i, () => table(rows));
        continue;
      }
      const paragraph = [];
      while (i < lines.length && !blank(lines[i]) && (paragraph.length === 0 || !startsBlock(lines[i]))) {
        paragraph.push(lines[i]);
        i++;
      }
      add(start, i, () => element("p", paragraphContent(paragraph)));
    }
    return blocks;
  }

  function render(text, depth = 0) {
    return parseLines(splitLines(text), 0, depth).map((block) => block.build());
  }

  // Renders `text` into `container`, rebuilding only the blocks from the
  // first one whose source changed. With streaming set and `text` the
  // previous text and more, only the last block onwards is parsed again
  // (the reply grows at its end); without it the whole text is parsed, so
  // the finished reply is rendered exactly as a full parse gives it.
  function update(container, text, options = {}) {
    const lines = splitLines(text);
    const previous = container.vlmBlocks || [];
    let blocks;
    if (options.streaming && previous.length && typeof container.vlmText === "string" && text.startsWith(container.vlmText)) {
      const keep = previous.length - 1;
      blocks = previous.slice(0, keep).concat(parseLines(lines, previous[keep].startLine, 0));
    } else {
      blocks = parseLines(lines, 0, 0);
    }
    let same = 0;
    while (same < blocks.length && same < previous.length && blocks[same].source === previous[same].source &&
           blocks[same].startLine === previous[same].startLine && previous[same].node.parentNode === container) same++;
    for (const old of previous.slice(same)) old.node.remove();
    const kept = previous.slice(0, same);
    for (const block of blocks.slice(same)) {
      const node = block.build();
      container.append(node);
      kept.push({ source: block.source, startLine: block.startLine, node });
    }
    container.vlmBlocks = kept;
    container.vlmText = text;
  }

  return { update, render: (text) => { const fragment = document.createDocumentFragment(); fragment.append(...render(text)); return fragment; }, copyText, copyButton };
})();
