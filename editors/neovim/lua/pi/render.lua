-- What each pi/event shows in the chat: `## You` and `## pi` sections, streamed text (its code
-- blocks highlighted once complete) and thinking (folded, with its length), a card per tool call
-- (cards.lua: drawn at the end while it runs, its output live, then written for good, see
-- card_tail.lua), images as `[image: mime, size]`, and `»` notices for compaction, branch
-- summaries, retries, aborts and errors.
local card_tail = require("pi.card_tail")
local cards = require("pi.cards")
local code_blocks = require("pi.code_blocks")
local context_edit = require("pi.api").context_edit_effects
local links = require("pi.links")
local transcript = require("pi.transcript")
local util = require("pi.util")

local M = {}

local HEADERS = { user = "## You", assistant = "## pi" }
local THINKING_PREFIX = "> "
local THINKING_HEADER = "▸ thinking"
local RESULT_INDENT = "    "

-- Per chat buffer: the block being streamed, where it starts, its fold, the thinking block's
-- header line and length, the last section's role, and the error of a failed answer not shown
-- yet (shown at the turn's end, unless a refused-key notice says it first: each failure is shown
-- once).
local views = {}

local function view(buffer)
  views[buffer] = views[buffer] or { block = nil, fold = nil, role = nil, failure = nil }
  return views[buffer]
end

function M.reset(buffer)
  views[buffer] = nil
  transcript.reset(buffer)
  card_tail.reset(buffer)
  links.reset(buffer)
  code_blocks.reset(buffer)
end

local function folds(kind)
  return require("pi.config").options.fold[kind]
end

local function thinking_length(chars)
  return ("%s (%d chars)"):format(THINKING_HEADER, chars)
end

local function end_block(buffer)
  local current = view(buffer)
  if current.fold then
    transcript.close_fold(buffer, current.fold)
    current.fold = nil
  end
  if current.block == "thinking" and current.thinking then
    transcript.replace_line(buffer, current.thinking.line, thinking_length(current.thinking.chars))
    -- Markdown would continue the thinking quote into the next line without a blank one.
    transcript.append(buffer, { "" })
  elseif current.block == "text" and current.block_start and vim.bo[buffer].filetype == "pi-chat" then
    code_blocks.highlight(buffer, current.block_start, transcript.line_count(buffer))
  end
  current.block, current.thinking, current.block_start = nil, nil, nil
end

-- A blank line between blocks, so markdown does not run a paragraph into the next block.
local function gap(buffer)
  local last = transcript.last_line(buffer)
  if last ~= "" and not vim.startswith(last, "## ") then
    transcript.append(buffer, { "" })
  end
end

local function separate(buffer)
  end_block(buffer)
  if not transcript.is_empty(buffer) and transcript.last_line(buffer) ~= "" then
    transcript.append(buffer, { "" })
  end
end

local function header(buffer, role)
  separate(buffer)
  transcript.append(buffer, { HEADERS[role] })
  view(buffer).role = role
end

local function start_block(buffer, kind)
  end_block(buffer)
  gap(buffer)
  local current = view(buffer)
  current.block = kind
  if kind == "thinking" then
    current.fold = folds("thinking") and transcript.open_fold(buffer) or nil
    current.thinking = { line = transcript.append(buffer, { THINKING_HEADER, THINKING_PREFIX }), chars = 0 }
  else
    current.block_start = transcript.append(buffer, { "" })
  end
end

--- Adds streamed text to the last line; a newline in `delta` starts a new (prefixed) line.
local function stream(buffer, kind, delta)
  if view(buffer).block ~= kind then
    start_block(buffer, kind)
  end
  local prefix = kind == "thinking" and THINKING_PREFIX or ""
  transcript.extend(buffer, vim.split(delta, "\n", { plain = true }), prefix)
  local thinking = view(buffer).thinking
  if kind == "thinking" and thinking then
    thinking.chars = thinking.chars + vim.fn.strchars(delta)
  end
end

--- A notice line of the chat: compaction, retry, abort, errors.
function M.notice(buffer, text)
  separate(buffer)
  transcript.append(buffer, { "» " .. text })
  view(buffer).role = nil
end

local function image_notes(content)
  local notes = {}
  for _, block in ipairs(type(content) == "table" and content or {}) do
    if type(block) == "table" and block.type == "image" then
      local bytes = type(block.data) == "string" and math.floor(#block.data * 3 / 4) or nil
      table.insert(notes, ("[image: %s, %s]"):format(tostring(block.mimeType), cards.size(bytes)))
    end
  end
  return notes
end

--- The user's message (its content as the server saved it): the text, then its images named.
function M.user(buffer, content)
  header(buffer, "user")
  local lines = vim.split(util.content_text(content), "\n", { plain = true })
  transcript.append(buffer, vim.list_extend(lines, image_notes(content)))
end

local function begin_cards(buffer)
  local current = view(buffer)
  if current.block ~= "tool" then
    end_block(buffer)
    gap(buffer)
    current.block = "tool"
  end
end

--- Shows a permission question's `lines` under the running call's card (nil: takes them away).
function M.question(buffer, lines)
  card_tail.question(buffer, lines, begin_cards)
end

local function unfinished_card(buffer, id, card)
  card_tail.unfinished(buffer, id, card, begin_cards)
end

local function finished_card(buffer, id, card)
  card_tail.finished(buffer, id, card, begin_cards, folds("tool_results"))
end

local function tool_result(buffer, event)
  local card = type(event.toolCard) == "table" and event.toolCard
    or cards.fallback(event.name, event.isError, event.content)
  finished_card(buffer, event.toolCallId, card)
end

local function history_assistant(buffer, message)
  header(buffer, "assistant")
  for _, block in ipairs(type(message.content) == "table" and message.content or {}) do
    if block.type == "thinking" and util.present(block.thinking) then
      stream(buffer, "thinking", block.thinking)
    elseif block.type == "text" and util.present(block.text) then
      stream(buffer, "text", block.text)
    elseif block.type == "image" then
      transcript.append(buffer, image_notes({ block }))
    end
    -- a tool call shows as the card on its result's entry (`toolCard`)
  end
  end_block(buffer)
  if message.stopReason == "error" and util.present(message.errorMessage) then
    M.notice(buffer, "error: " .. message.errorMessage)
  elseif message.stopReason == "aborted" then
    M.notice(buffer, "aborted")
  end
end

local REASONS = {
  manual = "asked for",
  threshold = "the context reached the compaction threshold",
  overflow = "the provider refused the context or cut the answer short",
}

--- Under a summary's notice: why, the tokens before → after, the model and cost, the files it
--- read and modified (one per line: `gf` opens them), then the summary itself, folded.
local function summary_card(buffer, card, reason)
  local facts = {}
  if reason then
    table.insert(facts, "why: " .. (REASONS[reason] or reason))
  end
  if util.present(card.tokensBefore) or util.present(card.tokensAfter) then
    local before, after = util.short_number(card.tokensBefore), util.short_number(card.tokensAfter)
    table.insert(facts, ("tokens %s → %s"):format(before, after))
  end
  if util.present(card.model) then
    table.insert(facts, "by " .. card.model)
  end
  if util.present(card.cost) then
    table.insert(facts, ("$%.4f"):format(card.cost))
  end
  local lines = {}
  if #facts > 0 then
    table.insert(lines, RESULT_INDENT .. table.concat(facts, ", "))
  end
  for _, list in ipairs({ { "read", card.readFiles }, { "modified", card.modifiedFiles } }) do
    if type(list[2]) == "table" and #list[2] > 0 then
      table.insert(lines, RESULT_INDENT .. list[1] .. ":")
      for _, path in ipairs(list[2]) do
        table.insert(lines, RESULT_INDENT .. "  " .. path)
      end
    end
  end
  if #lines > 0 then
    transcript.append(buffer, lines)
  end
  local summary = vim.split(tostring(card.summary or ""), "\n", { plain = true })
  transcript.append_folded(buffer, vim.tbl_map(function(line)
    return RESULT_INDENT .. line
  end, summary))
end

M.summary_card = summary_card

local function history_summary(buffer, entry)
  local what = entry.type == "compaction" and "compacted: the summary the model continues from" or "branch summary"
  M.notice(buffer, what)
  summary_card(buffer, type(entry.card) == "table" and entry.card or { summary = entry.summary })
end

local function history_message(buffer, message, entry)
  if message.role == "user" then
    M.user(buffer, message.content)
  elseif message.role == "assistant" then
    history_assistant(buffer, message)
  elseif message.role == "toolResult" then
    tool_result(buffer, {
      toolCallId = message.toolCallId,
      name = message.toolName,
      isError = message.isError,
      content = message.content,
      toolCard = entry.toolCard,
    })
  elseif message.role == "bashExecution" then
    M.notice(buffer, ("! %s (exit %s)"):format(tostring(message.command), tostring(message.exitCode)))
  end
end

--- The conversation of an opened session, from a pi/messages result, drawn as it was streamed.
-- Under a message a context edit (pi 1.6) changed: what the model sees of it now.
local CONTEXT_EDIT_NOTES = {
  [context_edit.removed] = "removed from the context: the model no longer sees the message above"
    .. " (it stays in the session file)",
  [context_edit.replaced] = "replaced in the context: the model sees the text above instead of the original",
}

function M.history(buffer, messages)
  local entries = messages.entries or {}
  local hidden = messages.offset or ((messages.total or #entries) - #entries)
  if hidden > 0 and entries[1] then
    local key = require("pi.config").options.keymaps.chat.earlier
    local how = key and ("move up here or press " .. key) or "move up here or run :PiEarlier"
    M.notice(buffer, ("%d earlier entries (%s to load them)"):format(hidden, how))
    view(buffer).earlier = { before = entries[1].entryId, lnum = transcript.line_count(buffer) }
  end
  for _, entry in ipairs(entries) do
    if entry.type == "message" and type(entry.message) == "table" then
      history_message(buffer, entry.message, entry)
      if CONTEXT_EDIT_NOTES[entry.contextEdit] then
        M.notice(buffer, CONTEXT_EDIT_NOTES[entry.contextEdit])
      end
    elseif entry.type == "compaction" or entry.type == "branch_summary" then
      history_summary(buffer, entry)
    elseif entry.type == "custom_message" then
      M.notice(buffer, ("%s: %s"):format(tostring(entry.customType), util.content_text(entry.content)))
    end
  end
end

local on = {}

function on.message_start(buffer, event)
  if event.role == "assistant" and view(buffer).role ~= "assistant" then
    header(buffer, "assistant")
  end
end

function on.message_end(buffer, event)
  local message = event.message or {}
  if message.role == "user" then
    M.user(buffer, message.content)
  elseif message.role == "assistant" then
    end_block(buffer)
    if message.stopReason == "error" and util.present(message.errorMessage) then
      view(buffer).failure = message.errorMessage
    end
  end
end

--- The provider refused the key: one notice naming the key's source and the fix.
function on.auth_error(buffer, event)
  view(buffer).failure = nil
  M.notice(buffer, ("%s. Store another key with :PiLogin %s"):format(tostring(event.message), event.provider))
end

function on.text_delta(buffer, event)
  stream(buffer, "text", event.delta or "")
end

function on.thinking_delta(buffer, event)
  stream(buffer, "thinking", event.delta or "")
end

function on.toolcall_start(buffer, event)
  unfinished_card(buffer, event.toolCallId, cards.pending(event.name))
end

local function running(buffer, event)
  local card = type(event.toolCard) == "table" and event.toolCard or cards.pending(event.name)
  unfinished_card(buffer, event.toolCallId, card)
end

on.tool_execution_start = running
on.tool_execution_update = running

on.tool_execution_end = tool_result

function on.retry(buffer, event)
  local delay = (event.delayMs or 0) / 1000
  M.notice(
    buffer,
    ("retry %s/%s in %.1fs: %s"):format(event.attempt, event.maxAttempts, delay, tostring(event.errorMessage))
  )
end

function on.compaction_start(buffer, event)
  M.notice(buffer, ("compacting the session (%s)…"):format(tostring(event.reason)))
end

function on.compaction_end(buffer, event)
  if event.aborted then
    M.notice(buffer, "compaction cancelled; the session is unchanged")
  elseif util.present(event.errorMessage) then
    M.notice(buffer, "compaction failed, the session is unchanged: " .. event.errorMessage)
  else
    local before = util.present(event.tokensBefore)
        and (" (" .. util.short_number(event.tokensBefore) .. " tokens summarized)")
      or ""
    M.notice(buffer, ("compacted%s, entry %s"):format(before, tostring(event.entryId)))
    if type(event.card) == "table" then
      summary_card(buffer, event.card, event.reason)
    end
  end
end

function on.branch_summary_start(buffer, _)
  M.notice(buffer, "summarizing the branch being left…")
end

function on.branch_summary_end(buffer, event)
  if event.aborted then
    M.notice(buffer, "branch summary cancelled; the leaf did not move")
  elseif util.present(event.errorMessage) then
    M.notice(buffer, "branch summary failed: " .. event.errorMessage)
  elseif util.present(event.entryId) then
    M.notice(buffer, "summarized the branch left behind, entry " .. event.entryId)
    if type(event.card) == "table" then
      summary_card(buffer, event.card)
    end
  else
    M.notice(buffer, "nothing was left behind to summarize")
  end
end

function on.agent_end(buffer, event)
  end_block(buffer)
  local failure = view(buffer).failure
  view(buffer).failure = nil
  if failure then
    M.notice(buffer, "error: " .. failure)
  elseif event.stopReason == "aborted" then
    M.notice(buffer, "aborted")
  end
end

function on.error(buffer, event)
  M.notice(buffer, "error: " .. tostring(event.message))
end

--- Where the chat offers the earlier history: `{before = entry id, lnum = the notice's line}`, or nil.
function M.earlier(buffer)
  return view(buffer).earlier
end

local function shift_lines(buffer, after, delta)
  card_tail.shift(buffer, after, delta)
  local current = view(buffer)
  for _, place in ipairs({ current.thinking or {}, current }) do
    for _, field in ipairs({ "line", "block_start" }) do
      if place[field] and place[field] > after then
        place[field] = place[field] + delta
      end
    end
  end
end

--- Puts an earlier page of the history (a pi/messages result) in place of the line that offered
--- it, drawn as the history is; windows keep showing what they showed.
function M.prepend_history(buffer, messages)
  local offered = view(buffer).earlier
  if not offered then
    return
  end
  local scratch = vim.api.nvim_create_buf(false, true)
  M.history(scratch, messages)
  local lines = vim.api.nvim_buf_get_lines(scratch, 0, -1, false)
  local page_folds, page_earlier = transcript.folds_of(scratch), view(scratch).earlier
  local page_links = links.of(scratch)
  M.reset(scratch)
  vim.api.nvim_buf_delete(scratch, { force = true })
  table.insert(lines, "")
  local saved = {}
  for _, window in ipairs(vim.fn.win_findbuf(buffer)) do
    saved[window] = vim.api.nvim_win_call(window, vim.fn.winsaveview)
  end
  local at = offered.lnum
  local delta = transcript.replace_line_with(buffer, at, lines, page_folds)
  shift_lines(buffer, at, delta)
  for _, link in ipairs(page_links) do
    links.add(buffer, link.row + at - 1, link.path, link.line)
  end
  code_blocks.highlight(buffer, at, at + #lines - 1)
  view(buffer).earlier = page_earlier and { before = page_earlier.before, lnum = page_earlier.lnum + at - 1 } or nil
  for window, before in pairs(saved) do
    local cursor = before.lnum > at and before.lnum + delta or at + #lines - 1
    local top = before.topline > at and before.topline + delta or math.max(1, cursor - 2)
    vim.api.nvim_win_call(window, function()
      vim.fn.winrestview({ lnum = cursor, topline = top, col = 0 })
    end)
  end
end

--- Renders one pi/event `event` into `buffer`.
function M.event(buffer, event)
  local handler = on[event.type]
  if handler then
    handler(buffer, event)
  end
end

return M
