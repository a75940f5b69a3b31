-- The Neovim integration driven headless against the real `netc lsp`:
--
--   NETC_BIN=target/debug/netc nvim --headless --clean -c 'luafile editors/neovim/test/e2e.lua'
--
-- Opens a model in a temporary directory through this directory's ftdetect and lua/netc, and
-- checks that the filetype is detected, the server attaches, diagnostics arrive, inlay hints
-- arrive and are shown, code lenses arrive, and that after an edit the hints follow. Exits 0
-- when every check passed.
local script = debug.getinfo(1, 'S').source:sub(2)
local here = vim.fn.fnamemodify(script, ':p:h:h')
local netc = os.getenv('NETC_BIN') or 'netc'
vim.opt.runtimepath:prepend(here)
vim.cmd('filetype plugin on')
vim.cmd('runtime! ftdetect/netc.vim')

local passed, failed = 0, 0
local function check(name, ok, detail)
  if ok then
    passed = passed + 1
    io.stdout:write('ok   ' .. name .. (detail and ('  ' .. detail) or '') .. '\n')
  else
    failed = failed + 1
    io.stdout:write('FAIL ' .. name .. (detail and ('  ' .. detail) or '') .. '\n')
  end
end

local dir = vim.fn.tempname()
vim.fn.mkdir(dir, 'p')
local file = dir .. '/mlp.net'
vim.fn.writefile({
  'model mlp(classes: int = 10) {',
  '    input x: f32[N, 784]',
  '    h = relu(linear(x, 256))',
  '    unused_t = relu(h)',
  '    return linear(h, classes)',
  '}',
  '',
  'infer serve { model mlp()  batch 32  no_grad  eval  budget 64 MiB }',
  'train tune { model mlp()  batch 64  optimizer adam  budget 1 GiB }',
}, file)

local netc_module = require('netc')
netc_module.setup({ cmd = { netc, 'lsp' }, root_markers = { 'netc-root-marker-that-is-not-there' } })
vim.cmd('edit ' .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
check('filetype of a .net file', vim.bo.filetype == 'netc', vim.bo.filetype)
check('ftplugin: # comments', vim.bo.commentstring == '# %s', vim.bo.commentstring)

local function client()
  return netc_module.client_of(buf)
end
check('netc lsp attached', vim.wait(20000, function() return client() ~= nil end, 50))

local got_diagnostics = vim.wait(30000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
local diagnostics = vim.diagnostic.get(buf)
local messages = {}
for _, d in ipairs(diagnostics) do
  table.insert(messages, string.format('%d:%s %s', d.lnum + 1, tostring(d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or ''), (d.message:gsub('\n.*', ''))))
end
check('diagnostics arrive: the unused variable', got_diagnostics and diagnostics[1].lnum == 3 and diagnostics[1].message:find('unused_t', 1, true) ~= nil, table.concat(messages, ' | '))

local function hints()
  if vim.lsp.inlay_hint and vim.lsp.inlay_hint.get then
    local out = {}
    for _, h in ipairs(vim.lsp.inlay_hint.get({ bufnr = buf })) do
      local label = h.inlay_hint.label
      if type(label) == 'table' then
        local parts = {}
        for _, p in ipairs(label) do table.insert(parts, p.value) end
        label = table.concat(parts)
      end
      out[h.inlay_hint.position.line] = label
    end
    return out
  end
  return netc_module.shown_hints(buf)
end

local shown = {}
local got_hints = vim.wait(20000, function()
  shown = hints()
  return shown[2] ~= nil
end, 100)
local listing = {}
for line, label in pairs(shown) do table.insert(listing, (line + 1) .. ': ' .. label) end
table.sort(listing)
check('inlay hints arrive and are shown', got_hints and shown[2]:find('f32[32, 256]', 1, true) ~= nil, table.concat(listing, ' | '))
check('the input line has its hint', shown[1] ~= nil and shown[1]:find('f32[32, 784]', 1, true) ~= nil, shown[1])

local lens_titles = {}
local got_lenses = vim.wait(20000, function()
  lens_titles = {}
  for _, lens in ipairs(vim.lsp.codelens.get(buf)) do
    if lens.command then table.insert(lens_titles, lens.command.title) end
  end
  return #lens_titles > 0
end, 100)
check('code lenses arrive: memory against the budget', got_lenses and #lens_titles == 2 and lens_titles[1]:find('of 64.0 MiB budget', 1, true) ~= nil, table.concat(lens_titles, ' | '))

-- Nothing asks for hints or lenses here: the plugin does, on attach and after each analysis.
-- An edit: the layer widens, the hints follow.
vim.api.nvim_buf_set_lines(buf, 2, 3, false, { '    h = relu(linear(x, 512))' })
local followed = vim.wait(20000, function()
  shown = hints()
  return shown[2] ~= nil and shown[2]:find('f32[32, 512]', 1, true) ~= nil
end, 100)
check('after an edit the hints follow', followed, shown[2])

-- `:NetcScenario tune`: the other scenario becomes the active one, the hints show its batch.
vim.cmd('NetcScenario tune')
local switched = vim.wait(20000, function()
  shown = hints()
  return shown[2] ~= nil and shown[2]:find('f32[64, 512]', 1, true) ~= nil
end, 100)
check(':NetcScenario makes another scenario active', switched, shown[2])

-- An error: a typo in a call is reported where it is.
vim.api.nvim_buf_set_lines(buf, 2, 3, false, { '    h = relu(lineer(x, 512))' })
local error_seen = vim.wait(20000, function()
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.severity == vim.diagnostic.severity.ERROR and d.lnum == 2 then return true end
  end
  return false
end, 50)
check('an error arrives at its line', error_seen)

local v = vim.version()
io.stdout:write(string.format('neovim e2e (nvim %d.%d.%d): %d passed, %d failed\n', v.major, v.minor, v.patch, passed, failed))
local all = vim.lsp.get_clients or vim.lsp.get_active_clients
for _, c in pairs(all()) do vim.lsp.stop_client(c.id) end
vim.wait(1000, function() return #all() == 0 end, 50)
vim.fn.delete(dir, 'rf')
vim.cmd(failed == 0 and 'qa!' or 'cquit!')
