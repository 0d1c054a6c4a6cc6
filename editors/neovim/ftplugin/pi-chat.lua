-- The chat buffer reads as markdown: highlight it with Neovim's bundled markdown parser.
if vim.b.did_ftplugin then
  return
end
vim.b.did_ftplugin = true

pcall(vim.treesitter.start, 0, "markdown")
vim.b.undo_ftplugin = "lua pcall(vim.treesitter.stop, 0)"
