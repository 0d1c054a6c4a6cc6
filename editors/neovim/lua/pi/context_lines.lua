-- What the :PiContext buffer shows of pi/context, as lines (pure, tested without a server): the
-- headline, a bar drawn in text (one letter per kind of part, `|` where compaction starts), its
-- legend, then the parts largest first, each line mapped to its part for the buffer's keys.
local util = require("pi.util")

local M = {}

M.BAR_WIDTH = 60

-- The bar's groups, in order: the letter drawn for each and its name.
M.GROUPS = {
  { key = "system", letter = "S", name = "system prompt" },
  { key = "files", letter = "F", name = "context files" },
  { key = "skills", letter = "K", name = "skills index" },
  { key = "tools", letter = "T", name = "tools" },
  { key = "extensions", letter = "E", name = "extensions" },
  { key = "summaries", letter = "Y", name = "summaries" },
  { key = "messages", letter = "M", name = "messages" },
  { key = "provider", letter = "P", name = "provider's count beyond estimates" },
}

local GROUP_OF_KIND = {
  base = "system",
  systemFile = "system",
  appendSystem = "system",
  environment = "system",
  contextFile = "files",
  nestedContextFile = "files",
  skills = "skills",
  tools = "tools",
  extension = "extensions",
  compactionSummary = "summaries",
  branchSummary = "summaries",
  message = "messages",
  usageDifference = "provider",
}

local EDITABLE_ROLES = { user = true, assistant = true, toolResult = true, custom = true }

function M.group_of(part)
  return GROUP_OF_KIND[part.kind] or "messages"
end

--- Whether the part's message can be forgotten, replaced and restored.
function M.editable(part)
  if not util.present(part.entryId) then
    return false
  end
  return part.kind == "nestedContextFile" or (part.kind == "message" and EDITABLE_ROLES[part.role] == true)
end

local function totals(context)
  local by_group = {}
  for _, part in ipairs(context.parts) do
    local group = M.group_of(part)
    by_group[group] = (by_group[group] or 0) + part.tokens
  end
  return by_group
end

--- The bar: `width` cells for the context window, each group's share in its letter, `.` for the
--- free space, `|` where automatic compaction starts.
function M.bar(context, width)
  width = width or M.BAR_WIDTH
  local window = math.max(1, context.contextWindow)
  local by_group = totals(context)
  local cells = {}
  for _, group in ipairs(M.GROUPS) do
    local tokens = by_group[group.key] or 0
    if tokens > 0 then
      local count = math.max(1, math.floor(tokens / window * width + 0.5))
      for _ = 1, count do
        if #cells < width then
          table.insert(cells, group.letter)
        end
      end
    end
  end
  while #cells < width do
    table.insert(cells, ".")
  end
  if util.present(context.compactAt) then
    local at = math.min(width, math.max(1, math.floor(context.compactAt / window * width + 0.5)))
    cells[at] = "|"
  end
  return "[" .. table.concat(cells) .. "]"
end

function M.legend(context)
  local by_group, parts = totals(context), {}
  for _, group in ipairs(M.GROUPS) do
    if (by_group[group.key] or 0) > 0 then
      table.insert(parts, ("%s %s %s"):format(group.letter, group.name, util.short_number(by_group[group.key])))
    end
  end
  return table.concat(parts, "  ")
end

function M.headline(context)
  local percent = math.floor(context.total / math.max(1, context.contextWindow) * 100 + 0.5)
  local free
  if util.present(context.compactAt) then
    local at, left = util.short_number(context.compactAt), util.short_number(context.freeToCompaction)
    free = ("compacts at %s: %s free"):format(at, left)
  else
    free = ("automatic compaction off: %s free"):format(util.short_number(context.freeToWindow))
  end
  return ("Context of the next request: %s / %s tokens (%d%%), %s (%s)"):format(
    util.short_number(context.total),
    util.short_number(context.contextWindow),
    percent,
    free,
    context.basis == "usage" and "provider's count + estimates" or "estimated"
  )
end

local function part_line(part)
  local what = part.kind == "message" and (part.role or "message") or part.label
  local text = util.present(part.preview) and part.preview or (util.present(part.path) and part.path or "")
  local edited = util.present(part.contextEdit) and (" [%s]"):format(part.contextEdit) or ""
  local tokens = part.tokens < 0 and ("-" .. util.short_number(-part.tokens)) or util.short_number(part.tokens)
  return ("%7s  %-18s %s%s"):format(tokens, what:sub(1, 18), text, edited)
end

--- The parts largest first (the forgotten ones, at 0 tokens, after the others, in order).
function M.sorted_parts(context)
  local indexed = {}
  for index, part in ipairs(context.parts) do
    table.insert(indexed, { index = index, part = part })
  end
  table.sort(indexed, function(a, b)
    if a.part.tokens ~= b.part.tokens then
      return a.part.tokens > b.part.tokens
    end
    return a.index < b.index
  end)
  local parts = {}
  for _, item in ipairs(indexed) do
    table.insert(parts, item.part)
  end
  return parts
end

M.HELP = "<CR> open file / show in chat   x forget   c replace   u restore   R refresh   q close"

--- The buffer's lines and, by line number, the part each shows.
function M.layout(context)
  local lines = { M.headline(context), M.bar(context), M.legend(context), M.HELP, "" }
  local parts_at = {}
  for _, part in ipairs(M.sorted_parts(context)) do
    table.insert(lines, part_line(part))
    parts_at[#lines] = part
  end
  table.insert(lines, "")
  table.insert(lines, "Forgetting or replacing a message changes what the model sees from the next request on;")
  table.insert(lines, "the message itself stays in the session file.")
  return lines, parts_at
end

return M
