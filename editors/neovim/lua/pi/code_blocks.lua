-- Highlighting of the fenced code blocks of an answer, decided per block once the block is
-- complete: with treesitter when Neovim has the language's parser (the code is parsed once, as a
-- string, and coloured with extmarks: not the buffer highlighter, which fails on a chat that gets
-- shorter, see syntax/pi-chat.vim), else with the language's syntax file through the markdown
-- syntax's fenced languages (the chat's syntax is loaded again with the language added).
local M = {}

local NAMESPACE = vim.api.nvim_create_namespace("pi-chat-code")
local ALIASES = {
  py = "python",
  js = "javascript",
  ts = "typescript",
  sh = "bash",
  shell = "bash",
  zsh = "bash",
  console = "bash",
  rs = "rust",
  yml = "yaml",
  ["c++"] = "cpp",
}
-- Which languages have a treesitter parser and highlights query (true), or not (false).
local parsers = {}

local function treesitter_language(name)
  local lang = vim.treesitter.language.get_lang(name) or name
  if parsers[lang] == nil then
    local loaded = pcall(vim.treesitter.language.add, lang) and pcall(vim.treesitter.language.inspect, lang)
    local ok, query = false, nil
    if loaded then
      ok, query = pcall(vim.treesitter.query.get, lang, "highlights")
    end
    parsers[lang] = ok and query ~= nil
  end
  return parsers[lang] and lang or nil
end

--- The fenced code blocks of `lines`: `{language, first, last}` (the code's lines, from 1).
function M.blocks(lines)
  local found, open = {}, nil
  for index, line in ipairs(lines) do
    if open then
      if line:match("^%s*" .. open.fence .. "`*%s*$") then
        open.last = index - 1
        table.insert(found, open)
        open = nil
      end
    else
      local fence, info = line:match("^%s*(```+)%s*([^%s`]*)")
      if fence then
        open = { language = info:lower(), first = index + 1, fence = fence }
      end
    end
  end
  return found
end

local function with_treesitter(buffer, lang, first_row, lines)
  local code = table.concat(lines, "\n")
  local ok, parser = pcall(vim.treesitter.get_string_parser, code, lang)
  if not ok then
    return false
  end
  local tree = parser:parse()[1]
  local query = vim.treesitter.query.get(lang, "highlights")
  for id, node in query:iter_captures(tree:root(), code, 0, -1) do
    local name = query.captures[id]
    if not vim.startswith(name, "_") and name ~= "spell" and name ~= "nospell" then
      local start_row, start_col, end_row, end_col = node:range()
      pcall(vim.api.nvim_buf_set_extmark, buffer, NAMESPACE, first_row + start_row, start_col, {
        end_row = first_row + end_row,
        end_col = end_col,
        hl_group = "@" .. name .. "." .. lang,
        priority = 120,
      })
    end
  end
  return true
end

local function with_syntax_file(buffer, language)
  local known = vim.b[buffer].pi_fenced_languages or {}
  if vim.tbl_contains(known, language) then
    return true
  end
  if #vim.api.nvim_get_runtime_file("syntax/" .. language .. ".vim", false) == 0 then
    return false
  end
  table.insert(known, language)
  vim.b[buffer].pi_fenced_languages = known
  vim.api.nvim_buf_call(buffer, function()
    vim.b.current_syntax = nil
    vim.cmd("syntax clear")
    vim.cmd("runtime! syntax/pi-chat.vim")
  end)
  return true
end

--- Highlights the code blocks between lines `first` and `last` of `buffer`; returns how each
--- block was highlighted (`treesitter`, `syntax` or `none`), in order.
function M.highlight(buffer, first, last)
  local lines = vim.api.nvim_buf_get_lines(buffer, first - 1, last, false)
  local how = {}
  for _, block in ipairs(M.blocks(lines)) do
    local language = ALIASES[block.language] or block.language
    local code = vim.list_slice(lines, block.first, block.last)
    local lang = language ~= "" and treesitter_language(language)
    local used = "none"
    if lang and with_treesitter(buffer, lang, first + block.first - 2, code) then
      used = "treesitter"
    elseif language ~= "" and with_syntax_file(buffer, language) then
      used = "syntax"
    end
    table.insert(how, used)
  end
  return how
end

--- How the blocks of the whole chat were highlighted (for tests and :checkhealth-like checks):
--- the languages given to the syntax, and whether treesitter marks exist.
function M.state(buffer)
  return {
    syntax = vim.b[buffer].pi_fenced_languages or {},
    treesitter_marks = #vim.api.nvim_buf_get_extmarks(buffer, NAMESPACE, 0, -1, {}),
  }
end

function M.reset(buffer)
  if vim.api.nvim_buf_is_valid(buffer) then
    vim.api.nvim_buf_clear_namespace(buffer, NAMESPACE, 0, -1)
  end
end

return M
