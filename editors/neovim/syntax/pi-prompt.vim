" The prompt input is markdown the user writes: highlighted with Vim's markdown syntax, as the chat
" (see syntax/pi-chat.vim for why not treesitter; the plugin empties this buffer after each send).
if exists("b:current_syntax")
  finish
endif

runtime! syntax/markdown.vim
unlet! b:current_syntax

let b:current_syntax = "pi-prompt"
