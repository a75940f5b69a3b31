-- netc files: `#` comments, 4-space indentation (the layout of `netc fmt`).
vim.bo.commentstring = '# %s'
vim.bo.comments = ':##,:#'
vim.bo.expandtab = true
vim.bo.shiftwidth = 4
vim.bo.softtabstop = 4
vim.b.undo_ftplugin = 'setlocal commentstring< comments< expandtab< shiftwidth< softtabstop<'

-- Syntax colours from the tree-sitter grammar (editors/tree-sitter-net) when its parser is
-- installed (parser/net.so on the runtimepath; editors/neovim/README.md): Neovim 0.9 and
-- newer. Without the parser this does nothing, and the buffer keeps no colours but the
-- server's semantic tokens.
if vim.treesitter.language.register then
  vim.treesitter.language.register('net', 'netc')
  pcall(vim.treesitter.start, 0, 'net')
end
