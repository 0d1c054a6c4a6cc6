" The chat buffer reads as markdown: Vim's markdown syntax highlights it. Not Neovim's treesitter
" highlighter: while it parses a long buffer in the background it draws from its tree of the text
" before the last change, and fails ("Invalid 'end_col': out of range") when that text was longer;
" the chat gets shorter whenever a command's live output or the whole conversation is replaced.
" Code blocks are coloured one by one once complete (lua/pi/code_blocks.lua): by treesitter when
" the language has a parser, else by its syntax file, listed in b:pi_fenced_languages for the
" markdown syntax's fenced languages (the user's own list is left as it was).
if exists("b:current_syntax")
  finish
endif

let s:user_fenced = get(g:, "markdown_fenced_languages", v:null)
let g:markdown_fenced_languages = get(b:, "pi_fenced_languages", [])
runtime! syntax/markdown.vim
unlet! b:current_syntax
if s:user_fenced is v:null
  unlet g:markdown_fenced_languages
else
  let g:markdown_fenced_languages = s:user_fenced
endif

" Tool cards (lua/pi/cards.lua): the header by status, the diff, the command and its output.
syntax match piCardRunning /^◌ .*$/
syntax match piCardDone /^✓ .*$/
syntax match piCardFailed /^✗ .*$/
syntax match piCardDenied /^⊘ .*$/
syntax match piCardAdded /^    +.*$/
syntax match piCardRemoved /^    -.*$/
syntax match piCardHunk /^    @@.*$/
syntax match piCardCommand /^    \$ .*$/
syntax match piCardOutput /^    │ .*$/
syntax match piCardFold /^    ▸ .*$/

highlight default link piCardRunning Comment
highlight default link piCardDone DiagnosticOk
highlight default link piCardFailed DiagnosticError
highlight default link piCardDenied DiagnosticWarn
highlight default link piCardAdded DiffAdd
highlight default link piCardRemoved DiffDelete
highlight default link piCardHunk DiffChange
highlight default link piCardCommand Statement
highlight default link piCardOutput Normal
highlight default link piCardFold Folded

let b:current_syntax = "pi-chat"
