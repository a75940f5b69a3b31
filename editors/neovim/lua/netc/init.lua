-- netc for Neovim: starts `netc lsp` for `.net` files (filetype `netc`) and shows its inlay
-- hints (each line's shape and memory in the active scenario) and code lenses (each
-- scenario's memory against its budget).
--
--   require('netc').setup({
--     cmd = { 'netc', 'lsp' },                 -- or a path to the binary
--     settings = { netc = { inlayHints = { params = true } } },   -- spec/lsp.md, "Settings"
--   })
--
-- Works on Neovim 0.7 and newer. From 0.10 on, hints use `vim.lsp.inlay_hint`; before that,
-- this module asks for them and shows them as virtual text at the end of their lines.
-- With nvim-lspconfig or `vim.lsp.config` (0.11), you need none of this file but the
-- inlay-hint call: see editors/neovim/README.md.
local M = {}

M.config = {
  cmd = { 'netc', 'lsp' },
  settings = { netc = {} },
  root_markers = { '.git' },
  inlay_hints = true,
  code_lens = true,
}

local ns = vim.api.nvim_create_namespace('netc_inlay_hints')
local has_native_hints = vim.lsp.inlay_hint ~= nil

--- The directory above `path` that holds one of `markers`, else `path`'s own directory.
local function find_root(path, markers)
  local dir = vim.fn.fnamemodify(path, ':p:h')
  local current = dir
  while current and current ~= '' do
    for _, marker in ipairs(markers) do
      if (vim.uv or vim.loop).fs_stat(current .. '/' .. marker) then
        return current
      end
    end
    local parent = vim.fn.fnamemodify(current, ':h')
    if parent == current then
      break
    end
    current = parent
  end
  return dir
end

--- `client:request(...)` from Neovim 0.11, `client.request(...)` before.
local function request(client, method, params, handler, bufnr)
  if vim.fn.has('nvim-0.11') == 1 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- The netc language client attached to buffer `bufnr`, if any.
function M.client_of(bufnr)
  local clients = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr }) or vim.lsp.buf_get_clients(bufnr)
  for _, client in pairs(clients) do
    if client.name == 'netc' then
      return client
    end
  end
end

--- Asks the server for the hints of `bufnr` and shows them as end-of-line virtual text
--- (Neovim before 0.10, which has no inlay-hint display).
function M.refresh_hints(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = M.client_of(bufnr)
  if not client or not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = vim.api.nvim_buf_line_count(bufnr), character = 0 } },
  }
  local changedtick = vim.api.nvim_buf_get_changedtick(bufnr)
  request(client, 'textDocument/inlayHint', params, function(err, result)
    if err or not vim.api.nvim_buf_is_loaded(bufnr) or vim.api.nvim_buf_get_changedtick(bufnr) ~= changedtick then
      return
    end
    vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
    local by_line = {}
    for _, hint in ipairs(result or {}) do
      local label = hint.label
      if type(label) == 'table' then
        local parts = {}
        for _, part in ipairs(label) do
          table.insert(parts, part.value)
        end
        label = table.concat(parts)
      end
      local line = hint.position.line
      by_line[line] = by_line[line] and (by_line[line] .. ' ' .. label) or label
    end
    local last = vim.api.nvim_buf_line_count(bufnr) - 1
    for line, label in pairs(by_line) do
      if line <= last then
        vim.api.nvim_buf_set_extmark(bufnr, ns, line, 0, {
          virt_text = { { ' ' .. label, 'Comment' } },
          virt_text_pos = 'eol',
        })
      end
    end
  end, bufnr)
end

--- The hints shown by `refresh_hints`: { [line] = label }, 0-based lines.
function M.shown_hints(bufnr)
  local out = {}
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, ns, 0, -1, { details = true })) do
    local details = mark[4] or {}
    local text = details.virt_text and details.virt_text[1] and details.virt_text[1][1] or ''
    out[mark[2]] = vim.trim(text)
  end
  return out
end

local function enable_hints(bufnr)
  if has_native_hints then
    -- 0.10 and newer: enable(true, { bufnr = n }); some 0.10 nightlies took (bufnr, true).
    if not pcall(vim.lsp.inlay_hint.enable, true, { bufnr = bufnr }) then
      pcall(vim.lsp.inlay_hint.enable, bufnr, true)
    end
    return
  end
  local group = vim.api.nvim_create_augroup('netc_hints_' .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'TextChanged' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      M.refresh_hints(bufnr)
    end,
  })
  -- Diagnostics come after every analysis: the figures are ready then.
  vim.api.nvim_create_autocmd('DiagnosticChanged', {
    group = group,
    buffer = bufnr,
    callback = function()
      M.refresh_hints(bufnr)
    end,
  })
  M.refresh_hints(bufnr)
end

local function enable_lenses(bufnr)
  local group = vim.api.nvim_create_augroup('netc_lenses_' .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'CursorHold' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      vim.lsp.codelens.refresh()
    end,
  })
  vim.lsp.codelens.refresh()
end

--- Makes a scenario of the current file the active one (`:NetcScenario [name]`).
function M.select_scenario(name)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.client_of(bufnr)
  if not client then
    vim.notify('netc: no language server attached', vim.log.levels.WARN)
    return
  end
  local uri = vim.uri_from_bufnr(bufnr)
  local function activate(scenario)
    request(client, 'workspace/executeCommand', { command = 'netc.setActiveScenario', arguments = { uri, scenario } }, function()
      M.refresh_hints(bufnr)
      vim.lsp.codelens.refresh()
    end, bufnr)
  end
  if name and name ~= '' then
    return activate(name)
  end
  request(client, 'textDocument/codeLens', { textDocument = { uri = uri } }, function(_, lenses)
    local items = {}
    for _, lens in ipairs(lenses or {}) do
      if lens.command and lens.command.arguments then
        table.insert(items, { name = lens.command.arguments[2], title = lens.command.title })
      end
    end
    vim.ui.select(items, {
      prompt = 'Active scenario',
      format_item = function(item)
        return item.name .. '  ' .. item.title
      end,
    }, function(item)
      if item then
        activate(item.name)
      end
    end)
  end, bufnr)
end

--- `netc report --format markdown` of the current file in a scratch buffer (`:NetcReport`).
function M.report()
  local file = vim.api.nvim_buf_get_name(0)
  local output = vim.fn.systemlist({ M.config.cmd[1], 'report', file, '--format', 'markdown', '--color', 'never' })
  vim.cmd('new')
  vim.api.nvim_buf_set_lines(0, 0, -1, false, output)
  vim.bo.buftype = 'nofile'
  vim.bo.bufhidden = 'wipe'
  vim.bo.filetype = 'markdown'
end

local function attach(bufnr)
  local path = vim.api.nvim_buf_get_name(bufnr)
  local root = find_root(path, M.config.root_markers)
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  capabilities.workspace = capabilities.workspace or {}
  capabilities.workspace.inlayHint = { refreshSupport = true }
  local config = {
    name = 'netc',
    cmd = M.config.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = M.config.settings,
    settings = M.config.settings,
    capabilities = capabilities,
    handlers = {
      ['workspace/inlayHint/refresh'] = function()
        if not has_native_hints then
          for _, b in ipairs(vim.api.nvim_list_bufs()) do
            if vim.bo[b].filetype == 'netc' then
              M.refresh_hints(b)
            end
          end
        end
        return vim.NIL
      end,
    },
    on_attach = function(_, b)
      if M.config.inlay_hints then
        enable_hints(b)
      end
      if M.config.code_lens then
        enable_lenses(b)
      end
    end,
  }
  if vim.lsp.start then
    vim.lsp.start(config, { bufnr = bufnr })
    return
  end
  -- Neovim 0.7: one client per root, started by hand.
  M.clients = M.clients or {}
  local id = M.clients[root]
  if not id or not vim.lsp.get_client_by_id(id) then
    id = vim.lsp.start_client(config)
    M.clients[root] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', M.config, opts or {})
  local group = vim.api.nvim_create_augroup('netc', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = 'netc',
    callback = function(args)
      attach(args.buf)
    end,
  })
  vim.api.nvim_create_user_command('NetcScenario', function(args)
    M.select_scenario(args.args)
  end, { nargs = '?', desc = 'netc: make a scenario of this file the active one' })
  vim.api.nvim_create_user_command('NetcReport', M.report, { desc = 'netc: the report of this file' })
  vim.api.nvim_create_user_command('NetcHints', function()
    M.refresh_hints(0)
  end, { desc = 'netc: refresh the inlay hints' })
end

return M
