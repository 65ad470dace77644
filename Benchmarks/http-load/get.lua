-- wrk: GET requests; NEAREST=1 picks a random U.S. point for /v1/clinics/nearest each time.
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)") or "1", 16) % 1000) end
function request()
   if os.getenv("NEAREST") == "1" then
      local lat = 25 + math.random() * 24
      local lon = -124 + math.random() * 57
      return wrk.format("GET", string.format("/v1/clinics/nearest?lat=%.4f&lon=%.4f&limit=5", lat, lon))
   end
   return wrk.format("GET", os.getenv("GET_PATH"))
end
function response(status, headers, body)
   if status ~= 200 then
      wrk.thread:set("bad", (wrk.thread:get("bad") or 0) + 1)
      note_unexpected(status, body)
   end
end
function done(summary, latency, requests)
   dump_latency(summary, latency)
   local bad = 0
   for _, thread in ipairs(threads) do bad = bad + (thread:get("bad") or 0) end
   io.write(string.format("RESULT requests=%d rps=%.1f p50=%.2f p99=%.2f errors=%d bad=%d\n",
      summary.requests, summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
      latency:percentile(99) / 1000, summary.errors.connect + summary.errors.read + summary.errors.write +
      summary.errors.timeout, bad))
   report_unexpected(threads)
end

-- dump_latency: the run's latency distribution for merge.py (latency.lua, beside this file).
dofile("Benchmarks/http-load/latency.lua") -- wrk runs from the project folder (http-load.sh)
dofile("Benchmarks/http-load/unexpected.lua")
