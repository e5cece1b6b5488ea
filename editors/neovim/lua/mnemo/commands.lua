--- `:Mnemo <sub>`: edit, discard, mirror, recall, remember, revoke, stale,
--- reinstate, promote, accept, reject, history, check.
local mnemo = require('mnemo')

local M = {}

local function id_or_cursor(args)
  local id = tonumber((args[1] or ''):match('^#?(%d+)$')) or mnemo.id_under_cursor()
  if not id then
    error('mnemo: put the cursor on a #id (or give one: :Mnemo revoke 12)')
  end
  return id
end

local function notify_result(ok, result)
  if not ok then
    return vim.notify(tostring(result), vim.log.levels.ERROR)
  end
  mnemo.confirm(result)
end

--- Ask why, then run a server command that needs a reason.
local function with_reason(args, command)
  local id = id_or_cursor(args)
  mnemo.ask_reason(command, id, function(reason)
    notify_result(pcall(mnemo.execute, command, { id, reason }))
  end)
end

--- Run the CLI in the workspace; its output, or an error.
local function cli(args)
  local out = mnemo.run_cli(args)
  if out.code ~= 0 then
    error('mnemo ' .. table.concat(args, ' ') .. ': ' .. vim.trim(out.stderr))
  end
  return out.stdout
end

M.subcommands = {
  edit = function()
    vim.cmd.edit(vim.fn.fnameescape(mnemo.memory_name(mnemo.workspace())))
  end,
  discard = function()
    require('mnemo.memory').discard(vim.api.nvim_get_current_buf())
  end,
  mirror = function()
    -- Where the workspace config puts it ([memory_export] path), as the server reads it.
    local mirror = mnemo.mirror(mnemo.workspace())
    if not mirror.path then
      error('mnemo: this workspace has no mirror file (its [memory_export] path is outside it?)')
    end
    if not mirror.enabled and not vim.uv.fs_stat(mirror.path) then
      error(('mnemo: no mirror at %s yet; `mnemo export --enable` writes it and keeps it current'):format(mirror.path))
    end
    vim.cmd.edit(vim.fn.fnameescape(mirror.path))
  end,
  recall = function(args)
    local query = table.concat(args, ' ')
    if query == '' then
      return vim.ui.input({ prompt = 'Recall: ' }, function(q)
        if q and q ~= '' then
          M.subcommands.recall({ q })
        end
      end)
    end
    mnemo.last_recall = nil
    local client = mnemo.client(mnemo.workspace())
    local response = client:request_sync('workspace/symbol', { query = query }, 30000)
    local items = response and response.result or {}
    -- The server logs what it hid just before it answers; let that arrive.
    vim.wait(500, function()
      return mnemo.last_recall ~= nil
    end, 10)
    local summary = mnemo.last_recall or (items[1] and items[1].containerName) or ''
    if #items == 0 then
      return vim.notify('mnemo: nothing found for "' .. query .. '". ' .. summary)
    end
    vim.ui.select(items, {
      prompt = ('Recall "%s" (%s)'):format(query, summary:gsub('^mnemo recall.-; ', '')),
      format_item = function(item)
        return item.name
      end,
    }, function(item)
      if item then
        vim.lsp.util.show_document(item.location, client.offset_encoding, { focus = true })
      end
    end)
  end,
  remember = function(_, range)
    local anchor
    if range then
      local file = vim.fs.relpath and vim.fs.relpath(mnemo.workspace(), vim.api.nvim_buf_get_name(0))
      if file then
        anchor = ('%s:%d-%d'):format(file, range[1], range[2])
      end
    end
    local kinds = { 'gotcha', 'finding', 'decision', 'directive', 'task', 'reference', 'operational' }
    vim.ui.select(kinds, { prompt = 'Kind' }, function(kind)
      if not kind then
        return
      end
      vim.ui.select({ 'high', 'medium', 'low' }, { prompt = 'Priority' }, function(priority)
        if not priority then
          return
        end
        vim.ui.input({ prompt = 'Title: ' }, function(title)
          if not title or title == '' then
            return
          end
          local args = { 'remember', '--as-human', '--kind', kind, '--priority', priority, '--title', title }
          if anchor then
            vim.list_extend(args, { '--anchor', anchor })
          end
          local ok, out = pcall(cli, args)
          vim.notify(ok and ('mnemo: remembered ' .. vim.trim(out)) or out, ok and vim.log.levels.INFO or vim.log.levels.ERROR)
        end)
      end)
    end)
  end,
  revoke = function(args)
    with_reason(args, 'mnemo.revoke')
  end,
  stale = function(args)
    with_reason(args, 'mnemo.flagStale')
  end,
  reinstate = function(args)
    notify_result(pcall(mnemo.execute, 'mnemo.reinstate', { id_or_cursor(args) }))
  end,
  promote = function(args)
    notify_result(pcall(mnemo.execute, 'mnemo.promote', { id_or_cursor(args) }))
  end,
  accept = function(args)
    notify_result(pcall(mnemo.execute, 'mnemo.accept', { id_or_cursor(args) }))
  end,
  reject = function(args)
    with_reason(args, 'mnemo.reject')
  end,
  history = function(args)
    local result = mnemo.execute('mnemo.showHistory', { id_or_cursor(args) })
    vim.lsp.util.open_floating_preview(vim.split(result.markdown, '\n'), 'markdown', { border = 'rounded' })
  end,
  check = function()
    local ok, out = pcall(cli, { 'check' })
    vim.notify(ok and vim.trim(out) or out, ok and vim.log.levels.INFO or vim.log.levels.ERROR)
  end,
}

function M.run(opts)
  local sub = opts.fargs[1]
  local handler = M.subcommands[sub or '']
  if not handler then
    local names = vim.tbl_keys(M.subcommands)
    table.sort(names)
    return vim.notify('mnemo: :Mnemo ' .. table.concat(names, '|'), vim.log.levels.ERROR)
  end
  local range = opts.range > 0 and { opts.line1, opts.line2 } or nil
  local ok, err = pcall(handler, vim.list_slice(opts.fargs, 2), range)
  if not ok then
    vim.notify(tostring(err), vim.log.levels.ERROR)
  end
end

function M.complete(arg_lead, line)
  if line:match('^%S+%s+%S+%s') then
    return {}
  end
  local names = vim.tbl_filter(function(name)
    return vim.startswith(name, arg_lead)
  end, vim.tbl_keys(M.subcommands))
  table.sort(names)
  return names
end

return M
