-- Unexpected answers (issue 42): a count per status and the first body of each, so that a run
-- that counts `bad` answers also says what they were. `note_unexpected` in a thread's
-- response(); `report_unexpected` in done() writes one line per status:
--   UNEXPECTED status=422 count=159 body={"error":{"code":"slot_unavailable",...}}
function note_unexpected(status, body)
   local key = "status" .. status
   wrk.thread:set(key, (wrk.thread:get(key) or 0) + 1)
   if wrk.thread:get("body" .. status) == nil then
      wrk.thread:set("body" .. status, string.sub((body or ""):gsub("%s+", " "), 1, 400))
   end
end

function report_unexpected(threads)
   for status = 100, 599 do
      local count, body = 0, nil
      for _, thread in ipairs(threads) do
         count = count + (thread:get("status" .. status) or 0)
         body = body or thread:get("body" .. status)
      end
      if count > 0 then
         io.write(string.format("UNEXPECTED status=%d count=%d body=%s\n", status, count, body or ""))
      end
   end
end
