--- Client-side handlers (`vim.lsp.commands`) for the commands the server's
--- code actions carry: the ones that need a reason or a confirmation ask for
--- it, every note command says what it did ("mnemo: #12 is revoked"), and the
--- conflict resolutions check the memory buffer in the way :w does, so what
--- stays unapplied is kept and marked in the buffer.
local mnemo = require('mnemo')
local memory = require('mnemo.memory')

local M = {}

--- Run a note command on the server and confirm its result (or say why not).
local function run(client, command, arguments, say)
  client:request('workspace/executeCommand', { command = command, arguments = arguments }, function(err, result)
    if err then
      return vim.notify('mnemo: ' .. err.message, vim.log.levels.ERROR)
    end
    if result and result.id then
      (say or mnemo.confirm)(result)
    end
  end)
end

--- A command that needs a reason: asked for unless the action carries one.
local function with_reason(command)
  return function(cmd, ctx)
    local id = cmd.arguments[1]
    local client = vim.lsp.get_client_by_id(ctx.client_id)
    if cmd.arguments[2] then
      return run(client, command, { id, cmd.arguments[2] })
    end
    mnemo.ask_reason(command, id, function(reason)
      run(client, command, { id, reason })
    end)
  end
end

--- A command that needs nothing more than the note.
local function plain(command)
  return function(cmd, ctx)
    run(vim.lsp.get_client_by_id(ctx.client_id), command, cmd.arguments)
  end
end

--- Keep mine / Take theirs / check in: a check-in of the memory buffer, as :w.
local function checkin(resolution)
  return function(cmd, ctx)
    local target = cmd.arguments[1] or {}
    local bufnr = target.uri and memory.buffer(target.uri) or ctx.bufnr
    if not bufnr or not mnemo.memory_root(vim.api.nvim_buf_get_name(bufnr)) then
      return vim.notify('mnemo: ' .. cmd.command .. ' needs the memory buffer open', vim.log.levels.ERROR)
    end
    memory.write(bufnr, resolution and { [resolution] = { target.id } } or nil)
  end
end

M.handlers = {
  ['mnemo.revoke'] = with_reason('mnemo.revoke'),
  ['mnemo.flagStale'] = with_reason('mnemo.flagStale'),
  ['mnemo.reinstate'] = plain('mnemo.reinstate'),
  ['mnemo.promote'] = plain('mnemo.promote'),
  ['mnemo.accept'] = plain('mnemo.accept'),
  ['mnemo.reject'] = with_reason('mnemo.reject'),
  ['mnemo.reanchor'] = function(cmd, ctx)
    run(vim.lsp.get_client_by_id(ctx.client_id), 'mnemo.reanchor', cmd.arguments, function(result)
      vim.notify(('mnemo: #%s is re-anchored; the note is now #%s'):format(result.id, result.supersededBy))
    end)
  end,
  ['mnemo.keepMine'] = checkin('keepMine'),
  ['mnemo.takeTheirs'] = checkin('takeTheirs'),
  ['mnemo.checkin'] = checkin(nil),
  ['mnemo.forget'] = function(cmd, ctx)
    local id = cmd.arguments[1]
    vim.ui.input({ prompt = ('Forget #%d and its history for good? Type "confirm": '):format(id) }, function(answer)
      if answer ~= 'confirm' then
        return vim.notify('mnemo: nothing done (not confirmed)', vim.log.levels.WARN)
      end
      local client = vim.lsp.get_client_by_id(ctx.client_id)
      client:request('workspace/executeCommand', { command = 'mnemo.forget', arguments = { id, 'confirm' } }, function(err)
        vim.notify(err and ('mnemo: ' .. err.message) or ('mnemo: #%d is forgotten'):format(id),
          err and vim.log.levels.ERROR or vim.log.levels.INFO)
      end)
    end)
  end,
  ['mnemo.showHistory'] = function(cmd, ctx)
    local client = vim.lsp.get_client_by_id(ctx.client_id)
    local result = mnemo.request(client, 'workspace/executeCommand', cmd)
    vim.lsp.util.open_floating_preview(vim.split(result.markdown, '\n'), 'markdown', { border = 'rounded' })
  end,
}

for name, handler in pairs(M.handlers) do
  vim.lsp.commands[name] = handler
end

return M
