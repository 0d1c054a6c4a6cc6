" The tree buffer: the leaf, the active path and other branches in different colours.
if exists("b:current_syntax")
  finish
endif

syntax match piTreeHeader /\%1lsession .*/
syntax match piTreeLeaf /◉ \x\{8}/
syntax match piTreeActive /● \x\{8}/
syntax match piTreeOther /○ \x\{8}.*/
syntax match piTreeKind / \x\{8} \zs\S\+:/
syntax match piTreeLabel /  \[[^]]*\]$/

highlight default link piTreeHeader Title
highlight default link piTreeLeaf Special
highlight default link piTreeActive Identifier
highlight default link piTreeOther Comment
highlight default link piTreeKind Type
highlight default link piTreeLabel Tag

let b:current_syntax = "pi-tree"
