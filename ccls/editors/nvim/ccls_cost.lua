-- ccls_cost.lua — Neovim setup for the ccls cost language server (`ccls-cost --stdio`).
--
-- Use it in one of two ways:
--   :source /path/to/ccls_cost.lua          (or `dofile(...)` from init.lua)
--   copy it to ~/.config/nvim/lua/ccls_cost.lua and `require('ccls_cost')` from init.lua
-- Either way it sets itself up from `vim.g.ccls_cost` (set that first to change anything):
--
--   vim.g.ccls_cost = {
--     cmd = { 'ccls-cost', '--stdio' },                 -- default; $CCLS_SERVER overrides it
--     settings = { ccls = { profile = 'RESEARCH', codeLens = { enabled = true } } },
--   }
--
-- Works on Neovim 0.7 and later:
--   >= 0.11  vim.lsp.config('ccls_cost', …) + vim.lsp.enable('ccls_cost'), inlay hints on
--   0.10     vim.lsp.start{…} per buffer, inlay hints on
--   0.7–0.9  vim.lsp.start_client + vim.lsp.buf_attach_client; no inlay hints in these
--            versions, so code lens (the same grade · CU · energy line) is on by default.
-- The command is `ccls-cost`, not `ccls`: Debian's unrelated C++ server owns /usr/bin/ccls.
--
-- Commands: :CclsCostExplain, :CclsCostShowIR (function under the cursor),
--           :CclsCostProfile NAME, :CclsCostRegion NAME.

local M = {}

M.name = 'ccls_cost'
M.filetypes = { 'c', 'cpp', 'cuda', 'python', 'llvm', 'ptx' }
M.root_markers = { 'ccls-cost.toml', 'compile_commands.json', '.git' }

local function has(version)
  return vim.fn.has('nvim-' .. version) == 1
end

-- $CCLS_SERVER: the full command line, as a JSON array or words separated by spaces.
local function command_from_env()
  local raw = vim.env.CCLS_SERVER
  if raw == nil or raw:match('^%s*$') then
    return nil
  end
  if raw:match('^%s*%[') then
    local ok, decoded = pcall(vim.json.decode, raw)
    if ok and type(decoded) == 'table' and #decoded > 0 then
      return decoded
    end
    vim.notify('ccls_cost: $CCLS_SERVER is not a JSON array of strings: ' .. raw, vim.log.levels.ERROR)
    return nil
  end
  return vim.split(vim.trim(raw), '%s+')
end

-- Walks up from `path` to the first directory holding a marker; else the file's directory.
local function find_root(path, markers)
  local dir = vim.fn.fnamemodify(path, ':p:h')
  local start = dir
  while dir ~= nil and dir ~= '' do
    for _, marker in ipairs(markers) do
      if vim.loop.fs_stat(dir .. '/' .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      break
    end
    dir = parent
  end
  return start
end

local function notify(client, method, params)
  if has('0.11') then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

local function settings_of(client)
  -- 0.11 keeps the live table in client.settings; earlier versions in client.config.settings.
  return client.settings or client.config.settings
end

local function our_clients()
  local clients = vim.lsp.get_clients and vim.lsp.get_clients({ name = M.name }) or vim.lsp.get_active_clients()
  local out = {}
  for _, client in ipairs(clients) do
    if client.name == M.name then
      table.insert(out, client)
    end
  end
  return out
end

local function refresh_code_lens(bufnr)
  if has('0.11') then
    vim.lsp.codelens.refresh({ bufnr = bufnr })
  else
    vim.lsp.codelens.refresh()
  end
end

local function on_init(client)
  -- Neovim 0.7 does not advertise workspace/configuration: push the settings instead.
  notify(client, 'workspace/didChangeConfiguration', { settings = settings_of(client) })
  return true
end

local function on_attach(client, bufnr)
  local section = (settings_of(client) or {}).ccls or {}
  local hints = section.hints or {}
  if has('0.10') and hints.enabled ~= false then
    vim.lsp.inlay_hint.enable(true, { bufnr = bufnr })
  end
  if (section.codeLens or {}).enabled then
    local group = vim.api.nvim_create_augroup('ccls_cost_codelens_' .. bufnr, { clear = true })
    vim.api.nvim_create_autocmd({ 'BufEnter', 'CursorHold', 'InsertLeave', 'BufWritePost' }, {
      group = group,
      buffer = bufnr,
      callback = function()
        refresh_code_lens(bufnr)
      end,
    })
    refresh_code_lens(bufnr)
  end
end

-- Sends ccls.explainFunction / ccls.showIR for the cursor and shows the text in a split.
local function run_at_cursor(command, filetype)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = nil
  for _, c in ipairs(our_clients()) do
    if vim.lsp.buf_is_attached(bufnr, c.id) then
      client = c
    end
  end
  if client == nil then
    vim.notify('ccls_cost: the server is not attached to this buffer', vim.log.levels.WARN)
    return
  end
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local request = { command = command, arguments = { params.textDocument.uri, params.position } }
  vim.lsp.buf_request(bufnr, 'workspace/executeCommand', request, function(err, result)
    if err then
      vim.notify('ccls_cost: ' .. command .. ' failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if type(result) ~= 'string' or result == '' then
      vim.notify('ccls_cost: nothing to show here; put the cursor inside an analysed function', vim.log.levels.INFO)
      return
    end
    if filetype == nil then
      -- PTX declares `.version` and `.target sm_XX`; LLVM IR never does.
      filetype = (result:match('%.version%s+%d') and result:match('%.target%s+sm_')) and 'ptx' or 'llvm'
    end
    vim.cmd('vnew')
    local out = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(out, 0, -1, false, vim.split(result, '\n', { plain = true }))
    vim.bo[out].buftype = 'nofile'
    vim.bo[out].bufhidden = 'wipe'
    vim.bo[out].filetype = filetype
    vim.bo[out].modifiable = false
  end)
end

local function set_setting(key, value)
  local clients = our_clients()
  if #clients == 0 then
    vim.notify('ccls_cost: the server is not running in this session', vim.log.levels.WARN)
  end
  for _, client in ipairs(clients) do
    local settings = settings_of(client)
    settings.ccls = settings.ccls or {}
    settings.ccls[key] = value
    notify(client, 'workspace/didChangeConfiguration', { settings = settings })
  end
  local opts = vim.g.ccls_cost or {}
  opts.settings = vim.tbl_deep_extend('force', opts.settings or {}, { ccls = { [key] = value } })
  vim.g.ccls_cost = opts
end

local function user_commands()
  vim.api.nvim_create_user_command('CclsCostExplain', function()
    run_at_cursor('ccls.explainFunction', 'markdown')
  end, { desc = 'ccls: explain the function under the cursor' })
  vim.api.nvim_create_user_command('CclsCostShowIR', function()
    run_at_cursor('ccls.showIR', nil)
  end, { desc = 'ccls: LLVM IR / PTX of the function under the cursor' })
  vim.api.nvim_create_user_command('CclsCostProfile', function(args)
    set_setting('profile', args.args)
  end, { nargs = 1, desc = 'ccls: scoring profile (DEFAULT, RESEARCH, COMMERCIAL, MOBILE, HPC, custom)' })
  vim.api.nvim_create_user_command('CclsCostRegion', function(args)
    set_setting('region', args.args)
  end, { nargs = 1, desc = 'ccls: electricity region for CO2 and USD' })
end

local function register_filetypes()
  if vim.filetype and vim.filetype.add and has('0.8') then
    vim.filetype.add({ extension = { ll = 'llvm', ptx = 'ptx' } })
  else
    -- 0.7: filetype.vim maps *.ll to "lifelines"; `set filetype` here wins over its `setf`.
    local group = vim.api.nvim_create_augroup('ccls_cost_filetypes', { clear = true })
    vim.api.nvim_create_autocmd({ 'BufNewFile', 'BufRead' }, { group = group, pattern = '*.ll', command = 'set filetype=llvm' })
    vim.api.nvim_create_autocmd({ 'BufNewFile', 'BufRead' }, { group = group, pattern = '*.ptx', command = 'set filetype=ptx' })
  end
end

--- The client configuration from user options (exposed for tests and for nvim-lspconfig users).
function M.config(opts)
  opts = opts or {}
  local settings = vim.deepcopy(opts.settings or {})
  settings.ccls = settings.ccls or {}
  if not has('0.10') and (settings.ccls.codeLens or {}).enabled == nil then
    settings.ccls.codeLens = vim.tbl_extend('force', settings.ccls.codeLens or {}, { enabled = true })
  end
  return {
    name = M.name,
    cmd = opts.cmd or command_from_env() or { 'ccls-cost', '--stdio' },
    filetypes = opts.filetypes or M.filetypes,
    root_markers = opts.root_markers or M.root_markers,
    settings = settings,
    init_options = settings.ccls,
    on_init = on_init,
    on_attach = on_attach,
  }
end

local function start_per_buffer(config)
  local clients_by_root = {}
  local group = vim.api.nvim_create_augroup('ccls_cost_start', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = config.filetypes,
    callback = function(args)
      local bufnr = args.buf
      local path = vim.api.nvim_buf_get_name(bufnr)
      if path == '' or vim.bo[bufnr].buftype ~= '' then
        return
      end
      local root = find_root(path, config.root_markers)
      local client_config = vim.tbl_extend('force', config, { root_dir = root })
      client_config.root_markers = nil
      client_config.filetypes = nil
      if has('0.10') then
        vim.lsp.start(client_config, { bufnr = bufnr })
        return
      end
      local id = clients_by_root[root]
      if id == nil or vim.lsp.get_client_by_id(id) == nil then
        id = vim.lsp.start_client(client_config)
        if id == nil then
          vim.notify('ccls_cost: could not start ' .. table.concat(config.cmd, ' '), vim.log.levels.ERROR)
          return
        end
        clients_by_root[root] = id
      end
      vim.lsp.buf_attach_client(bufnr, id)
    end,
  })
end

function M.setup(opts)
  local config = M.config(opts)
  if vim.fn.executable(config.cmd[1]) ~= 1 then
    vim.notify(
      ('ccls_cost: `%s` not found. Install the server with `pip install <path to the ccls repository>`, '
        .. 'or set vim.g.ccls_cost = { cmd = {...} } / $CCLS_SERVER.'):format(config.cmd[1]),
      vim.log.levels.WARN
    )
  end
  register_filetypes()
  user_commands()
  if has('0.11') then
    vim.lsp.config(M.name, config)
    vim.lsp.enable(M.name)
  else
    start_per_buffer(config)
  end
  M.active_config = config
  return M
end

if not vim.g.ccls_cost_no_setup then
  M.setup(vim.g.ccls_cost)
end

return M
