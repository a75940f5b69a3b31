-- netc files: `#` comments, 4-space indentation (the layout of `netc fmt`).
vim.bo.commentstring = '# %s'
vim.bo.comments = ':##,:#'
vim.bo.expandtab = true
vim.bo.shiftwidth = 4
vim.bo.softtabstop = 4
vim.b.undo_ftplugin = 'setlocal commentstring< comments< expandtab< shiftwidth< softtabstop<'
