-- The prompt input is markdown the user writes: wrap it (syntax/pi-prompt.vim highlights it).
if vim.b.did_ftplugin then
  return
end
vim.b.did_ftplugin = true

vim.bo.textwidth = 0
vim.b.undo_ftplugin = "setlocal textwidth<"
