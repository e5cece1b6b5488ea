-- A person who never sets vim.g.mnemo (mnemo on PATH, store from the
-- environment): the server starts without any error — no "mnemo settings:
-- invalid length 0" from an empty table sent as [] — and works. A setting of
-- the wrong type is reported, which shows the capture would see such errors.
local H = require('helper')
local check = H.check

local root = H.workspace()
local id = H.remember({ '--kind', 'gotcha', '--title', 'Release the lock before restarting' })
H.cli({ 'export', '--enable' })
vim.env.PATH = vim.fs.dirname(H.binary) .. ':' .. vim.env.PATH
-- What goes over the wire as initializationOptions.
local sent = {}
local rpc_start = vim.lsp.rpc.start
vim.lsp.rpc.start = function(...)
  local rpc = rpc_start(...)
  local request = rpc.request
  rpc.request = function(method, params, ...)
    if method == 'initialize' then
      table.insert(sent, vim.json.encode(params.initializationOptions))
    end
    return request(method, params, ...)
  end
  return rpc
end
H.start(nil)
check('vim.g.mnemo is not set', vim.g.mnemo == nil)

local function errors_since(from)
  local found = {}
  for i = from + 1, #H.said do
    local s = H.said[i]
    if s.level >= vim.log.levels.ERROR or s.message:find('settings', 1, true) then
      table.insert(found, s)
    end
  end
  return found
end

vim.cmd.edit(root .. '/MEMORY.md')
local mirror = vim.api.nvim_get_current_buf()
local client = H.client(mirror)
check('the client starts and attaches without vim.g.mnemo', client ~= nil and client.initialized)
-- Ask something that needs the store: by then any settings error has been sent.
local hover = client:request_sync('textDocument/hover', {
  textDocument = { uri = vim.uri_from_bufnr(mirror) },
  position = { line = H.line_of(mirror, '^%- %[#' .. id .. '%]'), character = 4 },
}, 10000, mirror)
check('the server answers (hover on the note)', hover and hover.result and hover.result.contents.value:find('Release the lock', 1, true) ~= nil, hover)
H.wait(500, function() return #errors_since(0) > 0 end)
check('no error and no settings complaint from the server or the plugin', #errors_since(0) == 0, errors_since(0))
local messages = vim.fn.execute('messages')
check(':messages holds no settings error', not messages:find('invalid length', 1, true) and not messages:find('mnemo settings', 1, true), messages)
check('initializationOptions went out as the JSON object {}', sent[1] == '{}', sent)

-- A wrong setting is reported: the same capture sees server errors.
for _, c in ipairs(vim.lsp.get_clients({ name = 'mnemo' })) do
  c:stop(true)
end
H.wait(5000, function() return #vim.lsp.get_clients({ name = 'mnemo' }) == 0 end)
vim.g.mnemo = { debounce_ms = 'soon' }
local from = #H.said
vim.cmd('edit!')
client = H.client(mirror)
check('a setting of the wrong type is reported to the person', H.wait(10000, function()
  return H.said_since(from, '^mnemo settings: ') ~= nil
end), vim.list_slice(H.said, from + 1))
check('with a setting, initializationOptions carry it', sent[2] == '{"debounceMs":"soon"}', sent)

H.finish()
