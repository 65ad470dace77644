import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// A mail server stand-in: records what it accepts, refuses the first `failures` messages.
final class RecordingMailer: Mailer, @unchecked Sendable {
    private let lock = NSLock()
    private var failures: Int
    private(set) var sent: [(to: String, text: String)] = []
    init(failures: Int = 0) { self.failures = failures }

    func send(from: String, to: String, message: Data) throws -> String {
        try lock.withLock {
            if failures > 0 {
                failures -= 1
                throw ClinicError(.storage, .mailFailed, "451 try later")
            }
            sent.append((to, String(decoding: message, as: UTF8.self)))
            return "250"
        }
    }
    var messages: [(to: String, text: String)] { lock.withLock { sent } }
}

/// The inbox, reminders, calendars and the outbox (migration 13). "Now" is Sunday 2026-11-22
/// 12:00 UTC; appointments are on Monday 2026-11-23 in Los Angeles (UTC−8).
@Suite struct MessagingTests {
    let monday0920 = TimeInput.Parsed.local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 9, minute: 20)!)
    let monday1000 = TimeInput.Parsed.local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 10, minute: 0)!)

    func kinds(_ system: ClinicSystem, _ client: Client) throws -> [MessageKind] {
        try system.clients.messages(clientId: client.id ?? 0).reversed().map(\.kind)
    }

    @Test func everyChangeWritesAMessageInThePatientsLanguage() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy")
        let booked = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920)
        var inbox = try system.clients.messages(clientId: anna.id ?? 0)
        #expect(inbox.count == 1 && inbox[0].kind == .booked && inbox[0].appointmentId == booked.id)
        #expect(inbox[0].subject == "Appointment booked: Nov 23, 2026 at 9:20 AM")
        #expect(inbox[0].body.contains("America/Los_Angeles") && inbox[0].body.contains("Adventist Medical Center"))
        // Russian from now on: the next message is in Russian, the first stays as written.
        _ = try system.clients.updateProfile(clientId: anna.id ?? 0, ProfileChanges(language: .ru))
        let moved = try system.appointments.rescheduleAppointment(booked.id ?? 0, clientId: anna.id ?? 0, to: monday1000)
        inbox = try system.clients.messages(clientId: anna.id ?? 0)
        #expect(inbox[0].kind == .rescheduled && inbox[0].subject == "Запись перенесена на 23.11.2026, 10:00")
        _ = try system.appointments.cancelAppointment(moved.id ?? 0, clientId: anna.id ?? 0)
        #expect(try kinds(system, anna) == [.booked, .rescheduled, .cancelled])
        #expect(try system.clients.unreadCount(clientId: anna.id ?? 0) == 3)
        // A failed change writes nothing: the same slot twice.
        let ben = try register(system, "ben")
        _ = try system.appointments.createAppointment(clientId: ben.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920,
                                                      doctorId: booked.doctorId)
        let before = try fingerprint(system)
        #expect(expectError(.slotTaken) {
            _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920,
                                                          doctorId: booked.doctorId)
        } != nil)
        #expect(try fingerprint(system) == before)
    }

    @Test func theClinicsCancellationsCarryTheReason() async throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy")
        let booked = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920)
        let desk = try system.staff.addStaff(StaffInput(login: "desk", name: "Sam", surname: "Lee", role: .receptionist,
                                                        clinicId: booked.clinicId, doctorId: nil, password: "staff-passphrase-77"))
        _ = try await system.staff.act(desk, .cancel, appointmentId: booked.id ?? 0, reason: "Dr. Thompson is ill")
        let last = try await #require(try system.clients.messages(clientId: anna.id ?? 0).first)
        #expect(last.kind == .clinicCancelled && last.body.contains("Reason: Dr. Thompson is ill"))
        // The operator's cancellation (no reason given) says so in the patient's language.
        _ = try await system.clients.updateProfile(clientId: anna.id ?? 0, ProfileChanges(language: .ru))
        let again = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: monday1000)
        _ = try await system.appointments.setStatus(again.id ?? 0, to: .cancelled)
        let operatorCancel = try await #require(try system.clients.messages(clientId: anna.id ?? 0).first)
        #expect(operatorCancel.kind == .clinicCancelled && operatorCancel.body.contains("Причина: не указана"))
    }

    /// By both paths, the CLI's seam and a server's awaited store (issue 56).
    @Test(arguments: [false, true]) func aForcedHoursChangeTellsThePatientInTheirLanguage(awaited: Bool) async throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        _ = try { try system.clients.updateProfile(clientId: anna.id ?? 0, ProfileChanges(language: .ru)) }()
        let therapy = try department(system, "LA1", "therapy")
        let booked = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920)
        let admin = try system.staff.addStaff(StaffInput(login: "admin", name: "Sam", surname: "Lee", role: .clinicAdmin,
                                                         clinicId: booked.clinicId, doctorId: nil, password: "staff-passphrase-77"))
        // Refused without force: nothing changes, no message.
        let before = try fingerprint(system)
        #expect(expectError(.hoursConflict) {
            _ = try system.staff.setHours(admin, doctorId: booked.doctorId, weekday: 1, intervals: [])
        } != nil)
        #expect(try fingerprint(system) == before)
        let cancelled = awaited ? try await system.staff.setHours(admin, doctorId: booked.doctorId, weekday: 1, intervals: [], force: true)
            : try { try system.staff.setHours(admin, doctorId: booked.doctorId, weekday: 1, intervals: [], force: true) }()
        #expect(cancelled.map(\.id) == [booked.id])
        let last = try #require(try { try system.clients.messages(clientId: anna.id ?? 0) }().first)
        #expect(last.kind == .clinicCancelled && last.body.contains("Причина: изменились часы работы врача"))
    }

    @Test func aZoneCorrectionTellsTheBookedPatients() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy")
        _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920)
        let la1 = try clinic(system, "LA1").id ?? 0
        try system.database.writing { tx in
            try tx.setTimeZone(ofClinic: la1, to: "America/Denver")
            try ZoneChanges.record(tx, clinicId: la1, from: "America/Los_Angeles",
                                   to: "America/Denver", at: testNow)
        }
        let last = try #require(try system.clients.messages(clientId: anna.id ?? 0).first)
        #expect(last.kind == .clinicChanged)
        #expect(last.body.contains("from America/Los_Angeles to America/Denver") && last.body.contains("10:20 AM"))
    }

    /// The same through a directory import that moves a clinic's zone (the path an operator
    /// takes): the booked patient is told, and `admin check` lists the appointment.
    @Test func anImportThatMovesAClinicsZoneTellsTheBookedPatients() throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy")
        _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920)
        let csv = """
            external_id,name,address,city,state,lat,lon,category,is_pediatric,is_hospital,time_zone
            LA1,Adventist Medical Center,115 Mall Drive,Los Angeles,CA,34.05,-118.25,GENERAL ACUTE CARE,0,1,America/Denver
            """
        clock.advance(60) // the import comes after the booking
        _ = try system.clinics.importClinics(Data(csv.utf8))
        #expect(try clinic(system, "LA1").timeZone == "America/Denver")
        let last = try #require(try system.clients.messages(clientId: anna.id ?? 0).first)
        #expect(last.kind == .clinicChanged, "\(last)")
        #expect(last.body.contains("from America/Los_Angeles to America/Denver"))
        #expect(try system.database.reading { tx in try tx.appointmentsAfterZoneChanges(from: clock.now) }.count == 1)
    }

    @Test func remindersComeOnceEachAndNeverForAnOldTime() async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna"), ben = try register(system, "ben"), cleo = try register(system, "cleo")
        let therapy = try department(system, "LA1", "therapy")
        // Monday 09:20 LA is 17:20 UTC, 29 h 20 min from now.
        let a = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920)
        let b = try system.appointments.createAppointment(clientId: ben.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920)
        let c = try system.appointments.createAppointment(clientId: cleo.id ?? 0, departmentId: therapy.id ?? 0, at: monday1000)
        #expect(try await system.outbox.createReminders() == 0)
        _ = try system.appointments.cancelAppointment(c.id ?? 0, clientId: cleo.id ?? 0)
        clock.advance(5 * 3600 + 21 * 60) // 23 h 59 min before
        #expect(try await system.outbox.createReminders() == 2)
        #expect(try await system.outbox.createReminders() == 0)
        // Ben moves to 10:00: his next reminder is for 10:00; nothing more for 9:20.
        _ = try system.appointments.rescheduleAppointment(b.id ?? 0, clientId: ben.id ?? 0, to: monday1000)
        clock.advance(22 * 3600 + 60) // 1 h 58 min before 9:20, 2 h 38 min before 10:00
        #expect(try await system.outbox.createReminders() == 2) // Anna's 2-hour one, Ben's 24-hour one (late: nobody ran)
        clock.advance(40 * 60)
        #expect(try await system.outbox.createReminders() == 1)
        #expect(try await system.outbox.createReminders() == 0)
        #expect(try kinds(system, anna) == [.booked, .reminder, .reminder])
        #expect(try kinds(system, ben) == [.booked, .reminder, .rescheduled, .reminder, .reminder])
        let bens = try await system.clients.messages(clientId: ben.id ?? 0).prefix(2)
        #expect(bens.allSatisfy { $0.kind == .reminder && $0.subject.contains("10:00 AM") })
        #expect(try kinds(system, cleo) == [.booked, .cancelled])
        let reminders = try await system.clients.messages(clientId: anna.id ?? 0).filter { $0.kind == .reminder }
        #expect(Set(reminders.map(\.body).map { $0.contains("in 24 hours") || $0.contains("in 2 hours") }) == [true])
        _ = a
    }

    @Test func afterAnOutageOnlyTheNearestReminder() async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy")
        _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920)
        clock.advance(28 * 3600) // 1 h 20 min before: both leads have begun
        #expect(try await system.outbox.createReminders() == 1)
        let reminder = try await #require(try system.clients.messages(clientId: anna.id ?? 0).first)
        #expect(reminder.kind == .reminder && reminder.body.contains("in 2 hours"))
        // Booked inside the lead: the booking message is the reminder.
        let ben = try register(system, "ben")
        _ = try system.appointments.createAppointment(clientId: ben.id ?? 0, departmentId: therapy.id ?? 0, at: monday1000)
        clock.advance(30 * 60)
        #expect(try await system.outbox.createReminders() == 0)
    }

    @Test func inboxesAreThePatientsOwn() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna"), ben = try register(system, "ben")
        let therapy = try department(system, "LA1", "therapy")
        _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920)
        let message = try #require(try system.clients.messages(clientId: anna.id ?? 0).first)
        #expect(expectError(.notFound) { _ = try system.clients.markRead(clientId: ben.id ?? 0, messageId: message.id) } != nil)
        #expect(try system.clients.unreadCount(clientId: anna.id ?? 0) == 1)
        let read = try system.clients.markRead(clientId: anna.id ?? 0, messageId: message.id)
        #expect(read.readAt == testNow)
        #expect(try system.clients.unreadCount(clientId: anna.id ?? 0) == 0)
        #expect(try system.clients.messages(clientId: anna.id ?? 0, unreadOnly: true).isEmpty)
        #expect(try system.clients.messages(clientId: ben.id ?? 0).isEmpty)
        // "Mark all as read": the patient's own, in one change; the count says how many.
        let cleo = try register(system, "cleo")
        let booked = try system.appointments.createAppointment(clientId: cleo.id ?? 0, departmentId: therapy.id ?? 0, at: monday1000)
        _ = try system.appointments.cancelAppointment(booked.id ?? 0, clientId: cleo.id ?? 0)
        _ = try system.appointments.createAppointment(clientId: ben.id ?? 0, departmentId: therapy.id ?? 0, at: monday1000)
        #expect(try system.clients.unreadCount(clientId: cleo.id ?? 0) == 2)
        #expect(try system.clients.markAllRead(clientId: cleo.id ?? 0) == 2)
        #expect(try system.clients.unreadCount(clientId: cleo.id ?? 0) == 0)
        #expect(try system.clients.unreadCount(clientId: ben.id ?? 0) == 1, "another patient's stay unread")
        #expect(try system.clients.markAllRead(clientId: cleo.id ?? 0) == 0)
    }

    /// By both paths: the CLI's seam and a server's awaited store (`FrontDeskChangesStore.deskMessage`).
    @Test(arguments: [false, true]) func staffWriteToAPatientOrADay(awaited: Bool) async throws {
        let system = try makeSystem()
        func send(_ member: StaffMember, patientLogin: String? = nil, day: LocalDateTime? = nil, text: String) async throws -> Int {
            if awaited { return try await system.staff.message(member, patientLogin: patientLogin, day: day, text: text) }
            return try { try system.staff.message(member, patientLogin: patientLogin, day: day, text: text) }()
        }
        let anna = try register(system, "anna"), ben = try register(system, "ben"), cleo = try register(system, "cleo")
        let therapy = try department(system, "LA1", "therapy")
        let a = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920)
        _ = try system.appointments.createAppointment(clientId: ben.id ?? 0, departmentId: therapy.id ?? 0, at: monday1000)
        let la2 = try clinic(system, "LA2").id ?? 0
        func add(_ login: String, _ role: StaffRole, _ clinicId: Int64, doctor: Int64? = nil) throws -> StaffMember {
            try system.staff.addStaff(StaffInput(login: login, name: "Sam", surname: "Lee", role: role, clinicId: clinicId,
                                                 doctorId: doctor, password: "staff-passphrase-77"))
        }
        let desk = try add("desk", .receptionist, a.clinicId), other = try add("other", .clinicAdmin, la2)
        let doctor = try add("doc", .doctor, a.clinicId, doctor: a.doctorId)
        let monday = LocalDateTime(year: 2026, month: 11, day: 23)!
        #expect(try await send(desk, day: monday, text: "Dr. Thompson is ill on Monday") == 2)
        #expect(try await send(desk, day: monday.adding(days: 1), text: "Nobody") == 0)
        #expect(try await send(other, day: monday, text: "Not our patients") == 0)
        #expect(try await send(desk, patientLogin: "ANNA", text: "Bring your insurance card") == 1)
        let before = try fingerprint(system)
        // Cleo has no appointment at the clinic: its staff cannot reach her; nor a doctor anyone.
        #expect(await expectError(.notFound) { _ = try await send(desk, patientLogin: "cleo", text: "Hello") } != nil)
        #expect(await expectError(.notFound) { _ = try await send(other, patientLogin: "anna", text: "Hello") } != nil)
        #expect(await expectError(.forbidden) { _ = try await send(doctor, patientLogin: "anna", text: "Hello") } != nil)
        #expect(await expectError(.invalidInput) { _ = try await send(desk, patientLogin: "anna", text: "  ") } != nil)
        #expect(await expectError(.invalidInput) { _ = try await send(desk, patientLogin: "anna", text: "a\u{7}b") } != nil)
        #expect(await expectError(.invalidInput) {
            _ = try await send(desk, patientLogin: "anna", text: String(repeating: "x", count: 2001))
        } != nil)
        #expect(await expectError(.invalidInput) { _ = try await send(desk, patientLogin: "anna", day: monday, text: "Both") } != nil)
        #expect(await expectError(.invalidInput) { _ = try await send(desk, text: "Neither") } != nil)
        #expect(try fingerprint(system) == before)
        #expect(try kinds(system, anna) == [.booked, .clinic, .clinic])
        #expect(try kinds(system, cleo) == [])
        let latest = try #require(try await system.clients.messages(clientId: anna.id ?? 0).first)
        #expect(latest.subject == "Message from Adventist Medical Center" && latest.body == "Bring your insurance card")
        // Each one is in the patient's access log.
        #expect(try await system.clients.accessLog(clientId: anna.id ?? 0).filter { $0.action == "message.send" }.count == 2)
    }

    @Test func anAddressIsConfirmedByItsCode() async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna")
        let id = anna.id ?? 0
        #expect(await expectError(.invalidInput) { _ = try await system.clients.setEmail(clientId: id, address: "not an address") } != nil)
        #expect(await expectError(.invalidInput) { _ = try await system.clients.setEmail(clientId: id, address: "a@b") } != nil)
        #expect(await expectError(.notFound) { _ = try await system.clients.confirmEmail(clientId: id, code: "123456") } != nil)
        _ = try await system.clients.setEmail(clientId: id, address: "anna@example.org")
        #expect(await expectError(.rateLimited) { _ = try await system.clients.setEmail(clientId: id, address: "anna@example.org") } != nil)
        let mailer = RecordingMailer()
        _ = try await system.outbox.run(mailer: mailer, from: "clinic@example.org")
        let codeMail = try #require(mailer.messages.first)
        #expect(codeMail.to == "anna@example.org")
        let code = String(try #require(decodedParts(codeMail.text).first?.split(separator: "\r\n").first?.suffix(6)))
        #expect(code.count == 6 && code.allSatisfy(\.isNumber))
        // The address is stored sealed, like the rest of the profile.
        let stored = try system.database.reading { tx in try tx.storedClient(id: id) }
        #expect(String(describing: try #require(stored)).contains("anna@example.org") == false)
        let wrong = code == "000000" ? "111111" : "000000"
        #expect(await expectError(.invalidInput) { _ = try await system.clients.confirmEmail(clientId: id, code: wrong) } != nil)
        let status = try await system.clients.confirmEmail(clientId: id, code: code)
        #expect(status == EmailStatus(confirmed: "anna@example.org", pending: nil))
        // Five wrong codes spend a code.
        clock.advance(61)
        _ = try await system.clients.setEmail(clientId: id, address: "anna@example.net")
        _ = try await system.outbox.run(mailer: mailer, from: "clinic@example.org")
        let second = String(try #require(decodedParts(mailer.messages[1].text).first?.split(separator: "\r\n").first?.suffix(6)))
        for _ in 0..<5 {
            #expect(await expectError(.invalidInput) { _ = try await system.clients.confirmEmail(clientId: id, code: second == "000000" ? "111111" : "000000") } != nil)
        }
        #expect(await expectError(.invalidInput) { _ = try await system.clients.confirmEmail(clientId: id, code: second) } != nil)
        #expect(try await system.clients.email(clientId: id) == EmailStatus(confirmed: "anna@example.org", pending: "anna@example.net"))
        // An expired code fails too.
        clock.advance(61)
        _ = try await system.clients.setEmail(clientId: id, address: "anna@example.net")
        _ = try await system.outbox.run(mailer: mailer, from: "clinic@example.org")
        let third = String(try #require(decodedParts(mailer.messages[2].text).first?.split(separator: "\r\n").first?.suffix(6)))
        clock.advance(31 * 60)
        #expect(await expectError(.invalidInput) { _ = try await system.clients.confirmEmail(clientId: id, code: third) } != nil)
        try await system.clients.removeEmail(clientId: id)
        #expect(try await system.clients.email(clientId: id) == EmailStatus(confirmed: nil, pending: nil))
    }

    func confirmedPatient(_ system: ClinicSystem, _ login: String, _ mailer: RecordingMailer) async throws -> Client {
        let client = try register(system, login)
        try await confirmEmail(system, clientId: client.id ?? 0, "\(login)@example.org", mailer: mailer)
        return client
    }

    @Test func theOutboxSendsEachMessageOnceWithTheEvent() async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let setup = RecordingMailer()
        let anna = try await confirmedPatient(system, "anna", setup)
        let therapy = try department(system, "LA1", "therapy")
        let booked = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920)
        // Refused twice: retried after the back-off, not before.
        let mailer = RecordingMailer(failures: 2)
        var report = try await system.outbox.run(mailer: mailer, from: "clinic@example.org")
        #expect(report.sent == 0 && report.retrying == 1)
        report = try await system.outbox.run(mailer: mailer, from: "clinic@example.org")
        #expect(report == DeliveryReport())
        clock.advance(61)
        report = try await system.outbox.run(mailer: mailer, from: "clinic@example.org")
        #expect(report.retrying == 1)
        clock.advance(121)
        report = try await system.outbox.run(mailer: mailer, from: "clinic@example.org")
        #expect(report.sent == 1)
        #expect(try await system.outbox.run(mailer: mailer, from: "clinic@example.org").sent == 0)
        let mail = try #require(mailer.messages.first?.text)
        #expect(mailer.messages.count == 1 && mailer.messages[0].to == "anna@example.org")
        #expect(mail.contains("Subject: Appointment booked: Nov 23, 2026 at 9:20 AM"))
        #expect(mail.contains("Message-ID: <delivery-") && mail.contains("Content-Type: text/calendar"))
        let parts = decodedParts(mail)
        #expect(parts.count == 2)
        #expect(parts[1].contains("UID:" + ICalendar.uid(booked)) && parts[1].contains("DTSTART;TZID=America/Los_Angeles:20261123T092000"))
        let row = try storedRows(system, "SELECT state, attempts, reply, last_error FROM deliveries WHERE purpose = 'message'").first
        let state: String? = row?["state"], attempts: Int? = row?["attempts"], reply: String? = row?["reply"]
        #expect(state == "sent" && attempts == 3 && reply == "250")
    }

    @Test func aDeliveryIsGivenUpAfterADay() async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try await confirmedPatient(system, "anna", RecordingMailer())
        let therapy = try department(system, "LA1", "therapy")
        _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920)
        let down = RecordingMailer(failures: 1000)
        var failed = 0
        // 26 hours: the booking's delivery gives up; the reminders written meanwhile are younger.
        for _ in 0..<26 {
            failed += try await system.outbox.run(mailer: down, from: "clinic@example.org").failed
            clock.advance(3600)
        }
        #expect(failed == 1)
        let row = try storedRows(system, "SELECT state, attempts, reply, last_error FROM deliveries WHERE purpose = 'message'").first
        let state: String? = row?["state"], error: String? = row?["last_error"]
        #expect(state == "failed" && error?.contains("451 try later") == true)
    }

    @Test func noAddressNoMail() async throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy")
        _ = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920)
        let mailer = RecordingMailer()
        #expect(try await system.outbox.run(mailer: mailer, from: "clinic@example.org") == DeliveryReport())
        #expect(mailer.messages.isEmpty)
        // A confirmed address removed before the mail went: dropped, not sent.
        let ben = try await confirmedPatient(system, "ben", mailer)
        _ = try system.appointments.createAppointment(clientId: ben.id ?? 0, departmentId: therapy.id ?? 0, at: monday1000)
        try await system.clients.removeEmail(clientId: ben.id ?? 0)
        let before = mailer.messages.count
        #expect(try await system.outbox.run(mailer: mailer, from: "clinic@example.org").sent == 0)
        #expect(mailer.messages.count == before)
    }

    @Test func calendarFilesCarryTheZoneSequenceAndStatus() throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy")
        let booked = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920)
        var ics = try system.appointments.calendarFile(booked.id ?? 0, clientId: anna.id ?? 0)
        #expect(ics.hasPrefix("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n") && ics.hasSuffix("END:VCALENDAR\r\n"))
        #expect(ics.contains("DTSTART;TZID=America/Los_Angeles:20261123T092000\r\n"))
        #expect(ics.contains("SEQUENCE:0\r\n") && ics.contains("STATUS:CONFIRMED\r\n") && ics.contains("TRIGGER:-P1D"))
        #expect(ics.contains("GEO:34.050000;-118.250000\r\n"))
        // The zone's transitions around the event: into PST on 2026-11-01 at 2:00 PDT.
        #expect(ics.contains("BEGIN:STANDARD\r\nDTSTART:20261101T020000\r\nTZOFFSETFROM:-0700\r\nTZOFFSETTO:-0800\r\n"))
        #expect(ics.contains("BEGIN:DAYLIGHT\r\nDTSTART:20270314T020000\r\nTZOFFSETFROM:-0800\r\nTZOFFSETTO:-0700\r\n"))
        #expect(ics.components(separatedBy: "\r\n").allSatisfy { $0.utf8.count <= 75 })
        let moved = try system.appointments.rescheduleAppointment(booked.id ?? 0, clientId: anna.id ?? 0, to: monday1000)
        ics = try system.appointments.calendarFile(moved.id ?? 0, clientId: anna.id ?? 0)
        #expect(ics.contains("SEQUENCE:1\r\n") && ics.contains("DTSTART;TZID=America/Los_Angeles:20261123T100000"))
        _ = try system.appointments.cancelAppointment(moved.id ?? 0, clientId: anna.id ?? 0)
        ics = try system.appointments.calendarFile(moved.id ?? 0, clientId: anna.id ?? 0)
        #expect(ics.contains("SEQUENCE:2\r\n") && ics.contains("STATUS:CANCELLED\r\n") && !ics.contains("VALARM"))
        // Only the owner.
        let ben = try register(system, "ben")
        #expect(expectError(.forbidden) { _ = try system.appointments.calendarFile(booked.id ?? 0, clientId: ben.id ?? 0) } != nil)
    }

    @Test func textIsEscapedAndFolded() {
        #expect(ICalendar.escape("a,b;c\\d\ne") == "a\\,b\\;c\\\\d\\ne")
        let long = "SUMMARY:" + String(repeating: "Ж", count: 60)
        let folded = ICalendar.fold(long)
        #expect(folded.components(separatedBy: "\r\n").allSatisfy { $0.utf8.count <= 75 })
        #expect(folded.replacingOccurrences(of: "\r\n ", with: "") == long)
        // A zone without clock changes has one observance; Minsk has been +03 since 2011.
        let minsk = ICalendar.timeZone(TimeZone(identifier: "Europe/Minsk")!, from: utc("2026-01-01T00:00:00Z"), to: utc("2028-01-01T00:00:00Z"))
        #expect(minsk.filter { $0.hasPrefix("TZOFFSETTO") } == ["TZOFFSETTO:+0300"])
    }

    @Test func aSubjectCannotAddHeaders() {
        let mail = String(decoding: Mail.compose(from: "clinic@example.org", to: "anna@example.org",
                                                 subject: "Hello\r\nBcc: eve@example.org", body: "Hi", messageId: "m1@clinic",
                                                 date: testNow), as: UTF8.self)
        #expect(!mail.contains("\r\nBcc:") && mail.contains("Subject: Hello  Bcc: eve@example.org\r\n"))
        #expect(Mail.compose(from: "c@example.org", to: "a@example.org", subject: "Запись", body: "Тест", messageId: "m2@clinic",
                             date: testNow).allSatisfy { $0 < 128 }, "headers and body are 7-bit (encoded words, base64)")
    }

    /// The feed awaited (`PatientAppointmentsStore.calendarFeed`, what a subscribed calendar
    /// polls) is the synchronous one, byte for byte: every appointment, cancelled ones too, each
    /// with its sequence; an unknown or overlong token is not found; no appointments, no event.
    @Test func theCalendarFeedAwaitedIsTheSeams() async throws {
        let system = try makeSystem()
        let anna = try register(system, "anna").id ?? 0
        let token = try await system.clients.calendarToken(clientId: anna)
        func bySeam() throws -> String { try system.clients.calendarFeed(token: token) }
        let empty = try await system.calendarFeed(token: token)
        #expect(try empty == bySeam() && !empty.contains("BEGIN:VEVENT") && empty.contains("BEGIN:VCALENDAR"))
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        let a = try system.appointments.createAppointment(clientId: anna, departmentId: therapy, at: monday0920)
        let b = try system.appointments.createAppointment(clientId: anna, departmentId: therapy, at: monday1000)
        _ = try system.appointments.rescheduleAppointment(a.id ?? 0, clientId: anna,
                                                          to: .local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 11, minute: 0)!))
        func cancel() throws { _ = try system.appointments.cancelAppointment(a.id ?? 0, clientId: anna) }
        try cancel()
        let feed = try await system.calendarFeed(token: token)
        #expect(try feed == bySeam())
        #expect(feed.components(separatedBy: "BEGIN:VEVENT").count == 3)
        #expect(feed.contains("UID:" + ICalendar.uid(b)) && feed.contains("SEQUENCE:0\r\n"))
        #expect(feed.contains("SEQUENCE:2\r\n") && feed.contains("STATUS:CANCELLED\r\n"), "moved, then cancelled")
        for wrong in ["", "nope", String(repeating: "a", count: 201)] {
            await #expect(throws: ClinicError(.notFound, .calendarTokenInvalid)) { _ = try await system.calendarFeed(token: wrong) }
        }

        // One appointment's file, awaited, is the synchronous one; another patient's is refused alike.
        let client = try await system.clients.getUserById(anna)
        func fileBySeam(_ id: Int64) throws -> String { try system.appointments.calendarFile(id, clientId: anna) }
        for id in [a.id ?? 0, b.id ?? 0] {
            let file = try await system.calendarFile(id, of: client)
            #expect(try file == fileBySeam(id) && file.contains("UID:" + ICalendar.uid(id == a.id ? a : b)))
        }
        let ben = try register(system, "ben")
        let others = await #expect(throws: ClinicError.self) { _ = try await system.calendarFile(a.id ?? 0, of: ben) }
        #expect(others != nil && others == expectError(.forbidden) { _ = try system.appointments.calendarFile(a.id ?? 0, clientId: ben.id ?? 0) })
    }

    @Test func theCalendarAddressIsPrivateAndRevocable() async throws {
        let system = try makeSystem()
        let anna = try register(system, "anna")
        let therapy = try department(system, "LA1", "therapy")
        let a = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: monday0920)
        let b = try system.appointments.createAppointment(clientId: anna.id ?? 0, departmentId: therapy.id ?? 0, at: monday1000)
        _ = try system.appointments.cancelAppointment(b.id ?? 0, clientId: anna.id ?? 0)
        let token = try await system.clients.calendarToken(clientId: anna.id ?? 0)
        #expect(try await system.clients.calendarToken(clientId: anna.id ?? 0) == token)
        let feed = try system.clients.calendarFeed(token: token)
        #expect(feed.components(separatedBy: "BEGIN:VEVENT").count == 3)
        #expect(feed.contains("UID:" + ICalendar.uid(a)) && feed.contains("STATUS:CANCELLED"))
        // Only its hash can be looked up; the token itself is sealed.
        #expect(try fingerprint(system).contains(token) == false)
        let rotated = try await system.clients.calendarToken(clientId: anna.id ?? 0, rotate: true)
        #expect(rotated != token)
        #expect(expectError(.notFound) { _ = try system.clients.calendarFeed(token: token) } != nil)
        #expect(expectError(.notFound) { _ = try system.clients.calendarFeed(token: "") } != nil)
        #expect(try system.clients.calendarFeed(token: rotated).contains("BEGIN:VEVENT"))
        try await system.clients.revokeCalendarToken(clientId: anna.id ?? 0)
        #expect(expectError(.notFound) { _ = try system.clients.calendarFeed(token: rotated) } != nil)
    }
}
