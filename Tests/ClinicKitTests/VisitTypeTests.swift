import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// Visit types (migration 12): slots as long as the visit, which must fit the doctor's hours
/// and no other appointment. "Now" is Sunday 2026-11-22 12:00 UTC; the week checked is Monday
/// 2026-11-23 to Sunday 2026-11-29 in Los Angeles (no clock change that week).
@Suite struct VisitTypeTests {
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    struct Window { let start: Int; let end: Int; let slot: Int }

    /// Random hours, exceptions and appointments of mixed lengths for one doctor; offered slots
    /// for a random visit length are compared with a minute-by-minute reference.
    @Test(arguments: 1...24) func offeredSlotsEqualABruteForceReference(seed: Int) throws {
        var random = Generator(state: UInt64(seed) &* 7919)
        let system = try makeSystem()
        let therapy = try department(system, "LA1", "therapy")
        let doctor = try system.departments.getDoctorsByDepartmentId(therapy.id ?? 0)[0]
        let doctorId = doctor.id ?? 0
        let zone = try clinic(system, "LA1").zone
        let monday = LocalDateTime(year: 2026, month: 11, day: 23)!
        let slotLengths = [10, 15, 20, 30]
        func windows() -> [Window] {
            var result: [Window] = []
            var minute = 6 * 60 + 5 * Int.random(in: 0...24, using: &random)
            for _ in 0..<Int.random(in: 1...2, using: &random) {
                let slot = slotLengths.randomElement(using: &random) ?? 20
                let end = min(1440, minute + slot * Int.random(in: 2...16, using: &random))
                guard end > minute else { break }
                result.append(Window(start: minute, end: end, slot: slot))
                minute = end + 5 * Int.random(in: 0...12, using: &random)
            }
            return result
        }
        var weekly: [Int: [Window]] = [:]
        var exceptions: [Int: [Window]] = [:] // day offset → windows ([] = day off)
        try system.database.writing { tx in
            for weekday in 1...7 where Bool.random(using: &random) || weekday == 1 {
                weekly[weekday] = windows()
            }
            for weekday in 1...7 { // every weekday: one without windows is a day off
                try tx.replaceWorkingHours(ofDoctor: doctorId, weekday: weekday, with: (weekly[weekday] ?? []).map {
                    DoctorSchedule.Interval(startMinute: $0.start, endMinute: $0.end, slotMinutes: $0.slot)
                })
            }
            for offset in 0..<7 where Int.random(in: 0..<4, using: &random) == 0 {
                let changed = Bool.random(using: &random) ? windows().prefix(1).map { $0 } : []
                exceptions[offset] = changed
                let window = changed.first
                _ = try tx.insertWorkingException(WorkingException(
                    id: nil, doctorId: doctorId, day: monday.adding(days: offset).dayText,
                    startMinute: window?.start, endMinute: window?.end, slotMinutes: window?.slot))
            }
        }
        // Appointments of mixed lengths, anywhere (hours may have changed since they were booked).
        let anna = try register(system, "anna")
        var busy: [(Int64, Int64)] = []
        for _ in 0..<Int.random(in: 0...12, using: &random) {
            let day = monday.adding(days: Int.random(in: 0..<7, using: &random))
            let wall = day.at(minuteOfDay: 5 * Int.random(in: 72...250, using: &random))
            guard let start = wall.firstInstant(in: zone) else { continue }
            let end = start.addingTimeInterval(TimeInterval(5 * 60 * Int.random(in: 1...24, using: &random)))
            let status = ["scheduled", "confirmed", "arrived", "cancelled", "completed"].randomElement(using: &random) ?? "scheduled"
            let appointment = Appointment(
                id: nil, clientId: status == "scheduled" ? nil : anna.id, clinicId: therapy.clinicId, departmentId: therapy.id ?? 0,
                doctorId: doctorId, doctorName: doctor.name, startsAt: start, endsAt: end,
                status: try #require(AppointmentStatus(rawValue: status)), notes: "", createdAt: Date(seconds: 0), updatedAt: Date(seconds: 0))
            do {
                // Each on its own, as the INSERT statements were: a refused one takes nothing else with it.
                _ = try system.database.writing { tx in try tx.insertAppointment(appointment) }
                if ["scheduled", "confirmed", "arrived"].contains(status) { busy.append((start.seconds, end.seconds)) }
            } catch {
                continue // the store refuses an active one the doctor (or the patient) holds already
            }
        }
        let duration = [10, 15, 20, 30, 40, 45, 60, 90].randomElement(using: &random) ?? 30
        let staffMember = try system.staff.addStaff(StaffInput(login: "boss", name: "Ann", surname: "Wu", role: .clinicAdmin,
                                                               clinicId: therapy.clinicId, password: "kettle-harbor-lantern"))
        let visit = try system.staff.addVisitType(staffMember, departmentId: therapy.id ?? 0, nameEn: "Visit", nameRu: "Приём",
                                                  durationMinutes: duration)
        let offered = try system.appointments.slots(departmentId: therapy.id ?? 0, doctorId: doctorId, from: monday, days: 7,
                                                    visitTypeId: visit.id)
        // The reference: every 5 minutes of every day, from the hours written above.
        var expected: [Int64: Bool] = [:] // start → free
        for offset in 0..<7 {
            let day = monday.adding(days: offset)
            let today = exceptions[offset] ?? weekly[day.weekday] ?? []
            for minute in stride(from: 0, to: 1440, by: 5) {
                let fits = today.contains { window in
                    minute >= window.start && (minute - window.start) % window.slot == 0 && duration % window.slot == 0
                        && minute + duration <= window.end
                }
                guard fits, let start = day.at(minuteOfDay: minute).firstInstant(in: zone) else { continue }
                let end = start.seconds + Int64(duration * 60)
                expected[start.seconds] = !busy.contains { $0.0 < end && $0.1 > start.seconds }
            }
        }
        #expect(Dictionary(uniqueKeysWithValues: offered.map { ($0.start.seconds, $0.isAvailable) }) == expected,
                "seed \(seed), \(duration) min")
        for slot in offered {
            #expect(slot.end.timeIntervalSince(slot.start) == TimeInterval(duration * 60))
            if slot.isAvailable {
                #expect(!busy.contains { $0.0 < slot.end.seconds && $0.1 > slot.start.seconds }, "seed \(seed): overlaps")
            }
        }
        // Booking the first free one takes the whole duration, and the slots now say so.
        if let free = offered.first(where: \.isAvailable) {
            let booker = try register(system, "booker")
            let booked = try system.appointments.createAppointment(clientId: booker.id ?? 0, departmentId: therapy.id ?? 0,
                                                                   at: .instant(free.start), doctorId: doctorId, visitTypeId: visit.id)
            #expect(booked.endsAt == free.end && booked.visitTypeId == visit.id)
            let after = try system.appointments.slots(departmentId: therapy.id ?? 0, doctorId: doctorId, from: monday, days: 7,
                                                      visitTypeId: visit.id)
            #expect(!after.contains { $0.isAvailable && $0.start < booked.endsAt && $0.end > booked.startsAt })
        }
    }

    /// Patients race for overlapping visits of different lengths with one doctor: whatever
    /// wins, no two active appointments of the doctor overlap.
    @Test func theDoubleBookingRaceHoldsWithMixedDurations() throws {
        let system = try makeSystem()
        let therapy = try department(system, "LA1", "therapy")
        let doctorId = try system.departments.getDoctorsByDepartmentId(therapy.id ?? 0)[0].id ?? 0
        let admin = try system.staff.addStaff(StaffInput(login: "boss", name: "Ann", surname: "Wu", role: .clinicAdmin,
                                                         clinicId: therapy.clinicId, password: "kettle-harbor-lantern"))
        let types = try [20, 40, 60].map {
            try system.staff.addVisitType(admin, departmentId: therapy.id ?? 0, nameEn: "\($0) min", nameRu: "\($0) мин", durationMinutes: $0)
        }
        let patients = try (0..<12).map { try register(system, "racer\($0)").id ?? 0 }
        let starts = [(9, 0), (9, 20), (9, 40), (10, 0)].map {
            TimeInput.Parsed.local(LocalDateTime(year: 2026, month: 11, day: 23, hour: $0.0, minute: $0.1)!)
        }
        let outcomes = LockedBox<[String]>([])
        DispatchQueue.concurrentPerform(iterations: patients.count) { index in
            let outcome: String
            do {
                _ = try system.appointments.createAppointment(clientId: patients[index], departmentId: therapy.id ?? 0,
                                                              at: starts[index % starts.count], doctorId: doctorId,
                                                              visitTypeId: types[index % types.count].id)
                outcome = "booked"
            } catch let error as ClinicError {
                outcome = error.code.rawValue
            } catch {
                outcome = "\(error)"
            }
            outcomes.withLock { $0.append(outcome) }
        }
        let results = outcomes.current
        #expect(results.allSatisfy { ["booked", "slot_taken", "slot_unavailable"].contains($0) }, "\(results)")
        #expect(results.contains("booked"))
        // Every active appointment of the doctor (all booked this week, none has started).
        let active = try system.database.reading { tx in
            try tx.activeAppointmentSpans(doctorId: doctorId, overlapping: testNow..<testNow.addingTimeInterval(30 * 86_400))
                .map { ($0.lowerBound.seconds, $0.upperBound.seconds) }
        }
        for (first, second) in zip(active, active.dropFirst()) {
            #expect(first.1 <= second.0, "overlap: \(first) and \(second)")
        }
    }

    /// Issue 56: by both paths, the CLI's seam and a server's awaited store
    /// (`ClinicAdminChangesStore.changeVisitType`); a refusal changes nothing.
    @Test(arguments: [false, true]) func visitTypesAreCheckedAndScoped(awaited: Bool) async throws {
        let system = try makeSystem()
        let therapy = try department(system, "LA1", "therapy"), other = try department(system, "NY1", "therapy")
        let admin = try system.staff.addStaff(StaffInput(login: "boss", name: "Ann", surname: "Wu", role: .clinicAdmin,
                                                         clinicId: therapy.clinicId, password: "kettle-harbor-lantern"))
        let desk = try system.staff.addStaff(StaffInput(login: "desk", name: "Sam", surname: "Lee", role: .receptionist,
                                                        clinicId: therapy.clinicId, password: "kettle-harbor-lantern"))
        let otherAdmin = try system.staff.addStaff(StaffInput(login: "boss-ny", name: "Ann", surname: "Wu", role: .clinicAdmin,
                                                              clinicId: other.clinicId, password: "kettle-harbor-lantern"))
        func add(_ member: StaffMember, _ departmentId: Int64?, _ en: String, _ ru: String, _ minutes: Int, price: Int? = nil)
            async throws -> VisitType {
            let id = departmentId ?? 0
            if awaited {
                return try await system.staff.addVisitType(member, departmentId: id, nameEn: en, nameRu: ru, durationMinutes: minutes,
                                                           priceCents: price, requestId: "req-vt")
            }
            return try {
                try system.staff.addVisitType(member, departmentId: id, nameEn: en, nameRu: ru, durationMinutes: minutes, priceCents: price,
                                              requestId: "req-vt")
            }()
        }
        func update(_ member: StaffMember, _ id: Int64, _ minutes: Int) async throws -> VisitType {
            if awaited {
                return try await system.staff.updateVisitType(member, id: id, nameEn: "First visit", nameRu: "Первичный приём",
                                                              durationMinutes: minutes, priceCents: nil, requestId: "req-vt")
            }
            return try {
                try system.staff.updateVisitType(member, id: id, nameEn: "First visit", nameRu: "Первичный приём", durationMinutes: minutes,
                                                 priceCents: nil, requestId: "req-vt")
            }()
        }
        func remove(_ member: StaffMember, _ id: Int64) async throws -> VisitType {
            if awaited { return try await system.staff.removeVisitType(member, id: id, requestId: "req-vt") }
            return try { try system.staff.removeVisitType(member, id: id, requestId: "req-vt") }()
        }
        let before = try fingerprint(system)
        #expect(await expectError(.invalidInput) { _ = try await add(admin, therapy.id, "A", "Б", 7) } != nil)
        #expect(await expectError(.invalidInput) { _ = try await add(admin, therapy.id, " ", "Б", 30) } != nil)
        #expect(await expectError(.forbidden) { _ = try await add(desk, therapy.id, "A", "Б", 30) } != nil)
        #expect(await expectError(.notFound) { _ = try await add(admin, other.id, "A", "Б", 30) } != nil)
        #expect(await expectError(.notFound) { _ = try await add(admin, 99_999, "A", "Б", 30) } != nil)
        #expect(try fingerprint(system) == before, "a refusal changes nothing")
        let first = try await add(admin, therapy.id, "First visit", "Первичный приём", 40, price: 12_000)
        let offered = try await system.departments.visitTypes(departmentId: therapy.id ?? 0)
        #expect(offered == [first])
        #expect(first.name(.ru) == "Первичный приём" && first.durationMinutes == 40 && first.priceCents == 12_000 && first.isActive)
        // Slots of another department with this visit type: not found.
        #expect(expectError(.notFound) { _ = try system.appointments.slots(departmentId: other.id ?? 0, visitTypeId: first.id) } != nil)
        let added = try fingerprint(system)
        #expect(await expectError(.notFound) { _ = try await update(admin, 99_999, 60) } != nil)
        #expect(await expectError(.forbidden) { _ = try await update(desk, first.id, 60) } != nil)
        #expect(await expectError(.notFound) { _ = try await update(otherAdmin, first.id, 60) } != nil, "another clinic's admin")
        #expect(await expectError(.notFound) { _ = try await remove(otherAdmin, first.id) } != nil)
        #expect(await expectError(.forbidden) { _ = try await remove(desk, first.id) } != nil)
        #expect(try fingerprint(system) == added, "a refusal changes nothing")
        let updated = try await update(admin, first.id, 60)
        #expect(updated.durationMinutes == 60 && updated.priceCents == nil)
        let removed = try await remove(admin, first.id)
        #expect(!removed.isActive)
        let left = try await system.departments.visitTypes(departmentId: therapy.id ?? 0)
        #expect(left.isEmpty)
        #expect(expectError(.notFound) { _ = try system.appointments.slots(departmentId: therapy.id ?? 0, visitTypeId: first.id) } != nil)
        #expect(try storedInt(system, "SELECT count(*) FROM audit_events WHERE action LIKE 'visit-type.%' AND request_id = 'req-vt'") == 3)
        #expect(try auditIsSound(system))
    }

    /// `find` with a visit length: the earliest time where the whole visit fits.
    @Test func findTakesAVisitLength() async throws {
        let system = try makeSystem()
        let point = Coordinate(latitude: 34.05, longitude: -118.25)!
        // Without the wall clock's budget (FindTests has it): a loaded machine must not cut the walk.
        let budget = SearchBudget(clinics: 10_000, seconds: 600)
        let single = try await system.appointments.searchFreeSlots(specialization: "therapy", near: point, clinics: system.clinics,
                                                                   budget: budget).slots
        let long = try await system.appointments.searchFreeSlots(specialization: "therapy", near: point, minutes: 60, clinics: system.clinics,
                                                                 budget: budget).slots
        let first = try #require(single.first), visit = try #require(long.first)
        #expect(visit.slot.end.timeIntervalSince(visit.slot.start) == 3600)
        #expect(first.slot.end.timeIntervalSince(first.slot.start) < 3600)
        #expect(await expectError(.invalidInput) {
            _ = try await system.appointments.findFreeSlots(specialization: "therapy", near: point, minutes: 7, clinics: system.clinics)
        } != nil)
    }
}
