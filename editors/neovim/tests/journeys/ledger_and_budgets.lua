-- What agents were told and what they will load, as a person sees it in
-- Neovim: after a session-start hook, hovering a note in the memory buffer
-- (K, a float) says it was delivered and when; a note no agent was told is
-- said never to have been; with a harness that loads the first 20 lines,
-- the buffer warns on the first entry past them, naming the entries that
-- will not load; long directives written while the buffer is open make it
-- warn, on the first of them, that the session-start hook cuts their bodies.
local H = require('helper')
local check = H.check

local root = H.workspace()
vim.fn.mkdir(root .. '/.mnemo', 'p')
vim.fn.writefile({ '[load_budget]', 'harness = "Claude Code"', 'lines = 20' }, root .. '/.mnemo/config.toml')
local rule = H.remember({ '--kind', 'directive', '--title', 'Run the tests inside the venv', '--as-human' })
local findings = {}
for i = 1, 12 do
  table.insert(findings, H.remember({ '--kind', 'finding', '--title', 'Finding number ' .. i }))
end
-- An agent session starts: the directive in full, recent notes listed.
vim.fn.system({ H.binary, 'hook', 'session-start' }, '{"session_id": "abc", "hook_event_name": "SessionStart"}')
check('the session-start hook ran', vim.v.shell_error == 0)
local late = H.remember({ '--kind', 'finding', '--title', 'Written after the session started' })
H.start({ binary = H.binary, debounce_ms = 20 })

local memory = H.open_memory()
local function hover_at(id)
  vim.api.nvim_win_set_cursor(0, { H.line_of(memory, '^%- %[#' .. id .. '%]') + 1, 4 })
  vim.lsp.buf.hover()
  local text
  H.wait(10000, function()
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= '' then
        text = H.text(vim.api.nvim_win_get_buf(win))
        vim.api.nvim_win_close(win, true)
        return true
      end
    end
  end)
  return text or ''
end
local shown = hover_at(rule)
check('hover says the directive was delivered, when, at which moment and session',
  shown:find('Delivered to agents 1 time, last just now (session-start, session abc)', 1, true) ~= nil, shown)
shown = hover_at(findings[1])
check('hover says a listed note was delivered too', shown:find('Delivered to agents 1 time', 1, true) ~= nil, shown)
shown = hover_at(late)
check('hover says a note written later was never delivered', shown:find('Never delivered to an agent', 1, true) ~= nil, shown)

-- The load budget: a warning on the first entry past line 20.
local warned
check('the buffer warns which entries will not load in Claude Code', H.wait(10000, function()
  for _, d in ipairs(vim.diagnostic.get(memory)) do
    if d.code == 'load-budget' then warned = d return true end
  end
end), vim.diagnostic.get(memory))
if warned then
  local first_past
  for _, id in ipairs(findings) do
    if H.line_of(memory, '^%- %[#' .. id .. '%]') >= 20 then first_past = first_past or id end
  end
  check('the warning sits on the first entry past the limit and names the range',
    warned.lnum == H.line_of(memory, '^%- %[#' .. first_past .. '%]')
      and warned.message:find(('(#%d … #%d) will not load in Claude Code, which reads the first 20 lines of MEMORY.md'):format(first_past, late), 1, true) ~= nil,
    { warned = warned.message, lnum = warned.lnum, first_past = first_past })
  -- Neovim 0.11 shows a sign, and the message in a float on demand.
  vim.api.nvim_win_set_cursor(0, { warned.lnum + 1, 0 })
  vim.diagnostic.open_float()
  check('the warning is on screen in the diagnostic float at that entry', H.wait(5000, function()
    return table.concat(H.screen(), '\n'):find('will not load', 1, true) ~= nil
  end), H.screen())
end

-- Long directives written meanwhile (from a terminal): the open buffer
-- shows them and warns that the session-start hook cuts their bodies.
local body = string.rep('Explain why, with the whole story behind it. ', 40)
local long = {}
for i = 1, 4 do
  table.insert(long, H.remember({ '--kind', 'directive', '--title', 'Long rule ' .. i, '--body', body, '--as-human' }))
end
local cut
check('the buffer warns that the session-start hook cuts the long directives', H.wait(15000, function()
  for _, d in ipairs(vim.diagnostic.get(memory)) do
    if d.code == 'hook-budget' then cut = d return true end
  end
end), vim.diagnostic.get(memory))
if cut then
  local first = math.huge
  for _, id in ipairs(long) do first = math.min(first, H.line_of(memory, '^%- %[#' .. id .. '%]')) end
  check('on the first cut entry, naming the four', cut.lnum == first
    and cut.message:find(('the bodies of 4 notes (#%d, #%d, #%d, #%d)'):format(long[1], long[2], long[3], long[4]), 1, true) ~= nil,
    { message = cut.message, lnum = cut.lnum, first = first })
end

H.finish()
