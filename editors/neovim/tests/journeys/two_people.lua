-- Two people, two Neovims (this one, A, and a second headless Neovim, B,
-- driven over its --listen socket), editing the same memory at once. A saves
-- first; B's save applies B's other edits and shows the one entry both
-- changed as a conflict, kept as typed in B's buffer. A's clean buffer is
-- refreshed with B's work. B takes A's version from the menu. Nothing typed
-- is lost: the store holds both people's edits.
local H = require('helper')
local check, cli = H.check, H.cli

local root = H.workspace()
local lock = H.remember({ '--kind', 'gotcha', '--title', 'Release the lock before restarting' })
local cache = H.remember({ '--kind', 'finding', '--title', 'Cache hit ratio is 0.91' })
cli({ 'export', '--enable' })
local options = { binary = H.binary, debounce_ms = 20 }
H.start(options)

-- B: a second Neovim with the same plugin and config.
local socket = H.tmp .. '/b.sock'
local job = vim.fn.jobstart({ H.nvim, '--headless', '-u', 'NONE', '--listen', socket }, { cwd = root })
assert(H.wait(10000, function() return vim.uv.fs_stat(socket) ~= nil end), 'the second Neovim did not start')
local b = vim.fn.sockconnect('pipe', socket, { rpc = true })
local function on_b(code, ...)
  return vim.rpcrequest(b, 'nvim_exec_lua', code, { ... })
end
on_b([[
  H = require('helper')
  H.start(...)
  vim.cmd('Mnemo edit')
  H.client(0)
]], options)
local function b_buffer()
  return on_b([[
    local bufnr = vim.api.nvim_get_current_buf()
    return { text = H.text(bufnr), modified = vim.bo[bufnr].modified, unapplied = vim.b[bufnr].mnemo_unapplied,
      conflicts = #H.diagnostics(bufnr, 'conflict') }
  ]])
end
check('B has the checkout open', b_buffer().text:find('Release the lock before restarting', 1, true) ~= nil)

-- A and B type at the same time.
local a = H.open_memory()
H.edit(a, function(text)
  return (text:gsub('Release the lock before restarting', 'Release the lock before restarting the daemon')
    :gsub('## Tasks\n', "## Tasks\n\n- low · A's new task\n", 1))
end)
on_b([[
  H.edit(0, function(text)
    return (text:gsub('Release the lock before restarting', 'Release both locks before restarting')
      :gsub('Cache hit ratio is 0%.91', 'Cache hit ratio is 0.93')
      :gsub('## Tasks\n', "## Tasks\n\n- low · B's new task\n", 1))
  end)
]])

-- A saves first.
vim.cmd('write')
local titles = H.notes_by_title()
check("A's edits land", titles['Release the lock before restarting the daemon'] and titles["A's new task"] and H.state(lock) == 'superseded', titles)
check("A's buffer is saved", not vim.bo[a].modified)

-- A reads on, the cursor on A's gotcha.
vim.api.nvim_win_set_cursor(0, { H.line_of(a, 'Release the lock before restarting the daemon') + 1, 0 })

-- B saves: B's own edits land, the shared entry is a conflict kept in B's buffer.
on_b([[vim.cmd('write')]])
titles = H.notes_by_title()
check("B's other edits land", titles['Cache hit ratio is 0.93'] and titles["B's new task"] and H.state(cache) == 'superseded', titles)
check("B's edit of the entry A changed was not applied", titles['Release both locks before restarting'] == nil)
local seen = b_buffer()
check("B's buffer keeps B's edit as typed, modified, one unapplied", seen.text:find('Release both locks before restarting', 1, true)
  and seen.modified and seen.unapplied == 1, seen)
check("B sees the conflict marked", H.wait(10000, function() return b_buffer().conflicts == 1 end), b_buffer())

-- A's clean buffer follows the store: B's work appears without A doing anything.
check("A's buffer is refreshed with B's edits", H.wait(15000, function()
  return H.has(a, 'Cache hit ratio is 0.93') and H.has(a, "B's new task")
end), H.text(a))
check("the refresh leaves A's cursor on the entry A was reading", vim.api.nvim_get_current_line():find('Release the lock before restarting the daemon', 1, true) ~= nil,
  vim.api.nvim_get_current_line())
check("A's buffer still unmodified, and A's own edits are there", not vim.bo[a].modified
  and H.has(a, 'Release the lock before restarting the daemon') and H.has(a, "A's new task"))

-- B takes A's version from the menu.
local taken = on_b([[
  local bufnr = vim.api.nvim_get_current_buf()
  vim.api.nvim_win_set_cursor(0, { H.line_of(bufnr, 'Release both locks') + 1, 0 })
  local offered, picked = H.code_action('^Take theirs')
  H.wait(10000, function() return not vim.bo[bufnr].modified end)
  return { offered = offered, picked = picked }
]])
check('B picks Take theirs', taken.picked, taken)
seen = b_buffer()
check("B's buffer now shows A's version, saved, no conflict", not seen.modified and seen.unapplied == 0
  and seen.text:find('Release the lock before restarting the daemon', 1, true) and not seen.text:find('Release both locks', 1, true), seen)
check("B's conflict diagnostic is gone", H.wait(10000, function() return b_buffer().conflicts == 0 end), b_buffer())

-- Nothing lost: every edit of both people is in the store and in the mirror on disk.
local function mirror_has_all()
  local mirror = table.concat(vim.fn.readfile(root .. '/MEMORY.md'), '\n')
  for _, title in ipairs({ 'Release the lock before restarting the daemon', "A's new task", 'Cache hit ratio is 0.93', "B's new task" }) do
    if not mirror:find(title, 1, true) then return false end
  end
  return true
end
-- The language server stands for the mirror: it follows the check-ins.
H.wait(15000, mirror_has_all)
local mirror = table.concat(vim.fn.readfile(root .. '/MEMORY.md'), '\n')
for _, title in ipairs({ 'Release the lock before restarting the daemon', "A's new task", 'Cache hit ratio is 0.93', "B's new task" }) do
  check('in the store and the mirror: ' .. title, H.notes_by_title()[title] ~= nil and mirror:find(title, 1, true) ~= nil)
end

pcall(vim.rpcrequest, b, 'nvim_exec_lua', 'H.finished = true; for _, c in ipairs(vim.lsp.get_clients()) do c:stop(true) end', {})
pcall(vim.rpcnotify, b, 'nvim_command', 'qa!')
vim.fn.jobwait({ job }, 5000)
vim.fn.jobstop(job)
H.finish()
