" The chat buffer reads as markdown: Vim's markdown syntax highlights it. Not Neovim's treesitter
" highlighter: while it parses a long buffer in the background it draws from its tree of the text
" before the last change, and fails ("Invalid 'end_col': out of range") when that text was longer;
" the chat gets shorter whenever a command's live output or the whole conversation is replaced.
if exists("b:current_syntax")
  finish
endif

runtime! syntax/markdown.vim
unlet! b:current_syntax

let b:current_syntax = "pi-chat"
