import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird

/// The front desk's calendar (issue 29): the clinic's doctors side by side for a day or a
/// week, free slots as links to book by picking, appointments with their patient and status.
/// Works without JavaScript: every step is a link or a form. With it (`Web/static/calendar.js`),
/// the days and filters load without a full reload and an appointment's "Move" drags onto a
/// free time of its department, posting the same form as the move page.
struct WebCalendarPages {
    let dependencies: ServerDependencies
    var system: ClinicSystem { dependencies.system }

    func addRoutes(to group: RouterGroup<APIContext>) {
        let staff = group.group().add(middleware: WebStaffSession(dependencies: dependencies))
        staff.get("/staff/calendar", use: calendar)
        staff.get("/staff/book", use: bookPage)
        staff.post("/staff/holds/:id/release", use: releaseHold)
        staff.get("/staff/report", use: report)
        staff.get("/staff/report.csv", use: reportCSV)
    }

    /// `/staff/report?month=YYYY-MM` (clinic admins): the month by department, by doctor and in
    /// all — `StaffController.monthReport`, the CLI's `staff report` — with the months around it
    /// and its CSV.
    @Sendable func report(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        let month = request.query("month")
        let report = try await dependencies.awaited(web.language) { [system] in try await system.staff.monthReport(member, month: month) }
        let json = MonthReportJSON(report, language: web.language)
        func percent(_ value: Double?) -> String { value.map { String(format: "%.0f %%", $0 * 100) } ?? "—" }
        func rows(_ list: [MonthReportJSON.Row]) -> [[String: Any]] {
            list.map { row in
                ["name": row.name, "booked": row.booked, "completed": row.completed, "noShows": row.noShows,
                 "noShowShare": percent(row.noShowShare), "cancelled": row.cancelled, "late": row.cancelledUnder24h,
                 "byClinic": row.cancelledByClinic, "open": row.open, "freed": row.freed, "refilled": row.refilled,
                 "refilledShare": percent(row.refilledShare)]
            }
        }
        let previous = report.month == 1 ? (report.year - 1, 12) : (report.year, report.month - 1)
        let next = report.month == 12 ? (report.year + 1, 1) : (report.year, report.month + 1)
        return dependencies.page("staff-report", web, [
            "clinic": report.clinicName, "timeZone": report.timeZone, "month": json.month,
            "monthName": DateText.monthName(year: report.year, month: report.month, language: web.language),
            "previous": String(format: "%04d-%02d", previous.0, previous.1), "next": String(format: "%04d-%02d", next.0, next.1),
            "departments": rows(json.departments), "doctors": rows(json.doctors), "total": rows([json.total]),
            "empty": report.total.booked == 0,
        ])
    }

    /// `/staff/report.csv?month=YYYY-MM`: the same report as CSV, for a spreadsheet.
    @Sendable func reportCSV(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        let month = request.query("month")
        let report = try await dependencies.awaited(web.language) { [system] in try await system.staff.monthReport(member, month: month) }
        let name = String(format: "report-%04d-%02d.csv", report.year, report.month)
        return Response(status: .ok, headers: [.contentType: "text/csv; charset=utf-8", .contentDisposition: "attachment; filename=\"\(name)\"",
                                               .cacheControl: "private, no-store"],
                        body: .init(byteBuffer: ByteBuffer(string: report.csv(web.language))))
    }

    /// `POST /staff/holds/{id}/release` (the calendar's "Release" beside a held time), back to
    /// the calendar it came from.
    @Sendable func releaseHold(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        let id = try context.parameters.id("id")
        let form = try await dependencies.form(request, context, web)
        let requestId = context.requestId
        try await dependencies.awaited(web.language) { [system] in try await system.staff.releaseHold(member, holdId: id, requestId: requestId) }
        let back = form["back"].flatMap { $0.hasPrefix("/staff/calendar?") ? $0 : nil } ?? "/staff/calendar"
        return dependencies.redirect(back, web)
    }

    /// `/staff/calendar?from=YYYY-MM-DD&days=1|7[&department=ID][&doctor=ID]`.
    @Sendable func calendar(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        let from = try request.query("from").flatMap { $0.isEmpty ? nil : try TimeInput.parseDay($0) }
        let days = request.query("days") == "7" ? 7 : 1
        let departmentId = request.query("department").flatMap(Int64.init)
        let doctorId = request.query("doctor").flatMap(Int64.init)
        let requestId = context.requestId
        let calendar = try await dependencies.awaited(web.language) { [system, runner = dependencies.poolRunner] in
            try await system.frontDeskCalendar(member, from: from, days: days, departmentId: departmentId, doctorId: doctorId,
                                               requestId: requestId, computing: runner)
        }
        let zone = calendar.zone, now = Date()
        func query(_ day: LocalDateTime, _ count: Int) -> String {
            var text = "/staff/calendar?from=\(day.dayText)&days=\(count)"
            if let departmentId { text += "&department=\(departmentId)" }
            if let doctorId { text += "&doctor=\(doctorId)" }
            return text
        }
        func local(_ date: Date) -> LocalDateTime { LocalDateTime.of(date, in: zone) }
        // One doctor's cell at one time: their appointment, a hold, a free time (a link for the
        // front desk, a word for a doctor), a time not bookable, or none of their hours.
        func cell(_ column: CalendarColumn, _ time: Date, _ day: LocalDateTime) -> [String: Any] {
            if let entry = column.occupying.first(where: { $0.appointment.startsAt == time }) {
                let appointment = entry.appointment
                return ["entry": ["id": appointment.id ?? 0, "patient": entry.patientName ?? "—",
                                  "status": appointment.status.text(web.language),
                                  "minutes": Int(appointment.endsAt.timeIntervalSince(appointment.startsAt) / 60),
                                  "department": appointment.departmentId,
                                  "when": "\(DateText.time(time, timeZone: zone, language: web.language)) \(column.doctor.name)",
                                  "canMove": member.rescheduleRefusal(on: appointment) == nil] as [String: Any]]
            }
            if let hold = column.holds.first(where: { $0.startsAt <= time && $0.endsAt > time }) {
                return ["held": ["id": hold.id ?? 0, "canRelease": member.runsTheFrontDesk,
                                 "until": DateText.time(hold.expiresAt, timeZone: zone, language: web.language)] as [String: Any]]
            }
            if let slot = column.slots.first(where: { $0.start == time }) {
                // A doctor sees their free times as free (not a link: the front desk books).
                if slot.isAvailable, slot.start > now, !member.runsTheFrontDesk { return ["openTime": true] }
                if slot.isAvailable, slot.start > now, member.runsTheFrontDesk {
                    return ["free": ["href": "/staff/book?department=\(column.department.id ?? 0)&doctor=\(column.doctor.id ?? 0)"
                                     + "&start=" + DateText.iso8601(slot.start),
                                     "label": "\(DateText.day(time, timeZone: zone, language: web.language)) "
                                        + "\(DateText.time(time, timeZone: zone, language: web.language)) \(column.doctor.name)",
                                     // What dragging an appointment here posts to `/staff/move/{id}` (the move page's value).
                                     "slot": "\(DateText.iso8601(slot.start))|\(column.doctor.id ?? 0)",
                                     "department": column.department.id ?? 0, "date": day.dayText]]
                }
                return ["busy": true]
            }
            return ["closed": true]
        }
        // Cancelled visits of some days, struck through: their times are offered as free above.
        func cancelledVisits(_ columns: [CalendarColumn], _ days: Set<String>) -> [[String: Any]] {
            columns.flatMap { column in
                column.cancelled.filter { days.contains(local($0.appointment.startsAt).dayText) }.map { (column, $0) }
            }.sorted { $0.1.appointment.startsAt < $1.1.appointment.startsAt }.map { column, entry -> [String: Any] in
                ["id": entry.appointment.id ?? 0, "patient": entry.patientName ?? "—", "doctor": column.doctor.name,
                 "time": (days.count > 1 ? DateText.day(entry.appointment.startsAt, timeZone: zone, language: web.language) + " " : "")
                    + DateText.time(entry.appointment.startsAt, timeZone: zone, language: web.language)]
            }
        }
        let allDays = (0..<calendar.days).map { calendar.from.adding(days: $0) }
        func dayName(_ day: LocalDateTime) -> String {
            day.at(minuteOfDay: 720).firstInstant(in: zone).map { DateText.day($0, timeZone: zone, language: web.language) } ?? day.dayText
        }
        // The day view: the doctors side by side.
        let dayViews = calendar.days == 7 ? [] : allDays.map { day -> [String: Any] in
            var times: [Date] = []
            for column in calendar.columns {
                times += column.slots.filter { local($0.start).dayText == day.dayText }.map(\.start)
                times += column.occupying.filter { local($0.appointment.startsAt).dayText == day.dayText }.map(\.appointment.startsAt)
            }
            let rows = Array(Set(times)).sorted().map { time -> [String: Any] in
                ["time": DateText.time(time, timeZone: zone, language: web.language),
                 "cells": calendar.columns.map { cell($0, time, day) }]
            }
            let cancelled = cancelledVisits(calendar.columns, [day.dayText])
            return ["date": day.dayText, "dayName": dayName(day), "rows": rows, "empty": rows.isEmpty, "cancelled": cancelled,
                    "hasCancelled": !cancelled.isEmpty]
        }
        // The week (issue 46): as calendars show one, the days as columns (named by their
        // weekday), a grid a doctor; each row a time of day.
        let weekViews = calendar.days != 7 ? [] : calendar.columns.map { column -> [String: Any] in
            var starts: [String: Date] = [:], minutes: Set<Int> = []
            for time in column.slots.map(\.start) + column.occupying.map(\.appointment.startsAt) {
                let at = local(time)
                starts["\(at.dayText) \(at.hour * 60 + at.minute)"] = time
                minutes.insert(at.hour * 60 + at.minute)
            }
            let rows = minutes.sorted().map { minute -> [String: Any] in
                let label = allDays.compactMap { starts["\($0.dayText) \(minute)"] }.first
                    .map { DateText.time($0, timeZone: zone, language: web.language) } ?? ""
                return ["time": label, "cells": allDays.map { day -> [String: Any] in
                    guard let time = starts["\(day.dayText) \(minute)"] else { return ["closed": true] }
                    return cell(column, time, day)
                }]
            }
            let cancelled = cancelledVisits([column], Set(allDays.map(\.dayText)))
            return ["doctor": column.doctor.name, "doctorId": column.doctor.id ?? 0,
                    "department": Specialization.displayName(column.department.specialization, web.language),
                    "days": allDays.map { ["date": $0.dayText, "dayName": dayName($0)] }, "rows": rows, "empty": rows.isEmpty,
                    "cancelled": cancelled, "hasCancelled": !cancelled.isEmpty]
        }
        let today = LocalDateTime.of(now, in: zone)
        // A booking picked here comes back saying what was booked (issue 46).
        var notice: String?
        if let booked = request.query("booked").flatMap(Int64.init) {
            for column in calendar.columns {
                guard let entry = column.occupying.first(where: { $0.appointment.id == booked }) else { continue }
                notice = "\(WebText.labels(web.language)["staffBookedNotice"] ?? ""): "
                    + "\(DateText.dateTime(entry.appointment.startsAt, timeZone: zone, language: web.language)), "
                    + "\(column.doctor.name), \(entry.patientName ?? "—")"
            }
        }
        return dependencies.page("staff-calendar", web, [
            "notice": WebFormat.section(notice),
            // A doctor's calendar is their own: no department or doctor to choose.
            "chooseColumns": member.runsTheFrontDesk,
            "staffLogin": member.login, "frontDesk": member.runsTheFrontDesk,
            "clinic": calendar.clinic.name, "timeZone": zone.identifier, "from": calendar.from.dayText, "week": calendar.days == 7,
            "todayHref": query(today, calendar.days), "previousHref": query(calendar.from.adding(days: -calendar.days), calendar.days),
            "nextHref": query(calendar.from.adding(days: calendar.days), calendar.days),
            "dayHref": query(calendar.from, 1), "weekHref": query(calendar.from, 7), "days": calendar.days,
            "departments": calendar.departments.map {
                ["id": $0.id ?? 0, "name": Specialization.displayName($0.specialization, web.language), "selected": $0.id == departmentId]
                    as [String: Any]
            },
            "doctors": calendar.columns.map { ["id": $0.doctor.id ?? 0, "name": $0.doctor.name, "selected": $0.doctor.id == doctorId] as [String: Any] },
            "columns": calendar.columns.map { ["name": $0.doctor.name,
                                               "department": Specialization.displayName($0.department.specialization, web.language)] },
            "dayViews": dayViews, "weekViews": weekViews, "here": query(calendar.from, calendar.days),
        ])
    }

    /// `/staff/book?department=ID&doctor=ID&start=…`: the picked slot, then the patient and the
    /// visit type, then Confirm (`POST /staff/book`).
    @Sendable func bookPage(_ request: Request, context: APIContext) async throws -> Response {
        let web = try context.webRequest()
        guard let member = context.staffMember else { return dependencies.redirect("/staff", web) }
        guard let departmentId = request.query("department").flatMap(Int64.init) else {
            throw ServerError.invalid(.fieldRequired, "department")
        }
        let doctorId = request.query("doctor").flatMap(Int64.init)
        let start = request.query("start") ?? ""
        let instant = try TimeInput.resolve(TimeInput.parse(start), in: .gmt)
        // A doctor of another department (or clinic) is refused here, before a patient is
        // searched for and the booking refuses it (issue 55).
        let choices = try await dependencies.awaited(web.language) { [system, runner = dependencies.poolRunner] in
            try await system.bookingChoices(clinicId: member.clinicId, departmentId: departmentId, doctorId: doctorId, computing: runner)
        }
        let zone = choices.clinic.zone
        // The patient: found by the first letters of their name (the blind index's search), or by login.
        var found: [String: Any] = ["searched": false]
        if let query = request.query("q").map({ $0.trimmingCharacters(in: .whitespaces) }), !query.isEmpty {
            let requestId = context.requestId
            found["searched"] = true
            found["q"] = query
            do {
                let matches = try await dependencies.awaited(web.language) { [system] in
                    try await system.staff.findPatients(member, query: query, requestId: requestId)
                }
                // What tells namesakes apart: the date of birth first, then the login or phone and
                // the e-mail, only those known (no stray "·").
                let words = WebText.labels(web.language)
                found["patients"] = matches.enumerated().map { index, match in
                    let details = [match.birthDate.map { "\(words["born"] ?? "") \($0)" }, match.login ?? match.phone, match.email]
                        .compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " · ")
                    return ["id": match.id, "name": "\(match.surname) \(match.name)", "details": WebFormat.section(details),
                            "checked": index == 0] as [String: Any]
                }
                found["none"] = matches.isEmpty
                found["hasPatients"] = !matches.isEmpty
            } catch let failure as APIFailure {
                found["searchError"] = failure.message(in: web.language)
            }
        }
        return dependencies.page("staff-book", web, found.merging([
            "staffLogin": member.login, "frontDesk": member.runsTheFrontDesk,
            "department": departmentId, "doctor": doctorId.map(String.init) ?? "", "start": DateText.iso8601(instant),
            "date": LocalDateTime.of(instant, in: zone).dayText,
            "when": DateText.dateTime(instant, timeZone: zone, language: web.language),
            "doctorName": WebFormat.section(choices.doctors.first { $0.id == doctorId }?.name),
            "departmentName": choices.departments.first { $0.id == departmentId }
                .map { Specialization.displayName($0.specialization, web.language) } ?? "",
            "hasVisitTypes": !choices.visitTypes.isEmpty,
            "visitTypes": choices.visitTypes.map { type in
                ["id": type.id, "name": WebClinicPages.visitTypeLabel(type, web.language)] as [String: Any]
            },
        ]) { $1 })
    }
}
