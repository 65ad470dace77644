-- wrk: POST /v1/sessions with a wrong password, as fast as the server answers.
function request()
   return wrk.format("POST", "/v1/sessions", {["Content-Type"] = "application/json"},
      '{"login":"flood","password":"not the password at all"}')
end
