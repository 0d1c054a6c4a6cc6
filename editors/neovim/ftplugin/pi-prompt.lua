-- The prompt input is markdown the user writes: wrap it and highlight it as such.
if vim.b.did_ftplugin then
  return
end
vim.b.did_ftplugin = true

vim.bo.textwidth = 0
pcall(vim.treesitter.start, 0, "markdown")
vim.b.undo_ftplugin = "setlocal textwidth< | lua pcall(vim.treesitter.stop, 0)"
