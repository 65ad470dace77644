import ClinicKit
import ClinicStoreSQLite
import Foundation
import GRDB

/// `clinic-bench --only waitlist-month` (issue 45): a department's month, simulated minute by
/// minute on a clock of its own, once with the waitlist and once without, with the same
/// bookings, cancellations and walk-in demand (one seed). What it reports: of the times freed
/// by cancellations (12 % of the bookings, a third of those within a day of the visit), the share
/// booked again before their start; the simulated minutes from the cancellation to the first
/// offer and to the new booking (p50, p99); and the offers made, accepted, declined and lapsed.
///
/// The model: the department's slots of four weeks are 90 % booked at the start; 80 patients
/// join its waitlist then, each for 3 to 8 days somewhere in the month (a third of them only
/// mornings or afternoons, a fifth with one doctor); a patient offered a time answers after a
/// delay with a mean of 20 minutes — 60 % accept, 15 % decline, the rest never answer and the
/// offer lapses after the default 15 minutes; besides them, once an hour on average someone
/// looks for a time on a random day of the next two weeks and books the first free one (the
/// demand that refills a freed time without a waitlist). The server's worker runs every
/// simulated minute (`clinic serve` runs it every second).
enum WaitlistSimulation {
    struct Outcome {
        var freed = 0, refilled = 0, offers = 0, accepted = 0, declined = 0, lapsed = 0
        /// Of the freed times, those that some waiting patient who takes offers wanted when the
        /// time was freed (issue 55: "where demand exists"), and how many of those were refilled.
        var wanted = 0, wantedRefilled = 0
        var toOffer: [Double] = [], toBooking: [Double] = []
    }

    /// The mean minutes a patient takes to answer an offer: by text with its one-tap link (the
    /// phone at hand: a few minutes), or through the inbox and e-mail (issue 45's model).
    static let textAnswerMinutes = 5.0
    static let inboxAnswerMinutes = 20.0

    static func run(folder: URL, quick: Bool) throws -> String {
        let days = quick ? 14 : 28
        let with = try simulate(waitlist: true, days: days, folder: folder, answerMinutes: textAnswerMinutes)
        let inbox = try simulate(waitlist: true, days: days, folder: folder, answerMinutes: inboxAnswerMinutes)
        let without = try simulate(waitlist: false, days: days, folder: folder, answerMinutes: textAnswerMinutes)
        func percentile(_ values: [Double], _ p: Double) -> String {
            guard !values.isEmpty else { return "-" }
            let sorted = values.sorted()
            return String(format: "%.0f", sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))])
        }
        func share(_ outcome: Outcome) -> String {
            String(format: "%d of %d (%.0f %%)", outcome.refilled, outcome.freed,
                   outcome.freed == 0 ? 0 : 100 * Double(outcome.refilled) / Double(outcome.freed))
        }
        func wantedShare(_ outcome: Outcome) -> String {
            guard outcome.wanted > 0 else { return "-" }
            return String(format: "%d of %d (%.0f %%)", outcome.wantedRefilled, outcome.wanted,
                   outcome.wanted == 0 ? 0 : 100 * Double(outcome.wantedRefilled) / Double(outcome.wanted))
        }
        var lines = ["waitlist-month: a department's \(days) days, simulated minute by minute (same seed both runs)"]
        func row(_ name: String, _ a: String, _ b: String, _ c: String) {
            lines.append(name.padding(toLength: 44, withPad: " ", startingAt: 0)
                         + [a, b, c].map { String(repeating: " ", count: max(1, 25 - $0.count)) + $0 }.joined())
        }
        func offers(_ outcome: Outcome) -> String { "\(outcome.offers) / \(outcome.accepted) / \(outcome.declined) / \(outcome.lapsed)" }
        row("", "waitlist, by text", "waitlist, by inbox", "without")
        row("freed times booked again before their start", share(with), share(inbox), share(without))
        row("… of those a waiting patient wanted", wantedShare(with), wantedShare(inbox), wantedShare(without))
        row("cancellation → first offer, p50 / p99 (min)", "\(percentile(with.toOffer, 0.5)) / \(percentile(with.toOffer, 0.99))",
            "\(percentile(inbox.toOffer, 0.5)) / \(percentile(inbox.toOffer, 0.99))", "-")
        row("cancellation → new booking, p50 / p99 (min)",
            "\(percentile(with.toBooking, 0.5)) / \(percentile(with.toBooking, 0.99))",
            "\(percentile(inbox.toBooking, 0.5)) / \(percentile(inbox.toBooking, 0.99))",
            "\(percentile(without.toBooking, 0.5)) / \(percentile(without.toBooking, 0.99))")
        row("offers made / accepted / declined / lapsed", offers(with), offers(inbox), "-")
        return lines.joined(separator: "\n")
    }

    static func simulate(waitlist: Bool, days: Int, folder: URL, answerMinutes: Double) throws -> Outcome {
        var random = SeededGenerator(seed: 45)
        let database = try DatabaseBenchmarks.bookingDatabase(folder, name: "waitlist-\(waitlist)-\(Int(answerMinutes)).sqlite", clinics: 1,
                                                              patients: 1200)
        let zone = TimeZone(identifier: "America/Chicago") ?? .gmt
        // Monday 2027-03-01, 06:00 in the clinic's zone.
        let start = LocalDateTime(year: 2027, month: 3, day: 1, hour: 6)?.firstInstant(in: zone) ?? Date()
        let clock = LockedBox(start)
        let system = ClinicSystem(store: database, resources: nil, now: { clock.withLock { $0 } })
        try database.write { db in
            try db.execute(sql: "UPDATE clinics SET time_zone = 'America/Chicago'")
            try db.execute(sql: "INSERT OR REPLACE INTO settings (key, value) VALUES ('booking.waitlist_entries', '100')")
        }
        let department = try database.read { db in
            try Int64.fetchOne(db, sql: """
                SELECT department_id FROM doctors WHERE is_active GROUP BY department_id HAVING count(*) >= 2 ORDER BY department_id LIMIT 1
                """)
        } ?? 1
        let doctors = try system.departments.getDoctorsByDepartmentId(department).compactMap(\.id)
        let firstDay = LocalDateTime.of(start, in: zone).at(minuteOfDay: 0).adding(days: 1)
        let slots = try system.appointments.slots(departmentId: department, from: firstDay, days: days).filter(\.isAvailable)

        // The month's bookings: 90 % of the slots, by patients 1…600.
        var booked: [(id: Int64, start: Date, doctor: Int64, client: Int64)] = []
        for (index, slot) in slots.enumerated() where Double.random(in: 0..<1, using: &random) < 0.9 {
            let client = Int64(index % 600 + 1)
            let appointment = try system.appointments.createAppointment(clientId: client, departmentId: department,
                                                                        at: .instant(slot.start), doctorId: slot.doctorId)
            booked.append((appointment.id ?? 0, slot.start, slot.doctorId, client))
        }
        // 12 % cancelled, at a time between now and two hours before the visit; a third of them late.
        var cancellations: [(at: Date, appointment: Int64, client: Int64, doctor: Int64, start: Date)] = []
        for booking in booked where Double.random(in: 0..<1, using: &random) < 0.12 {
            let latest = booking.start.addingTimeInterval(-2 * 3600)
            let earliest = Double.random(in: 0..<1, using: &random) < 0.33 ? booking.start.addingTimeInterval(-24 * 3600) : start
            guard latest > earliest else { continue }
            let at = earliest.addingTimeInterval(Double.random(in: 0..<1, using: &random) * latest.timeIntervalSince(earliest))
            cancellations.append((at, booking.id, booking.client, booking.doctor, booking.start))
        }
        cancellations.sort { $0.at < $1.at }
        // Walk-in demand, the same in both runs: once an hour on average.
        var demand: [(at: Date, day: Int, client: Int64)] = []
        var next = start
        let end = start.addingTimeInterval(TimeInterval(days) * 86_400)
        while next < end {
            next = next.addingTimeInterval(-log(1 - Double.random(in: 0..<1, using: &random)) * 3600)
            demand.append((next, Int.random(in: 0..<14, using: &random), Int64(900 + demand.count % 300)))
        }
        // The waiting patients (601…680) and how each would answer an offer.
        var answers: [Int64: (delay: TimeInterval, accept: Bool, decline: Bool)] = [:]
        if waitlist {
            for client in Int64(601)...680 {
                let from = Int.random(in: 0..<max(1, days - 3), using: &random), length = Int.random(in: 3...8, using: &random)
                let hours: (String, String)? = switch Int.random(in: 0..<6, using: &random) {
                case 0: ("08:00", "12:00")
                case 1: ("13:00", "17:00")
                default: nil
                }
                let doctor = Double.random(in: 0..<1, using: &random) < 0.2 ? doctors.randomElement(using: &random) : nil
                _ = try system.waitlist.join(clientId: client, .init(
                    departmentId: department, doctorId: doctor, from: firstDay.adding(days: from).dayText,
                    to: firstDay.adding(days: min(days - 1, from + length)).dayText, hoursFrom: hours?.0, hoursTo: hours?.1))
                let roll = Double.random(in: 0..<1, using: &random)
                answers[client] = (-log(1 - Double.random(in: 0..<1, using: &random)) * answerMinutes * 60, roll < 0.6, roll >= 0.6 && roll < 0.75)
            }
        }

        var outcome = Outcome()
        // The freed times some waiting patient who takes offers wanted when they were freed (the
        // same patients and windows in both runs: measured in the run without the waitlist too).
        var wantedTimes = Set<Int64>()
        let takers = answers.filter { $0.value.accept }.map(\.key)
        var pending: [(at: Date, offer: Int64, client: Int64, accept: Bool)] = []
        var seenOffers = Set<Int64>()
        var cancelIndex = 0, demandIndex = 0
        var now = start
        while now < end {
            clock.withLock { $0 = now }
            while cancelIndex < cancellations.count, cancellations[cancelIndex].at <= now {
                let cancellation = cancellations[cancelIndex]
                cancelIndex += 1
                if waitlist, cancellation.start > now {
                    let end = cancellation.start.addingTimeInterval(20 * 60)
                    let wanted = try takers.contains { client in
                        try system.waitlist.entries(clientId: client).contains {
                            $0.status == .waiting && ($0.doctorId == nil || $0.doctorId == cancellation.doctor)
                                && $0.fits(start: cancellation.start, end: end, zone: zone, before: nil)
                        }
                    }
                    if wanted { wantedTimes.insert(cancellation.appointment) }
                }
                _ = try? system.appointments.cancelAppointment(cancellation.appointment, clientId: cancellation.client)
            }
            while demandIndex < demand.count, demand[demandIndex].at <= now {
                let want = demand[demandIndex]
                demandIndex += 1
                let day = LocalDateTime.of(now, in: zone).at(minuteOfDay: 0).adding(days: 1 + want.day)
                if let free = try system.appointments.slots(departmentId: department, from: day, days: 1).first(where: \.isAvailable) {
                    _ = try? system.appointments.createAppointment(clientId: want.client, departmentId: department,
                                                                   at: .instant(free.start), doctorId: free.doctorId)
                }
            }
            if waitlist {
                _ = try Clock.wait { try await system.waitlist.work() }
                // New offers: when (and how) their patient answers.
                for client in Int64(601)...680 {
                    for offer in try system.waitlist.offers(clientId: client) where !seenOffers.contains(offer.id ?? 0) {
                        seenOffers.insert(offer.id ?? 0)
                        guard let answer = answers[client], answer.accept || answer.decline else { continue }
                        pending.append((now.addingTimeInterval(answer.delay), offer.id ?? 0, client, answer.accept))
                    }
                }
                for (index, reply) in pending.enumerated().reversed() where reply.at <= now {
                    pending.remove(at: index)
                    if reply.accept { _ = try? system.waitlist.accept(reply.offer, clientId: reply.client) } else {
                        try? system.waitlist.decline(reply.offer, clientId: reply.client)
                    }
                }
            }
            now = now.addingTimeInterval(60)
        }

        // What became of each freed time (one still ahead of the lead time when it was freed).
        try database.read { db in
            for cancellation in cancellations where cancellation.at < end && cancellation.start > cancellation.at {
                outcome.freed += 1
                let rebooked = try Int64.fetchOne(db, sql: """
                    SELECT min(created_at) FROM appointments WHERE doctor_id = ? AND starts_at = ? AND id <> ?
                    AND status IN ('scheduled', 'confirmed', 'arrived', 'in_progress', 'completed')
                    """, arguments: [cancellation.doctor, cancellation.start.seconds, cancellation.appointment])
                let wanted = wantedTimes.contains(cancellation.appointment)
                if wanted { outcome.wanted += 1 }
                if let rebooked {
                    outcome.refilled += 1
                    if wanted { outcome.wantedRefilled += 1 }
                    outcome.toBooking.append(Double(rebooked - cancellation.at.seconds) / 60)
                }
                if let offered = try Int64.fetchOne(db, sql: """
                    SELECT min(created_at) FROM waitlist_offers WHERE doctor_id = ? AND starts_at = ?
                    """, arguments: [cancellation.doctor, cancellation.start.seconds]) {
                    outcome.toOffer.append(Double(offered - cancellation.at.seconds) / 60)
                }
            }
            for (status, count) in try Row.fetchAll(db, sql: "SELECT status, count(*) AS n FROM waitlist_offers GROUP BY status")
                .map({ (($0["status"] as String?) ?? "", ($0["n"] as Int?) ?? 0) }) {
                outcome.offers += count
                switch status {
                case "accepted": outcome.accepted += count
                case "declined": outcome.declined += count
                case "lapsed": outcome.lapsed += count
                default: break
                }
            }
        }
        return outcome
    }
}
