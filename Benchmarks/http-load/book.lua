-- wrk: POST /v1/appointments, each request a slot of its own, booked by the patient the
-- slot was given to (requests.txt: "token departmentId start doctorId" per line). Threads
-- take every N-th line so that no two requests want the same slot.
local threads = {}
local counter = 0

function setup(thread)
   thread:set("index", counter)
   counter = counter + 1
   table.insert(threads, thread)
end

function init(args)
   lines = {}
   local file = io.open(os.getenv("BOOK_REQUESTS"), "r")
   local n = 0
   for line in file:lines() do
      if n % counter_total() == index then table.insert(lines, line) end
      n = n + 1
   end
   file:close()
   next_line = 1
end

function counter_total() return tonumber(os.getenv("WRK_THREADS")) end

function request()
   local line = lines[next_line]
   if line == nil then
      -- Out of slots: ask for something harmless, counted apart by the script.
      return wrk.format("GET", "/healthz")
   end
   next_line = next_line + 1
   local token, department, start, doctor = line:match("(%S+) (%S+) (%S+) (%S+)")
   local body = '{"departmentId":' .. department .. ',"start":"' .. start .. '","doctorId":' .. doctor .. '}'
   return wrk.format("POST", "/v1/appointments",
      {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token}, body)
end

function response(status, headers, body)
   -- booked (201), slot taken (409: expected when requests collide), anything else is bad.
   local key = (status == 201 and "booked") or (status == 409 and "taken") or (status == 200 and "other") or "bad"
   wrk.thread:set(key, (wrk.thread:get(key) or 0) + 1)
   if key == "bad" then note_unexpected(status, body) end
end

function done(summary, latency, requests)
   dump_latency(summary, latency)
   -- Only booking attempts count (not the /healthz asked for once the slots ran out).
   local booked, taken, bad = 0, 0, 0
   for _, thread in ipairs(threads) do
      booked = booked + (thread:get("booked") or 0)
      taken = taken + (thread:get("taken") or 0)
      bad = bad + (thread:get("bad") or 0)
   end
   local attempts = booked + taken + bad
   io.write(string.format("RESULT requests=%d rps=%.1f p50=%.2f p99=%.2f errors=%d bad=%d booked=%d taken=%d\n",
      attempts, attempts / (summary.duration / 1e6), latency:percentile(50) / 1000,
      latency:percentile(99) / 1000, summary.errors.connect + summary.errors.read + summary.errors.write +
      summary.errors.timeout, bad, booked, taken))
   report_unexpected(threads)
end

-- dump_latency: the run's latency distribution for merge.py (latency.lua, beside this file).
dofile("Benchmarks/http-load/latency.lua") -- wrk runs from the project folder (http-load.sh)
dofile("Benchmarks/http-load/unexpected.lua")
