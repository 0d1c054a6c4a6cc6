-- luacheck (Debian's lua-check) over the Neovim plugin and its test init: `make lint`.
std = "luajit"
-- Neovim plugins set fields of `vim` (vim.bo, vim.wo, vim.g, vim.notify) by design.
globals = { "vim" }
max_line_length = 120
