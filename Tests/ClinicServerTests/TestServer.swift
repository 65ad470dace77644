import Foundation
@testable import ClinicStoreSQLite
import GRDB

/// Whether a slot's start (ISO 8601) is far enough ahead that neither the booking lead time
/// (30 minutes) nor the cutoff (2 hours before the start, for a move or a cancellation) falls
/// inside a test, whatever the time of day it runs: 6 hours.
func isFarEnoughAhead(_ start: String) -> Bool {
    (ISO8601DateFormatter().date(from: start) ?? .distantPast) > Date().addingTimeInterval(6 * 3600)
}

/// What the server tests do to a server, whichever way it runs — in this process
/// (`InProcessServer`) or as a `clinic serve` process (`ServerHarness`): register and log in a
/// patient, find a department and a free slot, and read the database file underneath. Each
/// kind sends requests its own way (`get`, `post`).
protocol TestServer: Sendable {
    associatedtype Answer: TestReply
    var databasePath: String { get }
    func get(_ path: String) async throws -> Answer
    func post(_ path: String, json: [String: Any]) async throws -> Answer
}

/// A response as the tests read it: its status and body, the body as JSON, text or an error.
protocol TestReply {
    var status: Int { get }
    var body: Data { get }
}

extension TestReply {
    var json: Any? { try? JSONSerialization.jsonObject(with: body) }
    var object: [String: Any] { json as? [String: Any] ?? [:] }
    var array: [[String: Any]] { json as? [[String: Any]] ?? [] }
    var errorCode: String? { (object["error"] as? [String: Any])?["code"] as? String }
    var errorMessage: String? { (object["error"] as? [String: Any])?["message"] as? String }
    var text: String { String(decoding: body, as: UTF8.self) }
}

struct TestServerFailure: Error, CustomStringConvertible {
    let description: String
}

extension TestServer {
    static var password: String { "correct horse battery staple" }

    /// Registers a patient in Boston and logs in; returns the token.
    func patient(_ login: String, device: [String: String]? = nil) async throws -> String {
        let registered = try await post("/v1/patients", json: [
            "login": login, "password": Self.password, "name": "Anna", "surname": "Smith", "street": "Main St",
            "house": "5", "city": "Boston", "acceptPrivacy": true,
        ])
        guard registered.status == 201 else { throw TestServerFailure(description: "register: \(registered.status) \(registered.text)") }
        return try await logIn(login, device: device)
    }

    func logIn(_ login: String, device: [String: String]? = nil) async throws -> String {
        var body: [String: Any] = ["login": login, "password": Self.password]
        if let device { body["device"] = device }
        let reply = try await post("/v1/sessions", json: body)
        guard reply.status == 201, let token = reply.object["token"] as? String else {
            throw TestServerFailure(description: "log in: \(reply.status) \(reply.text)")
        }
        return token
    }

    /// The first department of the first clinic (the demo departments of the small directory).
    func department() async throws -> (id: Int, clinicId: Int) {
        let clinics = try await get("/v1/clinics?limit=1")
        guard let first = (clinics.object["items"] as? [[String: Any]])?.first, let clinicId = first["id"] as? Int else {
            throw TestServerFailure(description: "no clinics: \(clinics.text)")
        }
        let departments = try await get("/v1/clinics/\(clinicId)/departments")
        guard let department = departments.array.first?["id"] as? Int else { throw TestServerFailure(description: "no departments") }
        return (department, clinicId)
    }

    /// The clinic's local date ("YYYY-MM-DD") of an instant the API gave ("…Z"): a slot on a
    /// U.S. evening is the next day in UTC, so the UTC date is not the day to name.
    func localDay(of start: String, clinicId: Int) async throws -> String {
        let zone = try await zone(ofClinic: clinicId)
        guard let instant = ISO8601DateFormatter().date(from: start) else { throw TestServerFailure(description: "no instant: \(start)") }
        return Self.day(of: instant, in: zone)
    }

    func zone(ofClinic clinicId: Int) async throws -> TimeZone {
        let clinic = try await get("/v1/clinics/\(clinicId)")
        guard let zone = (clinic.object["timeZone"] as? String).flatMap(TimeZone.init(identifier:)) else {
            throw TestServerFailure(description: "no zone: \(clinic.text)")
        }
        return zone
    }

    static func day(of instant: Date, in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let date = calendar.dateComponents([.year, .month, .day], from: instant)
        return String(format: "%04d-%02d-%02d", date.year ?? 0, date.month ?? 0, date.day ?? 0)
    }

    /// A free slot of a department, each time once, `skipping` the first ones.
    func freeSlot(_ department: Int, skipping: Int = 0) async throws -> String {
        let distinct = try await freeSlots(department)
        guard distinct.count > skipping else { throw TestServerFailure(description: "no free slot of department \(department)") }
        return distinct[skipping]
    }

    /// The first free slot of a department on a day after today's at its clinic: a visit whose
    /// day has not come, whatever the hour the tests run at (a slot six hours ahead is today's
    /// at a U.S. clinic on a European morning).
    func freeSlotAfterToday(_ department: Int, clinicId: Int) async throws -> String {
        let zone = try await zone(ofClinic: clinicId), today = Self.day(of: Date(), in: zone)
        let formatter = ISO8601DateFormatter()
        guard let start = try await freeSlots(department).first(where: { start in
            formatter.date(from: start).map { Self.day(of: $0, in: zone) > today } ?? false
        }) else { throw TestServerFailure(description: "no free slot after today in department \(department)") }
        return start
    }

    /// The department's free slots of the next 14 days far enough ahead, each time once.
    private func freeSlots(_ department: Int) async throws -> [String] {
        let slots = try await get("/v1/departments/\(department)/slots?days=14")
        let free = slots.array.filter { $0["isAvailable"] as? Bool == true }.compactMap { $0["start"] as? String }
            .filter(isFarEnoughAhead)
        return Array(NSOrderedSet(array: free)).compactMap { $0 as? String }
    }

    /// Every row of every table but `excluding`: equal fingerprints mean nothing changed. The
    /// text gateway's heartbeat (`Outbox.textGatewayKey`, noted by a server with a gateway at its
    /// start and then by its outbox every 5 minutes) is no request's write: a test slowed past
    /// 5 minutes by the others running at once saw it move between two fingerprints.
    func fingerprint(excluding: Set<String> = ["sessions", "login_attempts", "geocode_cache"]) throws -> String {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: databasePath, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read { db in
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
                .filter { !excluding.contains($0) }
            return try tables.map { table in
                let heartbeat = table == "settings" ? " WHERE key <> 'texts.gateway_seen_at'" : ""
                return table + ":" + (try Row.fetchAll(db, sql: "SELECT * FROM \"\(table)\"\(heartbeat) ORDER BY rowid").map(\.description)
                    .joined(separator: "\n"))
            }.joined(separator: "\n")
        }
    }

    func text(_ sql: String) throws -> String {
        let queue = try DatabaseQueue(path: databasePath)
        defer { try? queue.close() }
        return try queue.read { db in try String.fetchOne(db, sql: sql) ?? "" }
    }

    /// Moves an appointment to start a few minutes from now (issue 42: a check-in only on the
    /// visit's day in the clinic's zone, and these servers run on the real clock): 5 minutes
    /// ahead, else, that late in the clinic's evening, a minute ago. Returns its local date.
    @discardableResult
    func plantToday(_ appointment: Int) throws -> String {
        let queue = try DatabaseQueue(path: databasePath)
        defer { try? queue.close() }
        return try queue.write { db in
            let zoneName = try String.fetchOne(db, sql: """
                SELECT c.time_zone FROM clinics c JOIN appointments a ON a.clinic_id = c.id WHERE a.id = ?
                """, arguments: [appointment]) ?? ""
            guard let zone = TimeZone(identifier: zoneName) else { throw TestServerFailure(description: "no zone: \(zoneName)") }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let now = Date(), minute = Int(now.timeIntervalSince1970) / 60 * 60
            let soon = minute + 300
            let start = calendar.isDate(Date(timeIntervalSince1970: TimeInterval(soon)), inSameDayAs: now) ? soon : minute - 60
            try db.execute(sql: "UPDATE appointments SET starts_at = ?, ends_at = ? WHERE id = ?",
                           arguments: [start, start + 1200, appointment])
            let parts = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: TimeInterval(start)))
            return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
        }
    }

    /// A change behind the server's back, for a case the data has not (a clinic without a phone).
    func execute(_ sql: String) throws {
        let queue = try DatabaseQueue(path: databasePath)
        defer { try? queue.close() }
        try queue.write { db in try db.execute(sql: sql) }
    }

    func scalar(_ sql: String) throws -> Int {
        let queue = try DatabaseQueue(path: databasePath)
        defer { try? queue.close() }
        return try queue.read { db in try Int.fetchOne(db, sql: sql) ?? -1 }
    }
}
