import Foundation
import HTTPTypes
import Testing

/// What the shape of the server decides rather than a use case: routes in groups still answer
/// 405 with `Allow` and `HEAD`; the server's own refusals say the same words as before in both
/// languages; a staff status change, from the API and from the day page, is committed by the
/// group committer; the map's clinics come from the map cache.
@Suite struct ServerShapeTests {
    /// The sample of a metric line that starts with `prefix` (0 when absent).
    static func sample(_ server: InProcessServer, _ prefix: String) async throws -> Double {
        let metrics = try await server.send(.GET, "/metrics")
        guard let line = metrics.text.split(separator: "\n").first(where: { $0.hasPrefix(prefix + " ") }) else { return 0 }
        return Double(line.dropFirst(prefix.count + 1)) ?? -1
    }

    @Test func groupsAnswer405WithAllowAndHEAD() async throws {
        try await InProcessServer.run { server in
            // A patient group's path, a public one and a staff one: the methods in the order added, HEAD after GET's.
            for (method, path, allow) in [(HTTPRequest.Method.PUT, "/v1/me", "GET, PATCH, DELETE, HEAD"),
                                          (.POST, "/v1/clinics", "GET, HEAD"),
                                          (.GET, "/v1/staff/appointments", "POST"),
                                          (.PUT, "/v1/me/calendar-token", "GET, POST, DELETE, HEAD"),
                                          (.PUT, "/v1/staff/visit-types/5", "POST, DELETE"),
                                          (.PUT, "/appointments", "POST, GET, HEAD"),
                                          (.RAW(value: "QUERY"), "/v1/appointments/1", "GET, HEAD")] {
                let reply = try await server.send(method, path)
                #expect(reply.status == 405, "\(method) \(path): \(reply.text)")
                #expect(reply.errorCode == "method_not_allowed")
                #expect(reply.headers["Allow"].first == allow, "\(method) \(path)")
            }
            let head = try await server.send(.HEAD, "/v1/clinics")
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            // A patient route asked without a token is refused by its group, before the handler.
            let anonymous = try await server.send(.HEAD, "/v1/me")
            #expect(anonymous.status == 401)
            #expect(anonymous.headers["WWW-Authenticate"].first == "Bearer")
        }
    }

    @Test func theServersOwnWordsAreTheSameInBothLanguages() async throws {
        try await InProcessServer.run(authBurst: 2, authPerMinute: 1) { server in
            let token = try await server.patient("worded")
            typealias Case = (method: HTTPRequest.Method, path: String, raw: Data?, headers: [String: String], token: String?,
                              status: Int, code: String, en: String, ru: String)
            let cases: [Case] = [
                (.GET, "/v1/nothing", nil, [:], nil, 404, "not_found", "There is nothing at /v1/nothing.", "По адресу /v1/nothing ничего нет."),
                (.PUT, "/v1/clinics", nil, [:], nil, 405, "method_not_allowed", "PUT is not allowed here.", "Метод PUT здесь не разрешён."),
                (.GET, "/v1/clinics?limit=many", nil, [:], nil, 400, "invalid_input", "The field 'limit' must be a whole number.",
                 "Поле «limit» должно быть целым числом."),
                (.GET, "/v1/messages?unread=perhaps", nil, [:], token, 400, "invalid_input", "The field 'unread' must be true or false.",
                 "Поле «unread» должно быть true или false."),
                (.GET, "/v1/geocode", nil, [:], nil, 400, "invalid_input", "The field 'q' is required.", "Поле «q» обязательно."),
                (.PATCH, "/v1/me", Data("{}".utf8), ["Content-Type": "text/plain"], token, 415, "unsupported_media_type",
                 "Send the request body as application/json.", "Пришлите тело запроса как application/json."),
                (.PATCH, "/v1/me", Data("{".utf8), ["Content-Type": "application/json"], token, 400, "invalid_input",
                 "The request body is not valid JSON.", "Тело запроса — не правильный JSON."),
                (.PATCH, "/v1/me", Data(#"{"city":"Reno","city":"Boston"}"#.utf8), ["Content-Type": "application/json"], token, 400,
                 "invalid_input", "The request body gives 'city' more than once.", "В теле запроса «city» указано больше одного раза."),
                (.PATCH, "/v1/me", Data(#"{"name":5}"#.utf8), ["Content-Type": "application/json"], token, 400, "invalid_input",
                 "The field 'name' must be of JSON type string.", "Поле «name» должно иметь JSON-тип string."),
                (.PATCH, "/v1/me", Data(#"{"language":"de"}"#.utf8), ["Content-Type": "application/json"], token, 400, "invalid_input",
                 "The field 'language' must be one of: en, ru.", "Поле «language» должно быть одним из: en, ru."),
                (.GET, "/v1/me", nil, [:], nil, 401, "not_logged_in",
                 "Sign in first: send Authorization: Bearer with a token from POST /v1/sessions (a token ends after 30 days unused, at log-out, or when the password changes).",
                 "Сначала войдите: пришлите Authorization: Bearer с токеном из POST /v1/sessions (токен кончается после 30 дней без использования, при выходе или смене пароля)."),
                (.GET, "/v1/clinics", Data(repeating: 0x20, count: 1 << 17), [:], nil, 413, "too_large",
                 "The request body is larger than 65536 bytes.", "Тело запроса больше 65536 байт."),
            ]
            for item in cases {
                for (language, words) in [("en", item.en), ("ru", item.ru)] {
                    var headers = item.headers
                    headers["Accept-Language"] = language
                    let reply = try await server.send(item.method, item.path, raw: item.raw, token: item.token, headers: headers)
                    #expect(reply.status == item.status, "\(item.method) \(item.path) \(language): \(reply.text)")
                    #expect(reply.errorCode == item.code, "\(item.method) \(item.path) \(language)")
                    #expect(reply.errorMessage == words, "\(item.method) \(item.path) \(language)")
                    #expect(reply.headers["Content-Type"].first == "application/json; charset=utf-8")
                }
            }
            // The per-address bucket (2, then 1 a minute; the registration and log-in above took
            // them). On a loaded machine the cases above may outlast a minute and the bucket may
            // hold a token again: asked until it refuses (a few times at most, at 1 a minute),
            // what is checked is the refusal's words.
            for (language, words) in [("en", "Too many requests from this address: try again in "),
                                      ("ru", "Слишком много запросов с этого адреса: попробуйте через ")] {
                func attempt() async throws -> InProcessServer.Reply {
                    try await server.send(.POST, "/v1/sessions", json: ["login": "worded", "password": "wrong"],
                                          headers: ["Accept-Language": language])
                }
                var limited = try await attempt()
                for _ in 0..<3 where limited.status != 429 { limited = try await attempt() }
                #expect(limited.status == 429, "\(limited.text)")
                #expect(limited.errorCode == "rate_limited")
                #expect(limited.errorMessage?.hasPrefix(words) == true, "\(limited.text)")
                #expect(Int(limited.headers["Retry-After"].first ?? "") ?? 0 > 0)
            }
        }
    }

    @Test func staffStatusChangesAreGroupCommitted() async throws {
        try await InProcessServer.run { server in
            let s = try await StaffAPITestsInProcess.makeWorld(server)
            let batches = #"clinic_commit_batches_total{committed="true"}"#
            let desk = try #require(s.tokens["desk-a"])
            // The session's use is recorded now (a write of the committer too, at most once a
            // minute), so that the count below is the check-in's alone.
            #expect(try await server.send(.GET, "/v1/staff/me", token: desk).status == 200)
            let before = try await Self.sample(server, batches)
            try server.plantToday(s.appointment)  // check-in is for the visit's day
            let arrived = try await server.send(.POST, "/v1/staff/appointments/\(s.appointment)/check-in", token: desk)
            #expect(arrived.status == 200, "\(arrived.text)")
            #expect(arrived.object["status"] as? String == "arrived")
            #expect(try await Self.sample(server, batches) == before + 1, "the check-in was a batch of the committer")
            #expect(try await Self.sample(server, #"clinic_appointment_changes_total{operation="check-in",outcome="ok"}"#) == 1)

            // The day page's cancel, the same way.
            let loginPage = try await server.web(.GET, "/staff", cookies: [:])
            let nonce = try #require(loginPage.cookie("clinic_csrf"))
            let signedIn = try await server.web(.POST, "/staff/login", cookies: ["clinic_csrf": nonce],
                                                form: ["csrf": try #require(loginPage.csrf), "login": "desk-a",
                                                       "password": StaffAPITestsInProcess.staffPassword])
            #expect(signedIn.status == 303, "\(signedIn.text)")
            let staff = try #require(signedIn.cookie("clinic_staff"))
            // The day page records the new session's use: counted from after it.
            let day = try await server.web(.GET, "/staff?date=\(s.monday)", cookies: ["clinic_csrf": nonce, "clinic_staff": staff])
            let beforeCancel = try await Self.sample(server, batches)
            let cancelled = try await server.web(.POST, "/staff/appointments/\(s.appointment)/cancel",
                                                 cookies: ["clinic_csrf": nonce, "clinic_staff": staff],
                                                 form: ["csrf": try #require(day.csrf), "date": s.monday, "reason": "closed"])
            #expect(cancelled.status == 303, "\(cancelled.text)")
            #expect(cancelled.headers["Location"].first == "/staff?date=\(s.monday)")
            #expect(try await Self.sample(server, batches) == beforeCancel + 1, "the page's cancel was a batch of the committer")
            #expect(try server.text("SELECT status FROM appointments WHERE id = \(s.appointment)") == "cancelled")
        }
    }

    @Test func theMapComesFromItsCache() async throws {
        try await InProcessServer.run { server in
            let map = try await server.send(.GET, "/clinics/map.json")
            #expect(map.status == 200, "\(map.text)")
            #expect(map.headers["Content-Type"].first == "application/json; charset=utf-8")
            #expect((map.object["clinics"] as? [[Any]])?.count == 3)
            let again = try await server.send(.GET, "/clinics/map.json")
            #expect(again.body == map.body)
            let tag = try #require(map.headers["ETag"].first)
            #expect(again.headers["ETag"].first == tag && map.headers["Cache-Control"].first == "no-cache")
            // A clinic added by another process moves the directory's version: the map follows.
            let file = server.folder.appendingPathComponent("more.csv")
            try """
                external_id,name,address,city,state,zip,lat,lon,category,is_pediatric,is_hospital
                RN2,Sparks Family Clinic,1 Main St,Reno,NV,89501,39.5301,-119.8101,CLINIC,0,0
                """.write(to: file, atomically: true, encoding: .utf8)
            let imported = try server.cli(["admin", "import-clinics", file.path])
            #expect(imported.status == 0, "\(imported.stderr)")
            let after = try await server.send(.GET, "/clinics/map.json")
            #expect((after.object["clinics"] as? [[Any]])?.count == 4)
            #expect(after.headers["ETag"].first != tag, "a new directory version is a new ETag")
        }
    }
}
