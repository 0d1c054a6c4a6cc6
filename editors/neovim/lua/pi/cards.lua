-- A tool card (the server's ToolCard, docs/protocol.md "Tool cards") as chat lines: a header with
-- the status and why (`✓ Edited app.py +1 −1`, `✗ bash npm test — exit 1`, `⊘ … — denied: …`),
-- then what the kind shows: the diff (past a few lines folded), the command and its output
-- (folded when long, with its size), the range read, the search's results, an MCP or extension
-- tool's arguments and answer, and the raw JSON in a closed fold. Pure: it returns the lines with
-- the folds and links (a path to open, at a line) they carry, by row from 1.
local util = require("pi.util")

local M = {}

local INDENT = "    "
M.OUTPUT_PREFIX = INDENT .. "│ "
M.ICONS = { running = "◌", done = "✓", failed = "✗", denied = "⊘" }
local DIFF_SHOWN = 8
local OUTPUT_SHOWN = 10
local RESULTS_SHOWN = 5
local LIVE_LINES = 8

--- 45 → "45 B", 1234 → "1.2 KB".
function M.size(bytes)
  if not util.present(bytes) then
    return "?"
  end
  for _, unit in ipairs({ { 1024 * 1024, "MB" }, { 1024, "KB" } }) do
    if bytes >= unit[1] then
      return ("%.1f %s"):format(bytes / unit[1], unit[2])
    end
  end
  return ("%d B"):format(bytes)
end

local function duration(ms)
  if not util.present(ms) then
    return nil
  end
  return ms >= 1000 and ("%.1f s"):format(ms / 1000) or ("%d ms"):format(ms)
end

local function plural(count, word)
  return ("%d %s%s"):format(count, word, count == 1 and "" or "s")
end

local function split(text)
  return vim.split(tostring(text or ""), "\n", { plain = true })
end

local function indented(lines, prefix)
  return vim.tbl_map(function(line)
    return (prefix or INDENT) .. line
  end, lines)
end

local function get(card, key)
  local value = card[key]
  return util.present(value) and value or nil
end

-- ------------------------------------------------------------------ the header

local function facts(card)
  local kind, parts = card.kind, {}
  if kind == "read" and get(card, "startLine") then
    local range = ("lines %d–%d"):format(card.startLine, get(card, "endLine") or card.startLine)
    if get(card, "totalLines") then
      range = range .. " of " .. card.totalLines
    end
    table.insert(parts, range)
  end
  if (kind == "read" or (kind == "write" and not get(card, "added"))) and get(card, "sizeBytes") then
    table.insert(parts, M.size(card.sizeBytes))
  end
  local text = #parts > 0 and (" · " .. table.concat(parts, " · ")) or ""
  if get(card, "added") then
    text = text .. (" +%d −%d"):format(card.added, get(card, "removed") or 0)
  end
  if kind == "search" and get(card, "resultCount") then
    text = text .. " — " .. plural(card.resultCount, "result") .. (get(card, "moreResults") and "+" or "")
  end
  return text
end

local function outcome(card)
  if card.status == "denied" then
    return " — denied: " .. (get(card, "statusReason") or "permission not given")
  end
  if card.status == "failed" then
    return " — " .. (get(card, "statusReason") or "failed")
  end
  if card.kind == "bash" and card.status == "done" and get(card, "exitCode") then
    return " — exit " .. card.exitCode
  end
  return ""
end

--- The card's header line.
function M.header(card)
  local title = card.kind == "bash" and ("bash " .. card.title) or card.title
  -- how long a command ran (a denied one waited for the answer: nothing to tell)
  local took = card.kind == "bash" and card.status ~= "denied" and duration(get(card, "durationMs"))
  return ("%s %s%s%s%s"):format(
    M.ICONS[card.status] or "•",
    title,
    facts(card),
    outcome(card),
    took and (" · " .. took) or ""
  )
end

-- ------------------------------------------------------------------ the body

-- Builds the lines with their folds and links.
local function builder()
  local built = { lines = {}, folds = {}, links = {} }
  function built.add(lines, link)
    for _, line in ipairs(lines) do
      table.insert(built.lines, line)
      if link then
        table.insert(built.links, { row = #built.lines, path = link.path, line = link.line })
      end
    end
  end
  function built.fold(title, lines, links, always)
    local start = #built.lines + 1
    built.add({ INDENT .. "▸ " .. title })
    for index, line in ipairs(lines) do
      built.add({ line }, links and links[index])
    end
    table.insert(built.folds, { start = start, stop = #built.lines, always = always })
  end
  return built
end

local function diff_body(built, card)
  if get(card, "undoInEditor") then
    built.add({ INDENT .. "changed in the editor: undo there takes it back" })
  end
  local diff = get(card, "diff") or {}
  local shown = indented(vim.list_slice(diff, 1, DIFF_SHOWN))
  built.add(shown)
  if #diff > DIFF_SHOWN then
    built.fold(plural(#diff - DIFF_SHOWN, "more diff line"), indented(vim.list_slice(diff, DIFF_SHOWN + 1, #diff)))
  end
end

local function output_lines(card, live)
  local output = get(card, "output") or ""
  if output == "" then
    return {}
  end
  local lines = split(output)
  if live then
    lines = vim.list_slice(lines, math.max(1, #lines - LIVE_LINES + 1), #lines)
  end
  return indented(lines, M.OUTPUT_PREFIX)
end

local function bash_body(built, card, live)
  local command = split(get(card, "command") or "")
  built.add({ INDENT .. "$ " .. command[1] })
  built.add(indented(vim.list_slice(command, 2, #command), INDENT .. "  "))
  local lines = output_lines(card, live)
  if live or #lines <= OUTPUT_SHOWN then
    built.add(lines)
  else
    local size = M.size(get(card, "outputBytes"))
    local tail = get(card, "outputTruncated") and ", the last shown" or ""
    built.fold(("output (%s, %s%s)"):format(plural(#lines, "line"), size, tail), lines)
  end
  if get(card, "fullOutputPath") and not live then
    built.add({ INDENT .. "full output: " .. card.fullOutputPath }, { path = card.fullOutputPath })
  end
end

local function result_line(result)
  local line = get(result, "line")
  local text = get(result, "text")
  return INDENT .. result.path .. (line and (":" .. line) or "") .. (text and (": " .. text) or "")
end

local function search_body(built, card)
  local results = get(card, "results") or {}
  local lines, links = {}, {}
  for _, result in ipairs(results) do
    table.insert(lines, result_line(result))
    table.insert(links, { path = result.path, line = get(result, "line") })
  end
  if #lines <= RESULTS_SHOWN then
    for index, line in ipairs(lines) do
      built.add({ line }, links[index])
    end
  else
    built.fold(plural(#lines, "result"), lines, links)
  end
end

local function images(built, card)
  for _, image in ipairs(get(card, "images") or {}) do
    built.add({ ("%s[image: %s, %s]"):format(INDENT, image.mimeType, M.size(image.sizeBytes)) })
  end
end

local function text_body(built, card, title)
  local text = get(card, "text")
  if not text or text == "" then
    return
  end
  local lines = indented(split((text:gsub("%s+$", ""))))
  if #lines <= OUTPUT_SHOWN and card.kind ~= "read" then
    built.add(lines)
  else
    built.fold(("%s (%s)"):format(title, plural(#lines, "line")), lines)
  end
end

local function arguments_body(built, card)
  for _, argument in ipairs(get(card, "arguments") or {}) do
    local value = split(argument.value)
    built.add({ ("%s%s: %s"):format(INDENT, argument.name, value[1]) })
    built.add(indented(vim.list_slice(value, 2, #value), INDENT .. "  "))
  end
end

local BODIES = {
  read = function(built, card)
    text_body(built, card, "content")
    images(built, card)
  end,
  edit = diff_body,
  write = diff_body,
  bash = bash_body,
  search = search_body,
  mcp = function(built, card)
    arguments_body(built, card)
    text_body(built, card, "result")
    images(built, card)
  end,
}
BODIES.other = BODIES.mcp

local function path_link(card)
  local path = get(card, "path")
  if path and card.kind ~= "search" and card.kind ~= "bash" then
    return { path = path, line = get(card, "startLine") }
  end
end

--- The card as `{lines, folds = {{start, stop, always}}, links = {{row, path, line}}}` (`always`:
--- the raw arguments' fold, kept when the user turns folding off); `live`: a running card (the
--- last lines of the output so far, no folds).
function M.render(card, live)
  local built = builder()
  built.add({ M.header(card) }, path_link(card))
  local body = BODIES[card.kind] or BODIES.other
  if card.status == "failed" and card.kind ~= "bash" and card.kind ~= "mcp" and card.kind ~= "other" then
    text_body(built, card, "error")
  else
    body(built, card, live)
  end
  local raw = get(card, "rawArguments")
  if raw and raw ~= "{}" and not live then
    built.fold("raw arguments", indented(split(raw)), nil, true)
  end
  return built
end

--- A card for a tool result the server sent without one (an older server).
function M.fallback(name, is_error, content)
  return {
    kind = "other",
    title = tostring(name or "tool"),
    tool = name,
    status = is_error and "failed" or "done",
    text = util.content_text(content),
    arguments = {},
  }
end

--- The card of a call that is streaming its arguments (before it runs).
function M.pending(name)
  return { kind = "other", title = tostring(name or "tool"), status = "running", arguments = {} }
end

return M
