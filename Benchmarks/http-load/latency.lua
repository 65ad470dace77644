-- With LATENCY_DUMP set (http-load.sh --store postgres, two wrk at once), the run's latency
-- distribution as quantiles (every 0.05 %, microseconds) after a line "n REQUESTS", so that
-- two runs' percentiles can be merged.
function dump_latency(summary, latency)
   local path = os.getenv("LATENCY_DUMP")
   if path == nil or path == "" then return end
   local file = io.open(path, "w")
   file:write(string.format("n %d\n", summary.requests))
   for i = 1, 2000 do
      local p = i * 0.05
      -- wrk answers 0 for percentile(100): the maximum instead.
      local value = (i == 2000) and latency.max or latency:percentile(p)
      file:write(string.format("%.2f %d\n", p, value))
   end
   file:close()
end
