-- What every journey shares: check() and the summary, the CLI on the
-- journey's store (cli, json), a workspace in the journey's temp folder,
-- starting the plugin as a person's config would, waiting on events, and
-- capturing what a person would see (notifications, server messages).
-- tests/run gives each journey its own temp folder, store and XDG dirs.
local H = {}

H.binary = assert(os.getenv('MNEMO_TEST_BINARY'), 'run me through editors/neovim/tests/run')
H.tmp = os.getenv('MNEMO_TEST_DIR')
H.nvim = os.getenv('MNEMO_TEST_NVIM')
H.plugin = os.getenv('MNEMO_PLUGIN_DIR')
H.root = H.tmp .. '/project'
H.failures = 0

--- One line of the report, on stdout whatever Neovim's messages do.
function H.report(line)
  io.write(line .. "\n")
  io.flush()
end

function H.check(name, ok, detail)
  if ok then
    H.report('ok   ' .. name)
  else
    H.failures = H.failures + 1
    H.report('FAIL ' .. name .. (detail ~= nil and (': ' .. vim.inspect(detail)) or ''))
  end
  return ok
end

--- The CLI in the workspace, on the journey's store; its stdout (errors abort the journey).
function H.cli(args, cwd)
  local out = vim.system(vim.list_extend({ H.binary }, args), { cwd = cwd or H.root, text = true }):wait()
  assert(out.code == 0, table.concat(args, ' ') .. ': ' .. out.stderr)
  return out.stdout
end

function H.json(args, cwd)
  return vim.json.decode(H.cli(vim.list_extend({ '--json' }, args), cwd))
end

--- `mnemo remember …`; the new id as a number.
function H.remember(args)
  return tonumber((H.cli(vim.list_extend({ 'remember' }, args)):match('#(%d+)')))
end

function H.state(id)
  return H.json({ 'show', tostring(id) }).state
end

--- The notes of the workspace by title.
function H.notes_by_title()
  local by_title = {}
  for _, n in ipairs(H.json({ 'list' }).notes) do
    by_title[n.title] = n
  end
  return by_title
end

--- A git workspace with a source file, and the current directory in it.
function H.workspace()
  vim.fn.mkdir(H.root .. '/.git', 'p')
  vim.fn.mkdir(H.root .. '/src', 'p')
  vim.fn.writefile({ 'fn main() {}', 'let guard = lock();', 'restart(guard);' }, H.root .. '/src/lock.rs')
  vim.fn.writefile({ '# Unrelated', 'Some notes.' }, H.root .. '/README.md')
  vim.fn.chdir(H.root)
  return H.root
end

--- Everything a person is told: vim.notify, and the server's showMessage
--- (Neovim shows errors through vim.notify and the rest with nvim_echo).
H.said = {}
local notify = vim.notify
vim.notify = function(message, level, opts)
  table.insert(H.said, { message = message, level = level or vim.log.levels.INFO })
  return notify(message, level, opts)
end
local show_message = vim.lsp.handlers['window/showMessage']
vim.lsp.handlers['window/showMessage'] = function(err, params, ctx)
  table.insert(H.said, { message = params.message, level = 5 - params.type, server = true })
  return show_message(err, params, ctx)
end

--- What was said since `from` (an index into H.said) matching `pattern`.
function H.said_since(from, pattern)
  for i = from + 1, #H.said do
    if H.said[i].message:find(pattern) then
      return H.said[i]
    end
  end
end

--- The plugin loaded as a person's init.lua would: on 'runtimepath', filetype
--- detection on, `vim.g.mnemo` as given (nil: not set at all), the server enabled.
function H.start(options)
  vim.opt.runtimepath:prepend(H.plugin)
  vim.g.mnemo = options
  vim.cmd('filetype on')
  vim.cmd('runtime plugin/mnemo.lua')
  vim.lsp.enable('mnemo')
end

function H.wait(ms, condition)
  return vim.wait(ms, condition, 20)
end

function H.attached(bufnr)
  return #vim.lsp.get_clients({ bufnr = bufnr, name = 'mnemo' }) > 0
end

function H.client(bufnr)
  H.wait(10000, function()
    return H.attached(bufnr)
  end)
  return vim.lsp.get_clients({ bufnr = bufnr, name = 'mnemo' })[1]
end

function H.text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr or 0, 0, -1, false), '\n')
end

function H.has(bufnr, needle)
  return H.text(bufnr):find(needle, 1, true) ~= nil
end

--- Replace the buffer's text by `edit(text)` (as a person's edits would leave it).
function H.edit(bufnr, edit)
  local text = edit(H.text(bufnr))
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, vim.split(text, '\n', { plain = true }))
end

--- The 0-based line of the first line matching `pattern`, or nil.
function H.line_of(bufnr, pattern)
  for i, l in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if l:find(pattern) then
      return i - 1
    end
  end
end

--- What is on the screen now (headless Neovim keeps its grid): one string
--- a row, after a redraw.
function H.screen()
  vim.cmd('redraw!')
  local rows = {}
  for row = 1, vim.o.lines do
    local cells = {}
    for col = 1, vim.o.columns do
      table.insert(cells, vim.fn.screenstring(row, col))
    end
    rows[row] = table.concat(cells)
  end
  return rows
end

--- The screen row (1-based) showing `needle` (plain text), or nil.
function H.screen_row(needle)
  for row, text in ipairs(H.screen()) do
    if text:find(needle, 1, true) then
      return row, text
    end
  end
end

--- The diagnostics of a buffer whose message or code matches `pattern`.
function H.diagnostics(bufnr, pattern)
  return vim.tbl_filter(function(d)
    return pattern == nil or d.message:find(pattern) ~= nil or d.code == pattern
  end, vim.diagnostic.get(bufnr))
end

--- Open the memory buffer as a person does (`:Mnemo edit`).
function H.open_memory()
  vim.cmd('Mnemo edit')
  local bufnr = vim.api.nvim_get_current_buf()
  H.client(bufnr)
  return bufnr
end

--- Run the code action titled like `pattern` at the cursor, picked in the
--- menu as a person would (vim.lsp.buf.code_action + vim.ui.select); the
--- titles offered, and whether one was picked. H.kinds: title → its kind.
H.kinds = {}
function H.code_action(pattern)
  local offered, picked = nil, false
  local select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    vim.ui.select = select
    offered = {}
    local choice
    for _, item in ipairs(items) do
      local title = opts.format_item and opts.format_item(item) or item.action.title
      table.insert(offered, title)
      H.kinds[title] = item.action.kind or false
      if not choice and title:find(pattern) then
        choice = item
      end
    end
    picked = choice ~= nil
    on_choice(choice)
  end
  vim.lsp.buf.code_action()
  H.wait(10000, function()
    return offered ~= nil
  end)
  vim.ui.select = select
  return offered or {}, picked
end

--- Answer the next vim.ui.input prompt with `answer`; the prompt asked, via `asked()`.
function H.answer(answer)
  local asked
  local input = vim.ui.input
  vim.ui.input = function(opts, on_confirm)
    asked = opts.prompt
    vim.ui.input = input
    on_confirm(answer)
  end
  return function()
    return asked
  end
end

-- A journey that makes Neovim quit (a :q that should have been refused) fails.
vim.api.nvim_create_autocmd('VimLeavePre', {
  callback = function()
    if not H.finished then
      H.report('FAIL the journey ended early: Neovim quit')
      os.exit(1)
    end
  end,
})

--- Stop the servers, print the summary and exit with the journey's status.
function H.finish()
  H.finished = true
  for _, c in ipairs(vim.lsp.get_clients()) do
    c:stop(true)
  end
  if H.failures > 0 then
    H.report(H.failures .. ' failed')
    os.exit(1)
  end
  H.report('all passed')
  os.exit(0)
end

return H
