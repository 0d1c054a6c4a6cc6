// Draws an exported pi session: the tree with every branch, and the conversation along the
// branch chosen (its leaf in the address's #leaf=ID, so a link keeps the choice). Every text is
// set with textContent: nothing from the session is parsed as HTML.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("session-data").textContent);
  var entries = data.entries;
  var byId = new Map();
  var children = new Map();
  entries.forEach(function (entry) {
    byId.set(entry.id, entry);
  });
  entries.forEach(function (entry) {
    var parent = entry.parentId && byId.has(entry.parentId) ? entry.parentId : null;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(entry);
  });
  var lastLeaf = entries.length ? entries[entries.length - 1].id : null;

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function pathTo(id) {
    var path = [];
    var seen = new Set();
    var current = byId.get(id);
    while (current && !seen.has(current.id)) {
      seen.add(current.id);
      path.unshift(current);
      current = current.parentId ? byId.get(current.parentId) : undefined;
    }
    return path;
  }

  function deepestLeaf(id) {
    var current = id;
    var seen = new Set();
    while (children.has(current) && !seen.has(current)) {
      seen.add(current);
      var kids = children.get(current);
      current = kids[kids.length - 1].id;
    }
    return current;
  }

  function chosenLeaf() {
    var match = /#leaf=(.+)$/.exec(location.hash);
    var id = match ? decodeURIComponent(match[1]) : null;
    return id && byId.has(id) ? id : lastLeaf;
  }

  function blockText(content) {
    if (typeof content === "string") return content;
    if (!Array.isArray(content)) return "";
    return content
      .filter(function (block) { return block && block.type === "text"; })
      .map(function (block) { return block.text || ""; })
      .join("\n");
  }

  function preview(entry) {
    var message = entry.message || {};
    var text = "";
    if (entry.type === "message") {
      if (message.role === "bashExecution") text = "$ " + (message.command || "");
      else {
        text = blockText(message.content);
        if (!text && Array.isArray(message.content)) {
          text = message.content
            .filter(function (block) { return block && block.type === "toolCall"; })
            .map(function (block) { return block.name + "(…)"; })
            .join(", ");
        }
      }
      text = (message.role || "message") + ": " + text;
    } else if (entry.type === "compaction" || entry.type === "branch_summary") {
      text = entry.type.replace("_", " ") + ": " + (entry.summary || "");
    } else if (entry.type === "session_info") {
      text = "name: " + (entry.name || "");
    } else if (entry.type === "label") {
      text = "label: " + (entry.label || "");
    } else if (entry.type === "custom_message") {
      text = (entry.customType || "custom") + ": " + blockText(entry.content);
    } else {
      text = entry.type;
    }
    return text.replace(/\s+/g, " ").slice(0, 120);
  }

  function drawTree(onPath, leaf) {
    var nav = document.getElementById("tree");
    nav.textContent = "";
    function level(parent) {
      var list = element("ul");
      (children.get(parent) || []).forEach(function (entry) {
        var item = element("li");
        var kids = children.get(entry.id) || [];
        if (kids.length > 1) item.className = "branch-point";
        var link = element("a", "", preview(entry));
        link.href = "#leaf=" + encodeURIComponent(deepestLeaf(entry.id));
        link.dataset.id = entry.id;
        if (onPath.has(entry.id)) link.classList.add("on-path");
        if (entry.id === leaf) link.classList.add("leaf");
        item.appendChild(link);
        if (kids.length) item.appendChild(level(entry.id));
        list.appendChild(item);
      });
      return list;
    }
    nav.appendChild(level(null));
  }

  function fileLists(details) {
    var box = element("div", "files");
    if (!details) return box;
    [["readFiles", "Read files"], ["modifiedFiles", "Modified files"]].forEach(function (pair) {
      var files = details[pair[0]];
      if (!Array.isArray(files) || !files.length) return;
      box.appendChild(element("div", "who", pair[1]));
      var list = element("ul");
      files.forEach(function (file) { list.appendChild(element("li", "", file)); });
      box.appendChild(list);
    });
    return box;
  }

  function messageNode(entry) {
    var message = entry.message || {};
    var role = message.role || "message";
    if (role === "toolResult") {
      var result = element("details", "entry tool");
      result.appendChild(element("summary", "", "Result of " + (message.toolName || "tool") +
        (message.isError ? " (error)" : "")));
      result.appendChild(element("pre", "", blockText(message.content)));
      return result;
    }
    if (role === "bashExecution") {
      var shell = element("div", "entry bash");
      shell.appendChild(element("div", "who", "shell"));
      shell.appendChild(element("pre", "", "$ " + (message.command || "") + "\n" + (message.output || "")));
      return shell;
    }
    var box = element("div", "entry " + role);
    box.appendChild(element("div", "who", role));
    var content = message.content;
    if (typeof content === "string") box.appendChild(element("div", "text", content));
    (Array.isArray(content) ? content : []).forEach(function (block) {
      if (!block) return;
      if (block.type === "text") box.appendChild(element("div", "text", block.text));
      else if (block.type === "thinking") {
        var thinking = element("details");
        thinking.appendChild(element("summary", "", "Thinking"));
        thinking.appendChild(element("div", "text", block.thinking));
        box.appendChild(thinking);
      } else if (block.type === "toolCall") {
        box.appendChild(element("div", "who", "tool call: " + block.name));
        box.appendChild(element("pre", "", JSON.stringify(block.arguments, null, 2)));
      } else if (block.type === "image") {
        var image = element("img");
        image.src = "data:" + block.mimeType + ";base64," + block.data;
        image.style.maxWidth = "100%";
        box.appendChild(image);
      }
    });
    return box;
  }

  function entryNode(entry) {
    if (entry.type === "message") return messageNode(entry);
    if (entry.type === "compaction" || entry.type === "branch_summary") {
      var summary = element("div", "entry summary");
      summary.appendChild(element("div", "who", entry.type === "compaction" ? "compaction summary" : "branch summary"));
      summary.appendChild(element("div", "text", entry.summary));
      summary.appendChild(fileLists(entry.details));
      return summary;
    }
    if (entry.type === "custom_message") {
      if (entry.display === false) return null;
      var custom = element("div", "entry custom");
      custom.appendChild(element("div", "who", entry.customType || "custom message"));
      custom.appendChild(element("div", "text", blockText(entry.content)));
      return custom;
    }
    if (entry.type === "model_change") return element("div", "entry note", "model: " + entry.provider + "/" + entry.modelId);
    if (entry.type === "thinking_level_change") return element("div", "entry note", "thinking: " + entry.thinkingLevel);
    if (entry.type === "session_info") return element("div", "entry note", "named: " + (entry.name || ""));
    if (entry.type === "label") return element("div", "entry note", "label: " + (entry.label || "(cleared)"));
    return null;
  }

  function draw() {
    var leaf = chosenLeaf();
    var path = pathTo(leaf);
    var onPath = new Set(path.map(function (entry) { return entry.id; }));
    drawTree(onPath, leaf);
    var main = document.getElementById("conversation");
    main.textContent = "";
    main.dataset.leaf = leaf || "";
    path.forEach(function (entry) {
      var node = entryNode(entry);
      if (!node) return;
      node.dataset.id = entry.id;
      main.appendChild(node);
    });
  }

  var header = data.header || {};
  document.getElementById("meta").textContent =
    "Session " + (header.id || "") + " · " + (header.cwd || "") + " · " + (header.timestamp || "") +
    " · " + entries.length + " entries";
  window.addEventListener("hashchange", draw);
  draw();
})();
