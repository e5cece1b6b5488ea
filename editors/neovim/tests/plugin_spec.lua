-- Headless Neovim against the real mnemo binary: the client attaches to
-- MEMORY.md and not to unrelated markdown; hover returns the body; a code
-- action revokes a note; editing a memory:// buffer and :w creates the
-- expected events; a conflicting write shows the conflict diagnostic;
-- :checkhealth mnemo runs without errors.
local binary = os.getenv('MNEMO_TEST_BINARY')
local tmp = os.getenv('MNEMO_TEST_DIR')
local root = tmp .. '/project'
local failures = 0

local function check(name, ok, detail)
  if ok then
    print('ok   ' .. name)
  else
    failures = failures + 1
    print('FAIL ' .. name .. (detail and (': ' .. vim.inspect(detail)) or ''))
  end
end

local function cli(args)
  local out = vim.system(vim.list_extend({ binary }, args), { cwd = root, text = true }):wait()
  assert(out.code == 0, table.concat(args, ' ') .. ': ' .. out.stderr)
  return out.stdout
end

local function json(args)
  return vim.json.decode(cli(vim.list_extend({ '--json' }, args)))
end

-- A workspace with two notes and its mirror.
vim.fn.mkdir(root .. '/.git', 'p')
vim.fn.mkdir(root .. '/src', 'p')
vim.fn.writefile({ 'fn main() {}', 'let guard = lock();', 'restart(guard);' }, root .. '/src/lock.rs')
vim.fn.writefile({ '# Unrelated', 'Some notes.' }, root .. '/README.md')
local lock = vim.trim(cli({ 'remember', '--kind', 'gotcha', '--title', 'Release the lock before restarting', '--body', 'Or the new daemon deadlocks.' })):gsub('#', '')
local cache = vim.trim(cli({ 'remember', '--kind', 'finding', '--title', 'Cache hit ratio is 0.91' })):gsub('#', '')
cli({ 'export', '--enable' })
vim.fn.chdir(root)

vim.opt.runtimepath:prepend(os.getenv('MNEMO_PLUGIN_DIR'))
vim.g.mnemo = { binary = binary, debounce_ms = 20 }
vim.cmd('filetype on')
vim.cmd('runtime plugin/mnemo.lua')
vim.lsp.enable('mnemo')

local function attached(bufnr)
  return #vim.lsp.get_clients({ bufnr = bufnr, name = 'mnemo' }) > 0
end

-- Unrelated markdown: never attached.
vim.cmd.edit(root .. '/README.md')
local readme = vim.api.nvim_get_current_buf()
vim.wait(1000, function() return attached(readme) end)
check('not attached to unrelated markdown', not attached(readme))

-- The mirror: attached; hover shows the body.
vim.cmd.edit(root .. '/MEMORY.md')
local mirror = vim.api.nvim_get_current_buf()
check('attached to MEMORY.md', vim.wait(10000, function() return attached(mirror) end, 20))
local client = vim.lsp.get_clients({ bufnr = mirror, name = 'mnemo' })[1]
local lines = vim.api.nvim_buf_get_lines(mirror, 0, -1, false)
local lock_line
for i, l in ipairs(lines) do
  if l:match('^%- %[#' .. lock .. '%]') then lock_line = i - 1 end
end
local hover = client:request_sync('textDocument/hover', {
  textDocument = { uri = vim.uri_from_bufnr(mirror) },
  position = { line = lock_line, character = 4 },
}, 10000, mirror)
local body = hover and hover.result and hover.result.contents.value or ''
check('hover returns the body', body:find('Or the new daemon deadlocks.', 1, true) ~= nil, body)

-- A code action revokes the note; the plugin asks for the reason.
local actions = client:request_sync('textDocument/codeAction', {
  textDocument = { uri = vim.uri_from_bufnr(mirror) },
  range = { start = { line = lock_line, character = 0 }, ['end'] = { line = lock_line, character = 0 } },
  context = { diagnostics = {} },
}, 10000, mirror).result
local revoke
for _, a in ipairs(actions) do
  if a.command and a.command.command == 'mnemo.revoke' then revoke = a end
end
check('a Revoke code action is offered', revoke ~= nil, actions)
local asked
vim.ui.input = function(opts, on_confirm) asked = opts.prompt; on_confirm(nil) end
client:exec_cmd(revoke.command, { bufnr = mirror })
-- Give a request that should not have been sent the time to land.
vim.wait(500, function() return json({ 'show', lock }).state ~= 'active' end, 50)
check('the code action asks why, and a dismissed prompt does nothing',
  asked == ('Revoke #%d, because: '):format(lock) and json({ 'show', lock }).state == 'active', asked)
vim.ui.input = function(_, on_confirm) on_confirm('wrong lock order') end
vim.api.nvim_win_set_cursor(0, { lock_line + 1, 0 })
client:exec_cmd(revoke.command, { bufnr = mirror })
check('the code action revoked the note', vim.wait(10000, function()
  return json({ 'show', lock }).state == 'revoked'
end, 50), json({ 'show', lock }))

-- Edit the memory buffer and :w — the edit becomes events.
vim.cmd('Mnemo edit')
local memory = vim.api.nvim_get_current_buf()
local name = vim.api.nvim_buf_get_name(memory)
check('Mnemo edit opens memory://<workspace>/MEMORY.md', name == 'memory://' .. root .. '/MEMORY.md', name)
check('the checkout is in the buffer', vim.api.nvim_buf_get_lines(memory, 0, 1, false)[1]:match('^<!%-%- mnemo checkout') ~= nil)
local text = table.concat(vim.api.nvim_buf_get_lines(memory, 0, -1, false), '\n')
text = text:gsub('Cache hit ratio is 0%.91', 'Cache hit ratio is 0.93'):gsub('## Tasks\n', '## Tasks\n\n- low · Typed in Neovim\n', 1)
vim.api.nvim_buf_set_lines(memory, 0, -1, false, vim.split(text, '\n'))
vim.cmd('write')
local history = json({ 'history', cache })
check(':w superseded the edited note', history[#history].kind == 'superseded', history)
local listed = json({ 'list' }).notes
local titles = {}
for _, n in ipairs(listed) do titles[n.title] = n end
check(':w created the new note as human', titles['Typed in Neovim'] and titles['Typed in Neovim'].provenance == 'human', listed)
check('the buffer is the new render, saved', not vim.bo[memory].modified
  and table.concat(vim.api.nvim_buf_get_lines(memory, 0, -1, false), '\n'):find('Typed in Neovim', 1, true) ~= nil)

-- A conflicting write: an agent revokes the note being edited.
local new_cache = titles['Cache hit ratio is 0.93'].id
text = table.concat(vim.api.nvim_buf_get_lines(memory, 0, -1, false), '\n')
text = text:gsub('medium · Cache hit ratio is 0%.93', 'high · Cache hit ratio is 0.93')
vim.api.nvim_buf_set_lines(memory, 0, -1, false, vim.split(text, '\n'))
cli({ 'revoke', tostring(new_cache), '--reason', 'an agent revoked it' })
vim.cmd('write')
local function conflict()
  for _, d in ipairs(vim.diagnostic.get(memory)) do
    if d.code == 'conflict' then return d end
  end
end
check('a conflicting write shows the conflict diagnostic', vim.wait(10000, function() return conflict() ~= nil end, 20),
  vim.diagnostic.get(memory))
check('the conflicting edit is kept in the buffer',
  table.concat(vim.api.nvim_buf_get_lines(memory, 0, -1, false), '\n'):find('high · Cache hit ratio is 0.93', 1, true) ~= nil)
check('the agent\'s revoke stands', json({ 'show', tostring(new_cache) }).state == 'revoked')

-- :checkhealth mnemo
vim.cmd('checkhealth mnemo')
local health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
print(health)
check(':checkhealth mnemo runs without errors', health:find('OK', 1, true) ~= nil and health:find('ERROR', 1, true) == nil, health)
check(':checkhealth mnemo reads the store and the ranking', health:find('store: %d+ notes, epoch %d+') ~= nil
  and health:find('recall runs', 1, true) ~= nil, health)

-- :Mnemo recall: a picker, with what was hidden in its prompt.
local picked
vim.ui.select = function(items, opts, on_choice)
  picked = { items = items, prompt = opts.prompt, first = items[1] and opts.format_item(items[1]) }
  on_choice(nil)
end
local said
local notify = vim.notify
vim.notify = function(message) said = message end
vim.cmd('Mnemo recall lock restarting')
vim.notify = notify
check(':Mnemo recall says what it hid when nothing is left', picked == nil and said and said:find('hidden: 1 revoked', 1, true) ~= nil, said)
vim.cmd('Mnemo recall typed neovim')
check(':Mnemo recall picks a live note', picked and picked.first == '#3 Typed in Neovim', picked)
check('the picker says what was hidden', picked and picked.prompt:find('hidden', 1, true) ~= nil, picked)

-- :Mnemo remember over a visual selection: kind, priority, title asked; anchored; human.
local answers = { 'gotcha', 'high' }
vim.ui.select = function(items, _, on_choice) on_choice(table.remove(answers, 1)) end
vim.ui.input = function(_, on_confirm) on_confirm('Restart only after unlock') end
vim.cmd.edit(root .. '/src/lock.rs')
vim.cmd('2,3Mnemo remember')
local remembered
for _, n in ipairs(json({ 'list' }).notes) do
  if n.title == 'Restart only after unlock' then remembered = json({ 'show', tostring(n.id) }) end
end
check(':Mnemo remember records a human note anchored to the selection', remembered and remembered.provenance == 'human'
  and remembered.anchors[1].path == 'src/lock.rs' and remembered.anchors[1].start_line == 2, remembered)

-- :Mnemo completion
local completion = vim.fn.getcompletion('Mnemo re', 'cmdline')
check(':Mnemo completes subcommands', vim.deep_equal(completion, { 'recall', 'reinstate', 'remember', 'revoke' }), completion)

for _, c in ipairs(vim.lsp.get_clients()) do c:stop(true) end
if failures > 0 then
  print(failures .. ' failed')
  os.exit(1)
end
print('all passed')
os.exit(0)
