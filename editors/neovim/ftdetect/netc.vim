" netc: `.net` files are netc models (filetype `netc`).
autocmd BufRead,BufNewFile *.net setfiletype netc
