-- Where the tool cards go in the chat. The cards of the calls not finished yet (a call whose
-- arguments stream, a running command and its output so far) sit at the end of the transcript and
-- are drawn again as they change; a finished call's card is written for good just above them,
-- with its folds and links. Tools run one after the other, so the finished cards keep the calls'
-- order. Should anything else be appended meanwhile (a notice), the unfinished cards start again
-- below it.
local cards = require("pi.cards")
local links = require("pi.links")
local transcript = require("pi.transcript")

local M = {}

-- Per buffer: `{start, stop, order = {ids}, cards = {id → card}, question = lines}`; start..stop
-- are the lines of the unfinished cards (stop = start - 1 when there are none); `question`: a
-- permission question's lines, under the card of the call running (the first unfinished one:
-- tools run in order).
local tails = {}

function M.reset(buffer)
  tails[buffer] = nil
end

local function tail_of(buffer)
  tails[buffer] = tails[buffer] or { order = {}, cards = {} }
  return tails[buffer]
end

local function unfinished_lines(tail)
  local lines = {}
  for index, id in ipairs(tail.order) do
    vim.list_extend(lines, cards.render(tail.cards[id], true).lines)
    if index == 1 and tail.question then
      vim.list_extend(lines, tail.question)
    end
  end
  return lines
end

local function is_last(buffer, tail)
  return tail.start ~= nil and tail.stop == transcript.line_count(buffer)
end

-- Writes `finished` (a card's lines, for good) then the unfinished cards; returns the line of
-- the first of `finished`. `before_first` makes room when the cards start a new block.
local function draw(buffer, finished, before_first, folds)
  local tail = tail_of(buffer)
  if not is_last(buffer, tail) then
    before_first(buffer)
    tail.start = transcript.next_line(buffer)
  end
  local start = tail.start
  for _, fold in ipairs(folds or {}) do
    transcript.add_fold(buffer, { start = start + fold.start - 1, stop = start + fold.stop - 1 })
  end
  local lines = vim.list_extend(vim.list_slice(finished), unfinished_lines(tail))
  transcript.replace_tail(buffer, start, lines)
  tail.start = start + #finished
  tail.stop = start + #lines - 1
  return start
end

--- Shows (or updates) the card of a call not finished yet.
function M.unfinished(buffer, id, card, before_first)
  local tail = tail_of(buffer)
  if not tail.cards[id] then
    table.insert(tail.order, id)
  end
  tail.cards[id] = card
  draw(buffer, {}, before_first)
end

--- The card of a finished call, written for good; `folded`: fold what the card folds (its raw
--- arguments are folded in any case).
function M.finished(buffer, id, card, before_first, folded)
  local tail = tail_of(buffer)
  if tail.order[1] == id then
    tail.question = nil -- the call asked about ended: the question was answered or withdrawn
  end
  tail.cards[id] = nil
  tail.order = vim.tbl_filter(function(other)
    return other ~= id
  end, tail.order)
  local built = cards.render(card, false)
  local folds = vim.tbl_filter(function(fold)
    return folded or fold.always
  end, built.folds)
  local start = draw(buffer, built.lines, before_first, folds)
  for _, link in ipairs(built.links) do
    links.add(buffer, start + link.row - 1, link.path, link.line)
  end
end

--- Whether a call runs (or streams its arguments): a card a permission question can go under.
function M.has_unfinished(buffer)
  local tail = tails[buffer]
  return tail ~= nil and #tail.order > 0
end

--- Shows `lines` (a permission question) under the running call's card; nil takes them away.
function M.question(buffer, lines, before_first)
  local tail = tail_of(buffer)
  if tail.question == nil and lines == nil then
    return
  end
  tail.question = lines
  draw(buffer, {}, before_first)
end

--- Earlier history was put above line `after`, `delta` lines longer.
function M.shift(buffer, after, delta)
  local tail = tails[buffer]
  if tail and tail.start and tail.start > after then
    tail.start, tail.stop = tail.start + delta, tail.stop + delta
  end
end

return M
