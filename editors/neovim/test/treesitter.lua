-- The tree-sitter grammar (editors/tree-sitter-net) in Neovim, headless:
--
--   NETC_TS_RTP=DIR nvim --headless --clean -c 'luafile editors/neovim/test/treesitter.lua'
--
-- DIR holds parser/net.so, compiled from editors/tree-sitter-net/src/parser.c (.ci/packaging
-- does it); Neovim finds parsers there on its runtimepath, as it finds an installed one.
-- Checks that the parser loads, parses a model with the new constructs without an error
-- node, that this directory's queries/net/highlights.scm compiles and captures what it
-- should, and that the highlighter starts on the buffer. Uses only the API of Neovim 0.7
-- (Debian's); `vim.treesitter.start` (0.9+, which ftplugin/netc.lua calls) is not here.
local script = debug.getinfo(1, 'S').source:sub(2)
local here = vim.fn.fnamemodify(script, ':p:h:h')
vim.opt.runtimepath:prepend(here)
vim.opt.runtimepath:prepend(assert(os.getenv('NETC_TS_RTP'), 'set NETC_TS_RTP'))

local passed, failed = 0, 0
local function check(name, ok, detail)
  if ok then
    passed = passed + 1
    io.stdout:write('ok   ' .. name .. '\n')
  else
    failed = failed + 1
    io.stdout:write('FAIL ' .. name .. (detail and ('  ' .. tostring(detail)) or '') .. '\n')
  end
end

local lines = {
  '## A model with every construct the editors colour.',
  'model tiny(n: int = 4) {',
  '    input x: f32[N, 8]',
  '    buffer mask: bool[1, n], persistent=false',
  '    y = relu(input)',
  '    for i in 0..n // 2 {',
  '        y = layer(y, i)',
  '    }',
  '    if n > 2 { y = repeat 2 f(y) }',
  '    else { y = -y }',
  '    return y',
  '}',
  'infer serve { model tiny()  batch 1  no_grad  budget 64 MiB }',
}
local buf = vim.api.nvim_create_buf(false, true)
vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)

local loaded, err = pcall(vim.treesitter.require_language, 'net')
check('the parser loads from parser/net.so on the runtimepath', loaded, err)
local parser = vim.treesitter.get_parser(buf, 'net')
local root = parser:parse()[1]:root()
check('the model parses without an error node', not root:has_error(), root:sexpr())

local query_ok, query = pcall(vim.treesitter.get_query, 'net', 'highlights')
check('queries/net/highlights.scm compiles', query_ok and query ~= nil, query)

local captured = {}
if query_ok and query then
  for id, node in query:iter_captures(root, buf, 0, -1) do
    local row, col = node:range()
    local text = vim.treesitter.get_node_text(node, buf)
    -- The last capture of a node is the one Neovim shows.
    captured[row .. ':' .. col .. ':' .. text] = query.captures[id]
  end
end
local function capture(row, text)
  local col = lines[row + 1]:find(text, 1, true) - 1
  return captured[row .. ':' .. col .. ':' .. text]
end
local expected = {
  { 0, '## A model with every construct the editors colour.', 'comment.documentation' },
  { 1, 'model', 'keyword' },
  { 1, 'tiny', 'function' },
  { 1, 'int', 'type' },
  { 2, 'input', 'keyword' },
  { 3, 'buffer', 'keyword' },
  { 3, 'persistent', 'variable.parameter' },
  { 4, 'relu', 'function.call' },
  { 4, 'input', 'variable' },
  { 5, 'for', 'keyword.repeat' },
  { 5, '..', 'operator' },
  { 5, '//', 'operator' },
  { 8, 'repeat', 'keyword.repeat' },
  { 9, 'else', 'keyword.conditional' },
  { 12, 'serve', 'label' },
  { 12, 'no_grad', 'property' },
  { 12, 'MiB', 'type.builtin' },
}
for _, e in ipairs(expected) do
  local got = capture(e[1], e[2])
  check(('line %d: `%s` is @%s'):format(e[1] + 1, e[2], e[3]), got == e[3], got)
end

local started, herr = pcall(vim.treesitter.highlighter.new, parser)
check('the highlighter starts on the buffer', started, herr)

io.stdout:write(('neovim tree-sitter: %d passed, %d failed\n'):format(passed, failed))
vim.cmd(failed == 0 and 'qall!' or 'cquit!')
