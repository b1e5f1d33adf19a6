-- wrk script for bench:send (send.bench.ts runs it): POST /v1/emails, each request with a body of
-- its own, and every 202 answer's id written to a file at the end, so the bench can check that
-- every accepted send reached the sandbox inbox.
--   WRK_BODY   the JSON body, with "{N}" where each request puts a tag of its own
--   WRK_KEY    the bearer key
--   WRK_OUT    the file the ids and the figures are written to
-- Argument after "--": a label for this run, which each request's tag starts with (so a warm-up
-- and the run differ).

local threads = {}

function setup(thread)
  thread:set("thread_index", #threads)
  table.insert(threads, thread)
end

local prefix, suffix, label
local n = 0
-- Globals, not locals: done() reads them from each thread with thread:get.
ids = {}
non2xx = 0

function init(args)
  local body = os.getenv("WRK_BODY")
  local at = string.find(body, "{N}", 1, true)
  prefix = string.sub(body, 1, at - 1)
  suffix = string.sub(body, at + 3)
  -- Unique across runs and threads: the run's label, the thread, then a count.
  label = (args[1] or "run") .. "-" .. thread_index .. "-"
  wrk.method = "POST"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("WRK_KEY")
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  n = n + 1
  return wrk.format(nil, "/v1/emails", nil, prefix .. label .. n .. suffix)
end

function response(status, headers, body)
  if status == 202 then
    ids[#ids + 1] = string.match(body, '"id":"([^"]+)"')
  elseif status < 200 or status >= 300 then
    non2xx = non2xx + 1
  end
end

function done(summary, latency, requests)
  local out = assert(io.open(os.getenv("WRK_OUT"), "w"))
  local errors = summary.errors
  out:write(string.format("duration_us %d\n", summary.duration))
  out:write(string.format("errors %d\n", errors.connect + errors.read + errors.write + errors.timeout))
  for _, p in ipairs({ 50, 99 }) do
    out:write(string.format("p%d_us %d\n", p, latency:percentile(p)))
  end
  out:write(string.format("max_us %d\n", latency.max))
  local refused = 0
  for _, thread in ipairs(threads) do
    refused = refused + thread:get("non2xx")
  end
  out:write(string.format("non2xx %d\n", refused))
  for _, thread in ipairs(threads) do
    for _, id in ipairs(thread:get("ids")) do
      out:write("id ", id, "\n")
    end
  end
  out:close()
end
