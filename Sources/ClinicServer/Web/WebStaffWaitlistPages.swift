import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird

/// The front desk's waitlist beside the calendar (issue 45): who waits at the clinic, in the
/// order times are offered, with each entry's priority and note to change, a patient to put on
/// (a phone call) and an entry to take off. The rules are `StaffController`'s.
struct WebStaffWaitlistPages {
    let dependencies: ServerDependencies
    var system: ClinicSystem { dependencies.system }

    func addRoutes(to group: RouterGroup<APIContext>) {
        let staff = group.group().add(middleware: WebStaffSession(dependencies: dependencies))
        staff.get("/staff/waitlist", use: list)
        staff.post("/staff/waitlist", use: add)
        staff.post("/staff/waitlist/:id", use: change)
        staff.post("/staff/waitlist/:id/remove", use: remove)
    }

    func member(_ context: APIContext) throws -> StaffMember? { context.staffMember }

    @Sendable func list(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        let department = request.query("department").flatMap { $0.isEmpty ? nil : Int64($0) }
        let requestId = context.requestId
        let (entries, departments) = try await dependencies.awaited(web.language) { [system] in
            (try await system.staff.waitlist(member, departmentId: department, requestId: requestId),
             try await system.clinics.clinicWithDepartments(member.clinicId).departments)
        }
        let names = Dictionary(departments.map { ($0.id ?? 0, Specialization.displayName($0.specialization, web.language)) },
                               uniquingKeysWith: { first, _ in first })
        return dependencies.page("staff-waitlist", web, [
            "staffLogin": member.login, "frontDesk": member.runsTheFrontDesk, "empty": entries.isEmpty,
            "added": request.query("added") == "1",
            "departments": departments.map { ["id": $0.id ?? 0, "name": names[$0.id ?? 0] ?? "", "selected": $0.id == department] as [String: Any] },
            "entries": entries.map { item -> [String: Any] in
                let entry = item.entry
                var shown: [String: Any] = [
                    "id": entry.id ?? 0, "patient": item.patientName, "department": names[entry.departmentId] ?? "",
                    "days": entry.firstDay == entry.lastDay ? entry.firstDay : "\(entry.firstDay) – \(entry.lastDay)",
                    "priority": entry.priority, "status": entry.statusText(web.language), "note": item.note ?? "",
                    "offered": entry.status == .offered]
                if let from = entry.fromMinute, let to = entry.toMinute {
                    shown["hours"] = WaitlistEntryJSON.clock(from) + "–" + WaitlistEntryJSON.clock(to)
                }
                return shown
            },
        ])
    }

    /// A patient put on the list: by login, at a department of the clinic, with a priority and a note.
    @Sendable func add(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        let form = try await dependencies.form(request, context, web)
        guard let department = form["departmentId"].flatMap({ Int64($0) }) else { throw ServerError.invalid(.fieldWholeNumber, "departmentId") }
        let priority = try Self.priority(form["priority"])
        let login = form["patient"]?.trimmingCharacters(in: .whitespaces) ?? ""
        guard !login.isEmpty else { throw ServerError.invalid(.fieldRequired, "patient") }
        let note = form["note"].flatMap { $0.isEmpty ? nil : $0 }
        let requestId = context.requestId
        _ = try await dependencies.awaited(web.language) { [system] in
            try await system.staff.addToWaitlist(member, patientLogin: login, .init(departmentId: department, priority: priority ?? 0),
                                           note: note, requestId: requestId)
        }
        return dependencies.redirect("/staff/waitlist?added=1", web)
    }

    /// An entry's priority and note, changed together.
    @Sendable func change(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        let id = try context.parameters.id("id")
        let form = try await dependencies.form(request, context, web)
        let priority = try Self.priority(form["priority"])
        let note = form["note"]
        let requestId = context.requestId
        _ = try await dependencies.awaited(web.language) { [system] in
            try await system.staff.changeWaitlistEntry(member, entryId: id, priority: priority, note: note, requestId: requestId)
        }
        return dependencies.redirect("/staff/waitlist", web)
    }

    @Sendable func remove(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        let id = try context.parameters.id("id")
        _ = try await dependencies.form(request, context, web)
        let requestId = context.requestId
        try await dependencies.awaited(web.language) { [system] in
            try await system.staff.removeFromWaitlist(member, entryId: id, requestId: requestId)
        }
        return dependencies.redirect("/staff/waitlist", web)
    }

    static func priority(_ text: String?) throws -> Int? {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        guard let value = Int(text) else { throw ServerError.invalid(.fieldWholeNumber, "priority") }
        return value
    }
}
