-- Headless Neovim run for tests/e2e/test_neovim.py:
--   nvim --headless --clean -u tests/e2e/nvim/init.lua
-- Sets the server up exactly as a user would (vim.g.ccls_cost + :source ccls_cost.lua, the server
-- command from $CCLS_SERVER), opens $CCLS_NVIM_EXAMPLE, and writes what it observed as JSON to
-- $CCLS_NVIM_RESULT: diagnostics, hover text, code lenses, filetypes. The pytest asserts on it.

local result = { nvim = tostring(vim.version().major) .. '.' .. vim.version().minor .. '.' .. vim.version().patch, errors = {}, messages = {} }
local timeout_ms = tonumber(vim.env.CCLS_NVIM_TIMEOUT_MS or '240000')

local function fail(message)
  table.insert(result.errors, message)
end

-- Keep the server's window/showMessage texts for the report (and for failures).
local show_message = vim.lsp.handlers['window/showMessage']
vim.lsp.handlers['window/showMessage'] = function(err, params, ctx, config)
  table.insert(result.messages, params and params.message or vim.inspect(err))
  return show_message(err, params, ctx, config)
end

-- Every function gets its lens here (the default, hints.show = costly, shows only the costly ones).
vim.g.ccls_cost = { settings = { ccls = { codeLens = { enabled = true }, hints = { show = "all" } } } }
vim.cmd('source ' .. vim.fn.fnameescape(vim.env.CCLS_COST_LUA))

local function write_result()
  local file = assert(io.open(vim.env.CCLS_NVIM_RESULT, 'w'))
  file:write(vim.json.encode(result))
  file:close()
end

local function our_client(bufnr)
  for _, client in pairs(vim.lsp.buf_get_clients(bufnr)) do
    if client.name == 'ccls_cost' then
      return client
    end
  end
  return nil
end

local function line_of(bufnr, needle)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    local col = line:find(needle, 1, true)
    if col then
      return i - 1, col - 1
    end
  end
  return nil, nil
end

local function hover_text(bufnr, line, character)
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, position = { line = line, character = character } }
  local responses = vim.lsp.buf_request_sync(bufnr, 'textDocument/hover', params, 60000)
  for _, response in pairs(responses or {}) do
    if response.error then
      fail('hover error: ' .. vim.inspect(response.error))
    elseif response.result and response.result.contents then
      local contents = response.result.contents
      return { kind = contents.kind, value = contents.value or vim.inspect(contents) }
    end
  end
  return nil
end

local function run()
  local bufnr = vim.api.nvim_get_current_buf()
  result.file = vim.api.nvim_buf_get_name(bufnr)
  result.filetype = vim.bo[bufnr].filetype
  if not vim.wait(30000, function() return our_client(bufnr) ~= nil end, 100) then
    fail('no ccls_cost client attached to ' .. result.file)
    return
  end
  local client = our_client(bufnr)
  result.cmd = client.config.cmd
  result.offset_encoding = client.offset_encoding

  -- Diagnostics arrive once the file is compiled and analysed.
  local got = vim.wait(timeout_ms, function()
    return #vim.diagnostic.get(bufnr) > 0
  end, 200)
  if not got then
    fail('no diagnostics within ' .. timeout_ms .. ' ms')
  end
  result.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(result.diagnostics, { lnum = d.lnum, col = d.col, code = d.code, source = d.source, severity = d.severity, message = d.message })
  end

  local line, col = line_of(bufnr, vim.env.CCLS_NVIM_FUNCTION .. '(')
  result.function_line = line
  if line then
    result.hover = hover_text(bufnr, line, col + 1)
  else
    fail('function ' .. vim.env.CCLS_NVIM_FUNCTION .. ' not in the buffer')
  end

  -- Code lens as Neovim's own codelens module shows it (it resolves lenses that need it).
  vim.lsp.codelens.refresh()
  vim.wait(60000, function()
    local lenses = vim.lsp.codelens.get(bufnr)
    if #lenses == 0 then
      return false
    end
    for _, lens in ipairs(lenses) do
      if not (lens.command and lens.command.title) then
        return false
      end
    end
    return true
  end, 200)
  result.code_lens = {}
  for _, lens in ipairs(vim.lsp.codelens.get(bufnr)) do
    table.insert(result.code_lens, {
      line = lens.range.start.line,
      title = lens.command and lens.command.title or vim.NIL,
      command = lens.command and lens.command.command or vim.NIL,
      arguments = lens.command and lens.command.arguments or vim.NIL,
    })
  end

  -- :CclsCostExplain / :CclsCostShowIR open the server's text in a scratch split.
  local function scratch_after(command)
    local win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_cursor(win, { line + 3, 4 }) -- inside the function body
    local before = #vim.api.nvim_list_wins()
    vim.cmd(command)
    local opened = vim.wait(60000, function() return #vim.api.nvim_list_wins() > before end, 100)
    if not opened then
      fail(command .. ' opened no window')
      return nil
    end
    local buf = vim.api.nvim_get_current_buf()
    local shown = { filetype = vim.bo[buf].filetype, text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, 20, false), '\n') }
    vim.cmd('close')
    vim.api.nvim_set_current_win(win)
    return shown
  end
  if line then
    result.explain = scratch_after('CclsCostExplain')
    result.show_ir = scratch_after('CclsCostShowIR')
  end

  -- A settings change while running: :CclsCostProfile sends didChangeConfiguration.
  vim.cmd('CclsCostProfile MOBILE')
  if line then
    local changed = vim.wait(60000, function()
      local h = hover_text(bufnr, line, col + 1)
      result.hover_after_profile = h
      return h ~= nil and h.value:find('MOBILE (active)', 1, true) ~= nil
    end, 500)
    result.profile_switched = changed
  end

  -- Filetype mappings for LLVM IR and PTX, and the client attaching to an .ll file.
  vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.CCLS_NVIM_LL))
  result.ll_filetype = vim.bo.filetype
  local ll_buf = vim.api.nvim_get_current_buf()
  result.ll_attached = vim.wait(30000, function() return our_client(ll_buf) ~= nil end, 100)
  vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.CCLS_NVIM_PTX))
  result.ptx_filetype = vim.bo.filetype
end

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  nested = true, -- :edit inside this callback must fire BufRead/FileType
  callback = function()
    vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.CCLS_NVIM_EXAMPLE))
    local ok, err = pcall(run)
    if not ok then
      fail('lua error: ' .. tostring(err))
    end
    write_result()
    vim.cmd('qall!')
  end,
})
