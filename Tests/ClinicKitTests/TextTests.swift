import Foundation
import Synchronization
import Testing
@testable import ClinicKit

/// A phone network in memory: what the outbox hands the gateway, or a failure.
final class RecordingTexter: TextSender, @unchecked Sendable {
    struct Sent: Equatable { let to: String; let body: String; let coding: TextMessage.Coding; let deliveryId: Int64 }
    private let lock = NSLock()
    private var sent: [Sent] = []
    private var failing = false

    var texts: [Sent] { lock.withLock { sent } }
    func fail(_ on: Bool) { lock.withLock { failing = on } }

    func send(to number: String, text: TextMessage, deliveryId: Int64) throws -> String {
        try lock.withLock {
            if failing { throw ClinicError(.storage, .smsFailed, "503 gateway down") }
            sent.append(Sent(to: number, body: text.body, coding: text.coding, deliveryId: deliveryId))
            return "202 0: Accepted for delivery"
        }
    }
}

/// Text messages (issue 45) on the store under test: a number confirmed by a code, what is
/// texted and to whom, the one-tap link, the replies STOP, START, C and X, delivery reports.
/// "Now" is Sunday 2026-11-22 12:00 UTC (the TestClock); Monday 09:20 in Los Angeles is 17:20 UTC.
@Suite struct TextTests {
    let monday0920 = utc("2026-11-23T17:20:00Z")
    let monday1000 = utc("2026-11-23T18:00:00Z")
    let site = "https://clinic.example.org"

    struct Scene {
        let clock: TestClock
        let system: ClinicSystem
        let texter = RecordingTexter()
        let therapy: Int64
        let doctor: Int64
        let anna: Int64, bob: Int64
    }

    func scene() async throws -> Scene {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        // A gateway's process has said it sends texts (the outbox with a texter does).
        try await system.outbox.noteTextGateway()
        return Scene(clock: clock, system: system, therapy: therapy,
                     doctor: try system.departments.getDoctorsByDepartmentId(therapy)[0].id ?? 0,
                     anna: try register(system, "anna").id ?? 0, bob: try register(system, "bob").id ?? 0)
    }

    @discardableResult
    func deliver(_ s: Scene) async throws -> DeliveryReport {
        try await s.system.outbox.run(mailer: nil, from: "", texter: s.texter, site: site)
    }

    /// The six digits of the last code texted to `number`.
    func code(_ s: Scene, to number: String) throws -> String {
        let text = try #require(s.texter.texts.last { $0.to == number })
        return String(try #require(text.body.firstMatch(of: /\d{6}/)).output)
    }

    /// A patient with `number` confirmed.
    func confirm(_ s: Scene, _ clientId: Int64, _ number: String) async throws {
        _ = try await s.system.clients.setPhone(clientId: clientId, number: number)
        try await deliver(s)
        _ = try await s.system.clients.confirmPhone(clientId: clientId, code: try code(s, to: number))
    }

    // MARK: Encoding and numbers

    @Test func aTextIsGSM7WhenItCanBeAndUCS2OtherwiseWithinThreeSegments() {
        let english = TextMessage("Reminder: Adventist Medical Center, Nov 23, 2026 at 9:20 AM PST. Reply C to confirm or X to cancel.")
        #expect(english.coding == .gsm7 && english.segments == 1)
        #expect(TextMessage(String(repeating: "a", count: 160)).segments == 1)
        #expect(TextMessage(String(repeating: "a", count: 161)).segments == 2)
        // An extension character (€, [, ]) takes two septets.
        #expect(TextMessage(String(repeating: "€", count: 80)).segments == 1)
        #expect(TextMessage(String(repeating: "€", count: 81)).segments == 2)
        let russian = TextMessage("Напоминание: Минская больница, 23.11.2026, 09:20. Ответьте C или X.")
        #expect(russian.coding == .ucs2 && russian.segments == 1)
        #expect(TextMessage(String(repeating: "я", count: 71)).segments == 2)
        let long = TextMessage(String(repeating: "Очень длинное название клиники ", count: 20))
        #expect(long.coding == .ucs2 && long.segments == TextMessage.maxSegments && long.body.hasSuffix("..."))
        let longLatin = TextMessage(String(repeating: "word ", count: 200))
        #expect(longLatin.segments == 3 && longLatin.body.count == 153 * 3)
    }

    @Test func aNumberIsTakenInInternationalFormAndOnlyWhenItCanTakeTexts() throws {
        #expect(try PhoneNumber.checked("+1 (202) 555-0143") == "+12025550143")
        // Shown as people write it (issue 55: "+15035550142" on the profile).
        #expect(PhoneNumber.display("+15035550142") == "+1 503-555-0142")
        #expect(PhoneNumber.display("+79123456789") == "+7 912 345-67-89")
        #expect(PhoneNumber.display("+447700900123") == "+447700900123")
        #expect(try PhoneNumber.checked("+7 912 345-67-89") == "+79123456789")
        #expect(try PhoneNumber.checked("+44 7700 900123", countries: TextCountries(setting: "+44")) == "+447700900123")
        for bad in ["2025550143", "+1 202 555 014", "+0123456789", "+1202555014x", "", "+1234567890123456", "+١٢٠٢٥٥٥٠١٤٣"] {
            #expect(expectError(.invalidInput) { _ = try PhoneNumber.checked(bad) }?.key == .phoneInvalid, "\(bad)")
        }
        // Toll-free, premium, service codes, a Moscow fixed line: no texts.
        for landline in ["+18005550143", "+19005550143", "+12115550143", "+74951234567", "+10125550143"] {
            #expect(expectError(.invalidInput) { _ = try PhoneNumber.checked(landline) }?.key == .phoneNotMobile, "\(landline)")
        }
    }

    /// Issue 55 (A1): only the deployment's countries, never a premium, satellite, personal or
    /// unassigned range; the Caribbean's +1 codes only when listed by their own prefix.
    @Test func textsGoOnlyToTheListedCountriesAndNeverToPremiumOrSatelliteRanges() throws {
        for fraud in ["+979123456789", "+881612345678", "+882345678901", "+6991234567", "+447700900123", "+449091234567",
                      "+18765550143", "+18095550143", "+15005550143", "+15335550143", "+15665550143", "+12029765555",
                      "+14565550143", "+17105550143", "+13705550143"] {
            #expect(throws: ClinicError.self, "\(fraud)") { _ = try PhoneNumber.checked(fraud) }
        }
        #expect(expectError(.invalidInput) { _ = try PhoneNumber.checked("+979123456789") }?.key == .phoneNotMobile)
        #expect(expectError(.invalidInput) { _ = try PhoneNumber.checked("+6991234567") }?.key == .phoneCountry)
        #expect(expectError(.invalidInput) { _ = try PhoneNumber.checked("+18765550143") }?.key == .phoneCountry)
        // Puerto Rico and Guam are the United States'.
        #expect(try PhoneNumber.checked("+1 787 555 0143") == "+17875550143")
        let uk = try TextCountries(setting: "+1, +44 +1876")
        #expect(try PhoneNumber.checked("+44 7700 900123", countries: uk) == "+447700900123")
        #expect(try PhoneNumber.checked("+1 876 555 0143", countries: uk) == "+18765550143")
        for premium in ["+449091234567", "+447012345678", "+447612345678", "+448712345678"] {
            #expect(expectError(.invalidInput) { _ = try PhoneNumber.checked(premium, countries: uk) }?.key == .phoneNotMobile, "\(premium)")
        }
        for bad in ["", "44", "+0", "+12345", "+881", "+979", "+1,+x"] {
            #expect(expectError(.invalidInput) { _ = try TextCountries(setting: bad) }?.key == .smsSettingInvalid, "\(bad)")
        }
        #expect(try CodeLimits.from(environment: ["CLINIC_SMS_COUNTRIES": "+7", "CLINIC_SMS_DAILY_CODES": "3"]).textCodesPerDay == 3)
        #expect(throws: ClinicError.self) { _ = try CodeLimits.from(environment: ["CLINIC_SMS_DAILY_CODES": "0"]) }
    }

    /// Issue 55 (A1): codes are counted per account a day, per number a day, per network an
    /// hour and against the deployment's daily budget, in the store, so that a stranger cannot
    /// pump texts; nothing is queued for a refused code.
    @Test func codesAreCountedPerAccountPerNumberPerNetworkAndAgainstTheDailyBudget() async throws {
        let s = try await scene()
        var texted = 0
        func ask(_ client: Int64, _ number: String, from address: String? = nil) async throws {
            _ = try await s.system.clients.setPhone(clientId: client, number: number, from: address)
            texted += 1
            s.clock.advance(61)
            try await deliver(s)
        }
        for index in 0..<5 { try await ask(s.anna, "+1202555014\(index)") }
        #expect(await expectError(.rateLimited) { try await ask(s.anna, "+12025550149") }?.key == .codesPerDaySpent, "five a day per account")
        // The same number from other accounts: five a day in all.
        let others = try (0..<6).map { try register(s.system, "pump\($0)").id ?? 0 }
        for index in 0..<4 { try await ask(others[index], "+12025550144") }
        #expect(await expectError(.rateLimited) { try await ask(others[4], "+12025550144") }?.key == .codesPerDaySpent, "five a day per number")
        // One network: ten an hour, whichever account and number (an IPv6 /64 is one network).
        s.clock.advance(3600)
        try await deliver(s)  // the gateway's server runs its outbox meanwhile
        let crowd = try (0..<12).map { try register(s.system, "crowd\($0)").id ?? 0 }
        for index in 0..<10 { try await ask(crowd[index], "+1303555\(1000 + index)", from: "2001:db8:1:2:\(index)::1") }
        #expect(await expectError(.rateLimited) { try await ask(crowd[10], "+13035552000", from: "2001:db8:1:2::99") }?.key == .codesPerHourSpent)
        try await ask(crowd[10], "+13035552000", from: "2001:db8:1:3::1")
        #expect(texted == 5 + 4 + 11)
        try await deliver(s)
        #expect(s.texter.texts.count == texted, "a refused code queued nothing")
        // A minute apart at most: a second request at once is refused, one code goes.
        #expect(await expectError(.rateLimited) { _ = try await s.system.clients.setPhone(clientId: crowd[11], number: "+13035553000")
            _ = try await s.system.clients.setPhone(clientId: crowd[11], number: "+13035553001") }?.key == .phoneCodeTooSoon)
    }

    /// Issue 55 (A10): six requests for a code at once (two at a time on the test store's pool) send one
    /// code and answer the others `rate_limited`: the answer says what was done.
    @Test func sixRequestsAtOnceSendOneCodeAndSaySoToTheOthers() async throws {
        let s = try await scene()
        let outcomes = await atOnceAwaited(6) { index in _ = try await s.system.clients.setPhone(clientId: s.anna, number: "+1202555016\(index)") }
        #expect(outcomes.sorted() == ["ok", "rate_limited", "rate_limited", "rate_limited", "rate_limited", "rate_limited"], "\(outcomes)")
        #expect(try await deliver(s).texts == 1, "one code sent")
    }

    /// A network is counted as one: an IPv6 /64, an IPv4 address whole, and the same IPv4
    /// address whether a socket gives it plain or IPv4-mapped (a dual-stack listener) — never
    /// every IPv4 client in one bucket.
    @Test func aClientAddressIsCountedByItsNetwork() {
        #expect(CodeLimits.addressKey("2001:db8:1:2::1") == CodeLimits.addressKey("2001:DB8:1:2:ffff::9"))
        #expect(CodeLimits.addressKey("2001:db8:1:2::1") != CodeLimits.addressKey("2001:db8:1:3::1"))
        #expect(CodeLimits.addressKey("::ffff:192.0.2.7") == CodeLimits.addressKey("192.0.2.7"))
        #expect(CodeLimits.addressKey("::ffff:192.0.2.7") != CodeLimits.addressKey("::ffff:192.0.2.8"))
        #expect(CodeLimits.addressKey("192.0.2.7") != CodeLimits.addressKey("192.0.2.8"))
    }

    @Test func theDeploymentsDailyBudgetStopsCodesButNotReminders() async throws {
        let clock = TestClock()
        var limits = CodeLimits()
        limits.textCodesPerDay = 2
        let system = try makeSystem(clock: clock, codeLimits: limits)
        let therapy = try department(system, "LA1", "therapy").id ?? 0
        let texter = RecordingTexter()
        try await system.outbox.noteTextGateway()
        let ids = try (0..<3).map { try register(system, "budget\($0)").id ?? 0 }
        _ = try await system.clients.setPhone(clientId: ids[0], number: "+12025550140")
        _ = try await system.clients.setPhone(clientId: ids[1], number: "+12025550141")
        #expect(await expectError(.rateLimited) { _ = try await system.clients.setPhone(clientId: ids[2], number: "+12025550142") }?.key
                == .textCodeBudgetSpent)
        _ = try await system.outbox.run(mailer: nil, from: "", texter: texter, site: site)
        _ = try await system.clients.confirmPhone(clientId: ids[0], code: String(try #require(texter.texts[0].body.firstMatch(of: /\d{6}/)).output))
        _ = try system.appointments.createAppointment(clientId: ids[0], departmentId: therapy, at: .instant(monday0920))
        clock.advance(6 * 3600)
        #expect(try await system.outbox.createReminders() == 1)
        #expect(try await system.outbox.run(mailer: nil, from: "", texter: texter, site: site).texts == 1, "a reminder is no code")
        // A day later the budget renews.
        clock.advance(86_400)
        _ = try await system.outbox.run(mailer: nil, from: "", texter: texter, site: site)
        _ = try await system.clients.setPhone(clientId: ids[2], number: "+12025550142")
    }

    /// Issue 55 (B11): with no gateway anywhere (no process with one said so within the hour),
    /// a number is refused with `texts_unavailable` rather than promised a code that never goes.
    /// The profile page's awaited read (issue 56: `ProfileReadsStore.textGatewaySeen`) says the same.
    @Test func withoutAGatewayNoCodeIsPromised() async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        func available() async throws -> Bool {
            let blocking = try { try system.clients.textsAvailable() }()
            let awaited = try await system.clients.textsAvailable()
            #expect(blocking == awaited)
            return awaited
        }
        let anna = try register(system, "anna").id ?? 0
        #expect(try await !available())
        #expect(await expectError(.textsUnavailable) { _ = try await system.clients.setPhone(clientId: anna, number: "+12025550143") } != nil)
        await #expect(throws: ClinicError(.textsUnavailable, .textsUnavailable)) {
            _ = try await system.clients.setPhone(clientId: anna, number: "+12025550143")
        }
        #expect(try { try system.clients.phone(clientId: anna) }() == PhoneStatus(number: nil, confirmed: false, textReminders: false,
                                                                          textOffers: false, stopped: false), "nothing kept")
        // A process with a gateway runs the outbox: codes go, until it is gone for an hour.
        _ = try await system.outbox.run(mailer: nil, from: "", texter: RecordingTexter(), site: site)
        #expect(try await available())
        _ = try await system.clients.setPhone(clientId: anna, number: "+12025550143")
        clock.advance(3601)
        #expect(try await !available())
    }

    // MARK: Confirming a number

    /// Issue 55 (C22): two patients confirming one number at once (on PostgreSQL, two
    /// connections) are put one after the other: both are answered, no storage error, and the
    /// number ends with one of them.
    @Test func twoPatientsConfirmingOneNumberAtOnceAreBothAnswered() async throws {
        let s = try await scene()
        let number = "+12025550150"
        for client in [s.anna, s.bob] { _ = try await s.system.clients.setPhone(clientId: client, number: number) }
        try await deliver(s)
        let codes = s.texter.texts.filter { $0.to == number }.map { String($0.body.firstMatch(of: /\d{6}/)?.output ?? "") }
        #expect(codes.count == 2)
        let outcomes = await atOnceAwaited(2) { index in _ = try await s.system.clients.confirmPhone(clientId: index == 0 ? s.anna : s.bob, code: codes[index]) }
        #expect(outcomes == ["ok", "ok"], "\(outcomes)")
        let holders = try [s.anna, s.bob].filter { try s.system.clients.phone(clientId: $0).confirmed }
        #expect(holders.count == 1, "whoever confirmed last holds the number")
    }

    @Test func aNumberIsConfirmedByTheCodeTextedToItAndNothingElseGoesBefore() async throws {
        let s = try await scene()
        let pending = try await s.system.clients.setPhone(clientId: s.anna, number: "+1 202 555 0143")
        #expect(pending == PhoneStatus(number: "+12025550143", confirmed: false, textReminders: true, textOffers: true, stopped: false))
        #expect(try await deliver(s).texts == 1)
        #expect(s.texter.texts.count == 1 && s.texter.texts[0].to == "+12025550143" && s.texter.texts[0].coding == .gsm7)
        #expect(try await deliver(s).texts == 0, "sent once")
        // A new code at most once a minute.
        #expect(await expectError(.rateLimited) { _ = try await s.system.clients.setPhone(clientId: s.anna, number: "+12025550143") } != nil)

        // Before it is confirmed, a reminder is not texted.
        _ = try s.system.appointments.createAppointment(clientId: s.anna, departmentId: s.therapy, at: .instant(monday0920),
                                                        doctorId: s.doctor)
        s.clock.advance(6 * 3600)
        #expect(try await s.system.outbox.createReminders() == 1)
        try await deliver(s)
        #expect(s.texter.texts.count == 1, "no text to a number not confirmed")

        _ = try await s.system.clients.setPhone(clientId: s.anna, number: "+12025550143")
        try await deliver(s)
        let code = try code(s, to: "+12025550143")
        let confirmed = try await s.system.clients.confirmPhone(clientId: s.anna, code: code)
        #expect(confirmed.confirmed && confirmed.number == "+12025550143")
        #expect(try await s.system.clients.phone(clientId: s.anna) == confirmed)
        // The number is sealed: its digits are nowhere in the row.
        let row = try #require(try storedRows(s.system, "SELECT number_sealed, number_key FROM phones").first)
        #expect(row.columns.values.allSatisfy { !$0.contains("2025550143") })
    }

    @Test func aCodeGuessedTenTimesConfirmsNothingEvenTheRightOneAfterTheFifthWrong() async throws {
        let s = try await scene()
        _ = try await s.system.clients.setPhone(clientId: s.anna, number: "+12025550143")
        try await deliver(s)
        let right = try code(s, to: "+12025550143")
        let wrong = right == "000000" ? "111111" : "000000"
        for _ in 0..<9 {
            #expect(await expectError(.invalidInput) { _ = try await s.system.clients.confirmPhone(clientId: s.anna, code: wrong) }?.key == .phoneCodeWrong)
        }
        #expect(await expectError(.invalidInput) { _ = try await s.system.clients.confirmPhone(clientId: s.anna, code: right) } != nil)
        #expect(try await s.system.clients.phone(clientId: s.anna).confirmed == false)
        #expect(await expectError(.notFound) { _ = try await s.system.clients.confirmPhone(clientId: s.bob, code: right) }?.key == .phoneNoPending)
    }

    @Test func aCodeRunsOutAfterThirtyMinutesAndANumberConfirmedAgainMovesToWhoeverHoldsThePhone() async throws {
        let s = try await scene()
        _ = try await s.system.clients.setPhone(clientId: s.anna, number: "+12025550143")
        try await deliver(s)
        let code = try code(s, to: "+12025550143")
        s.clock.advance(31 * 60)
        #expect(await expectError(.invalidInput) { _ = try await s.system.clients.confirmPhone(clientId: s.anna, code: code) } != nil)

        try await confirm(s, s.anna, "+12025550143")
        try await confirm(s, s.bob, "+12025550143")
        #expect(try await s.system.clients.phone(clientId: s.bob).confirmed)
        #expect(try await s.system.clients.phone(clientId: s.anna).number == nil, "Anna no longer has it")
        #expect(expectError(.notFound) { _ = try s.system.clients.updateProfile(clientId: s.anna, ProfileChanges(), texts: (false, nil)) }?
            .key == .phoneNone)
    }

    // MARK: What is texted

    @Test func aReminderIsTextedToAConfirmedNumberUnlessThePatientSaidNo() async throws {
        let s = try await scene()
        try await confirm(s, s.anna, "+12025550143")
        try await confirm(s, s.bob, "+12025550144")
        _ = try await s.system.clients.updateProfile(clientId: s.bob, ProfileChanges(), texts: (reminders: false, offers: nil))
        for patient in [s.anna, s.bob] {
            _ = try s.system.appointments.createAppointment(clientId: patient, departmentId: s.therapy,
                                                            at: .instant(patient == s.anna ? monday0920 : monday1000), doctorId: s.doctor)
        }
        s.clock.advance(6 * 3600)
        #expect(try await s.system.outbox.createReminders() == 2)
        #expect(try await deliver(s).texts == 1)
        let reminder = try #require(s.texter.texts.last)
        #expect(reminder.to == "+12025550143")
        #expect(reminder.body == "Reminder: Adventist Medical Center, Nov 23, 2026 at 9:20 AM PST. Reply C to confirm or X to cancel.")
    }

    @Test func aGatewayThatIsDownMeansARetryLaterAndTheTextSentOnce() async throws {
        let s = try await scene()
        _ = try await s.system.clients.setPhone(clientId: s.anna, number: "+12025550143")
        s.texter.fail(true)
        let report = try await deliver(s)
        #expect(report.retrying == 1 && report.texts == 0)
        s.texter.fail(false)
        #expect(try await deliver(s).texts == 0, "not due before its back-off")
        s.clock.advance(61)
        #expect(try await deliver(s).texts == 1)
        s.clock.advance(3600)
        #expect(try await deliver(s).texts == 0)
        #expect(s.texter.texts.count == 1)
    }

    @Test func aRemindersEmailSaysWhereToCancelSoThatTheTimeCanGoToSomeoneWaiting() async throws {
        let s = try await scene()
        let mailer = RecordingMailer()
        _ = try await s.system.clients.setEmail(clientId: s.anna, address: "anna@example.org")
        _ = try await s.system.outbox.run(mailer: mailer, from: "clinic@example.org")
        let codeMail = try #require(mailer.messages.last)
        let codeLine = decodedParts(codeMail.text).first?.split(separator: "\r\n").first
        let code = String(try #require(codeLine).suffix(6))
        _ = try await s.system.clients.confirmEmail(clientId: s.anna, code: code)
        let booked = try s.system.appointments.createAppointment(clientId: s.anna, departmentId: s.therapy, at: .instant(monday0920),
                                                                 doctorId: s.doctor)
        s.clock.advance(6 * 3600)
        #expect(try await s.system.outbox.createReminders() == 1)
        _ = try await s.system.outbox.run(mailer: mailer, from: "clinic@example.org", site: site)
        let reminderMail = try #require(mailer.messages.last)
        let reminder = decodedParts(reminderMail.text).joined()
        #expect(reminder.contains("Can't come? Cancel it here, and the time goes to someone waiting for one: "
                                  + "\(site)/appointments/\(booked.id ?? 0)"), "\(reminder)")
    }

    // MARK: A waitlist offer and its link

    @Test func anOfferIsTextedWithALinkThatOpensItAndBooksOnceForThatPatient() async throws {
        let s = try await scene()
        try await confirm(s, s.bob, "+12025550144")
        let booked = try s.system.appointments.createAppointment(clientId: s.anna, departmentId: s.therapy, at: .instant(monday0920),
                                                                 doctorId: s.doctor)
        _ = try await s.system.waitlist.join(clientId: s.bob, .init(departmentId: s.therapy))
        _ = try s.system.appointments.cancelAppointment(booked.id ?? 0, clientId: s.anna)
        #expect(try await s.system.waitlist.work() == 1)
        #expect(try await deliver(s).texts == 1)
        let text = try #require(s.texter.texts.last)
        #expect(text.to == "+12025550144" && text.body.hasPrefix("Adventist Medical Center: a time is free for you, Nov 23, 2026 at 9:20 AM PST."))
        // Issue 55 (A10): until when, with the day and the zone (now is Nov 22, 12:00 UTC; 15 minutes).
        #expect(text.body.contains("Held for you until Nov 22, 2026 at 4:15 AM PST:"), "\(text.body)")
        let token = String(try #require(text.body.firstMatch(of: /\/o\/([0-9a-f]+)$/)).output.1)
        #expect(text.body.contains(site + "/o/" + token))

        let (offer, department, clinic) = try await s.system.waitlist.offer(link: token)
        let seam: (offer: WaitlistOffer, department: Department, clinic: Clinic) = try { try s.system.waitlist.offer(link: token) }()
        #expect(seam.offer == offer && seam.department == department && seam.clinic == clinic, "the seam's read and the awaited one agree")
        #expect(offer.clientId == s.bob && offer.startsAt == monday0920 && department.id == s.therapy && clinic.externalId == "LA1")
        #expect(expectError(.notFound) { _ = try s.system.waitlist.offer(link: String(repeating: "0", count: 32)) }?.key == .offerLinkInvalid)
        #expect(expectError(.notFound) { _ = try s.system.waitlist.offer(link: "../../etc/passwd") } != nil)

        let before = try fingerprint(s.system)
        await #expect(throws: ClinicError(.notFound, .offerLinkInvalid), "a link never made") {
            _ = try await s.system.waitlist.answer(link: String(repeating: "0", count: 32), accept: true)
        }
        #expect(try fingerprint(s.system) == before, "a refusal uses nothing")
        let answer = try await s.system.waitlist.answer(link: token, accept: true)
        #expect(answer.appointment?.clientId == s.bob && answer.appointment?.startsAt == monday0920)
        #expect(answer.clientId == s.bob && answer.startsAt == monday0920 && answer.clinicId == offer.clinicId)
        await #expect(throws: ClinicError(.notFound, .offerLinkInvalid), "a link works once") {
            _ = try await s.system.waitlist.answer(link: token, accept: true)
        }
        await #expect(throws: ClinicError(.notFound, .offerLinkInvalid), "declined neither") {
            _ = try await s.system.waitlist.answer(link: token, accept: false)
        }
        #expect(expectError(.notFound) { _ = try s.system.waitlist.offer(link: token) } != nil)
    }

    /// The worker (`WaitlistWorkStore`) on one story: a freed time skips the first in line, whose
    /// days it is not in, and goes to the next, who is told in the inbox and by a text with a
    /// link; the offer lapses, is counted, and its time queued again, which nobody else can take.
    @Test func theWorkerOffersTextsAndLapses() async throws {
        /// What the worker wrote, as both stores read it (the links' hashes are random).
        func written(_ s: Scene) throws -> [String] {
            try storedRows(s.system, """
                SELECT 'offer ' || client_id || ' ' || status || ' ' || clinic_id || ' ' || department_id || ' ' || doctor_id
                       || ' ' || CASE WHEN link_hash IS NULL THEN 'no link' ELSE 'link' END AS line FROM waitlist_offers
                UNION ALL SELECT 'entry ' || client_id || ' ' || status || ' ' || lapses FROM waitlist_entries
                UNION ALL SELECT 'message ' || client_id || ' ' || kind || ' ' || coalesce(clinic_id, 0) || ' ' || subject || ' ' || body
                          FROM messages WHERE kind = 'waitlist'
                UNION ALL SELECT 'delivery ' || client_id || ' ' || purpose FROM deliveries WHERE purpose IN ('text', 'message')
                UNION ALL SELECT 'hold ' || client_id FROM slot_holds
                UNION ALL SELECT 'freed ' || department_id FROM waitlist_freed
                ORDER BY 1
                """).compactMap { $0["line"] as String? }
        }
        func story() async throws -> (handled: [Int], rows: [[String]], text: String) {
            func work(_ s: Scene) async throws -> Int { try await s.system.waitlist.work() }
            let s = try await scene()
            try await confirm(s, s.bob, "+12025550144")
            let eve = try register(s.system, "eve").id ?? 0
            let booked = try s.system.appointments.createAppointment(clientId: s.anna, departmentId: s.therapy, at: .instant(monday0920),
                                                                     doctorId: s.doctor)
            _ = try await s.system.waitlist.join(clientId: eve, .init(departmentId: s.therapy, from: "2026-11-24"))
            _ = try await s.system.waitlist.join(clientId: s.bob, .init(departmentId: s.therapy))
            var handled = [try await work(s)]
            _ = try s.system.appointments.cancelAppointment(booked.id ?? 0, clientId: s.anna)
            handled.append(try await work(s))
            var rows = [try written(s)]
            try await deliver(s)
            let text = try #require(s.texter.texts.last).body
            let token = String(try #require(text.firstMatch(of: /\/o\/([0-9a-f]+)$/)).output.1)
            #expect(try await s.system.waitlist.offer(link: token).offer.clientId == s.bob, "the link opens Bob's offer")
            s.clock.advance(16 * 60)
            handled.append(try await work(s))
            handled.append(try await work(s))
            rows.append(try written(s))
            return (handled, rows, text.replacing(token, with: "TOKEN"))
        }
        let awaited = try await story()
        // What it wrote: nothing to do at first; the time offered once (Eve's days begin on
        // Tuesday), then the lapse closed and its time taken again and let go (Bob had it).
        #expect(awaited.handled == [0, 1, 2, 0])
        let offered = awaited.rows[0], lapsed = awaited.rows[1]
        #expect(offered.filter { $0.hasPrefix("offer ") } == offered.filter { $0.hasPrefix("offer ") && $0.contains(" open ") && $0.hasSuffix(" link") })
        #expect(offered.filter { $0.hasPrefix("offer ") }.count == 1)
        #expect(offered.contains { $0.hasPrefix("entry ") && $0.hasSuffix(" offered 0") } && offered.contains { $0.hasSuffix(" waiting 0") })
        #expect(offered.filter { $0.hasPrefix("message ") && $0.contains(" waitlist ") }.count == 1)
        #expect(offered.filter { $0.hasPrefix("delivery ") && $0.hasSuffix(" text") }.count == 1 && offered.filter { $0.hasPrefix("hold ") }.count == 1)
        #expect(lapsed.contains { $0.hasPrefix("offer ") && $0.contains(" lapsed ") } && !lapsed.contains { $0.hasPrefix("hold ") })
        #expect(lapsed.contains { $0.hasPrefix("entry ") && $0.hasSuffix(" waiting 1") }, "the lapse counted, the entry waiting again")
        #expect(!lapsed.contains { $0.hasPrefix("freed ") }, "the time queued again was taken, and nobody else could have it")
        #expect(awaited.text.hasPrefix("Adventist Medical Center: a time is free for you, Nov 23, 2026 at 9:20 AM PST.")
                && awaited.text.hasSuffix(site + "/o/TOKEN"), "\(awaited.text)")
    }

    @Test func anOffersLinkDeclinesItOnceAndItsTimeGoesToTheNext() async throws {
        let s = try await scene()
        try await confirm(s, s.bob, "+12025550144")
        let booked = try s.system.appointments.createAppointment(clientId: s.anna, departmentId: s.therapy, at: .instant(monday0920),
                                                                 doctorId: s.doctor)
        let entry = try await s.system.waitlist.join(clientId: s.bob, .init(departmentId: s.therapy))
        _ = try s.system.appointments.cancelAppointment(booked.id ?? 0, clientId: s.anna)
        #expect(try await s.system.waitlist.work() == 1)
        #expect(try await deliver(s).texts == 1)
        let text = try #require(s.texter.texts.last)
        let token = String(try #require(text.body.firstMatch(of: /\/o\/([0-9a-f]+)$/)).output.1)
        let offer = try await s.system.waitlist.offer(link: token).offer

        let answer = try await s.system.waitlist.answer(link: token, accept: false)
        #expect(answer.appointment == nil && answer.clientId == s.bob && answer.startsAt == monday0920 && answer.clinicId == offer.clinicId)
        #expect(try s.system.waitlist.offer(offer.id ?? 0, clientId: s.bob).status == .declined)
        #expect(try await s.system.waitlist.entries(clientId: s.bob).map(\.status) == [.waiting] && entry.id != nil, "the entry waits again")
        let used = try fingerprint(s.system)
        for accept in [false, true] {
            await #expect(throws: ClinicError(.notFound, .offerLinkInvalid), "a link works once (accept: \(accept))") {
                _ = try await s.system.waitlist.answer(link: token, accept: accept)
            }
        }
        #expect(try fingerprint(s.system) == used, "a refusal changes nothing")
        await #expect(throws: ClinicError(.notFound, .offerLinkInvalid), "its page neither") { _ = try await s.system.waitlist.offer(link: token) }
        #expect(try await s.system.appointments.getAppointmentsByClientId(s.bob).isEmpty)
    }

    @Test func aPatientWhoTakesNoOffersByTextGetsTheInboxOnly() async throws {
        let s = try await scene()
        try await confirm(s, s.bob, "+12025550144")
        _ = try await s.system.clients.updateProfile(clientId: s.bob, ProfileChanges(), texts: (reminders: nil, offers: false))
        let booked = try s.system.appointments.createAppointment(clientId: s.anna, departmentId: s.therapy, at: .instant(monday0920),
                                                                 doctorId: s.doctor)
        _ = try await s.system.waitlist.join(clientId: s.bob, .init(departmentId: s.therapy))
        _ = try s.system.appointments.cancelAppointment(booked.id ?? 0, clientId: s.anna)
        #expect(try await s.system.waitlist.work() == 1)
        #expect(try await deliver(s).texts == 0)
        #expect(try await s.system.waitlist.offers(clientId: s.bob).count == 1)
    }

    // MARK: Replies

    /// A reply handled by the CLI's seam, or awaited as a server does (issue 56).
    static func reply(_ s: Scene, _ awaited: Bool, _ from: String, _ text: String) async throws -> String? {
        if awaited { return try await s.system.texts.handle(from: from, text: text).reply }
        return try { try s.system.texts.receive(from: from, text: text) }()
    }

    @Test(arguments: [false, true]) func stopStopsTextsAnsweredOnceAndStartTurnsThemBackOn(awaited: Bool) async throws {
        let s = try await scene()
        try await confirm(s, s.anna, "+12025550143")
        #expect(try await Self.reply(s, awaited, "+12025550143", " stop ") == Strings.text(.textStopped, .en))
        #expect(try await Self.reply(s, awaited, "12025550143", "STOP") == nil, "answered once")
        #expect(try { try s.system.clients.phone(clientId: s.anna) }().stopped)
        #expect(try await Self.reply(s, awaited, "+12025550143", "C") == nil, "nothing but START is answered after STOP")
        _ = try s.system.appointments.createAppointment(clientId: s.anna, departmentId: s.therapy, at: .instant(monday0920),
                                                        doctorId: s.doctor)
        s.clock.advance(6 * 3600)
        _ = try await s.system.outbox.createReminders()
        let before = s.texter.texts.count
        try await deliver(s)
        #expect(s.texter.texts.count == before, "nothing texted after STOP")
        #expect(try await Self.reply(s, awaited, "+12025550143", "Start") == Strings.text(.textStarted, .en))
        #expect(try { try s.system.clients.phone(clientId: s.anna) }().stopped == false)
        #expect(try await Self.reply(s, awaited, "+12025550143", "СТОП") == Strings.text(.textStopped, .en))
    }

    @Test(arguments: [false, true]) func aReplyFromAnUnknownNumberIsRefusedAndChangesNothing(awaited: Bool) async throws {
        let s = try await scene()
        _ = try await s.system.clients.setPhone(clientId: s.anna, number: "+12025550143")
        for from in ["+12025550143", "+19995550000", "not a number", ""] {
            #expect(await expectError(.notFound) { _ = try await Self.reply(s, awaited, from, "STOP") }?.key == .textUnknownNumber,
                    "\(from): a number not confirmed is unknown")
        }
        #expect(try { try s.system.clients.phone(clientId: s.anna) }().stopped == false)
    }

    @Test(arguments: [false, true]) func cConfirmsAndXCancelsTheNextAppointmentAndTwoAreAskedWhich(awaited: Bool) async throws {
        let s = try await scene()
        try await confirm(s, s.anna, "+12025550143")
        #expect(try await Self.reply(s, awaited, "+12025550143", "C") == Strings.text(.textNothingDue, .en))
        let first = try s.system.appointments.createAppointment(clientId: s.anna, departmentId: s.therapy, at: .instant(monday0920),
                                                                doctorId: s.doctor)
        let answer = try await Self.reply(s, awaited, "+12025550143", "c")
        #expect(answer == "Thank you: your appointment of Nov 23, 2026 at 9:20 AM PST is confirmed.")
        let (confirmed, history) = try await s.system.appointments.appointmentWithHistory(first.id ?? 0, clientId: s.anna)
        #expect(confirmed.status == .confirmed && history.last?.event == "confirmed" && history.last?.actor == "patient")

        // Two appointments soon: the answer lists them, and X2 cancels the second.
        let cardiology = try department(s.system, "LA1", "cardiology").id ?? 0
        let second = try s.system.appointments.createAppointment(clientId: s.anna, departmentId: cardiology, at: .instant(monday1000))
        _ = try await s.system.waitlist.join(clientId: s.bob, .init(departmentId: cardiology))
        let which = try #require(try await Self.reply(s, awaited, "+12025550143", "X"))
        #expect(which.hasPrefix("You have 2 appointments soon: 1) Nov 23, 2026 at 9:20 AM PST; 2) Nov 23, 2026 at 10:00 AM PST."))
        #expect(try s.system.appointments.getAppointmentById(second.id ?? 0, clientId: s.anna).status == .scheduled)
        #expect(try await Self.reply(s, awaited, "+12025550143", "X 2") == "Your appointment of Nov 23, 2026 at 10:00 AM PST is cancelled.")
        #expect(try s.system.appointments.getAppointmentById(second.id ?? 0, clientId: s.anna).status == .cancelled)
        // The freed time goes to the waitlist at once, as from any front.
        #expect(try await s.system.waitlist.work() == 1)
        #expect(try { try s.system.waitlist.offers(clientId: s.bob) }().first?.startsAt == monday1000)
        #expect(try await Self.reply(s, awaited, "+12025550143", "hello") == Strings.text(.textNotUnderstood, .en))
    }

    @Test func theCommandsAreReadAsAPhoneTypesThem() {
        #expect(TextController.command("stop") == .stop && TextController.command("Стоп!") == .stop)
        #expect(TextController.command("CANCEL") == .stop, "CANCEL is a carriers' stop word: X cancels a visit")
        #expect(TextController.command("С") == .confirm(nil), "a Cyrillic С")
        #expect(TextController.command("х1") == .cancel(1), "a Cyrillic х")
        #expect(TextController.command("C 2") == .confirm(2))
        #expect(TextController.command("C0") == .unknown && TextController.command("Cx") == .unknown)
        #expect(TextController.command("старт") == .start)
        #expect(TextController.command(" x ") == .cancel(nil) && TextController.command("X 12") == .cancel(12))
    }

    /// Issue 55 (A5): only exactly C, X, C<n> or X<n> changes a visit; punctuation or another
    /// sign is not read past, and "X?" is a question, answered with the help.
    @Test func aReplyWithAnythingMoreThanTheLetterAndNumberChangesNothing() {
        for text in ["X?", "X.", "x!!", "X:1", "X-1", "X+1", "X#1", "X/1", "X_1", "Xmas", "X1?", "C?", "XX", "X 1 please", "x1.", "C123"] {
            #expect(TextController.command(text) == .unknown, "\(text)")
        }
    }

    @Test func aQuestionMarkCancelsNothingAndOneVisitIsNamedInTheSingular() async throws {
        let s = try await scene()
        try await confirm(s, s.anna, "+12025550143")
        let visit = try s.system.appointments.createAppointment(clientId: s.anna, departmentId: s.therapy, at: .instant(monday0920),
                                                                doctorId: s.doctor)
        #expect(try s.system.texts.receive(from: "+12025550143", text: "X?") == Strings.text(.textNotUnderstood, .en))
        #expect(try s.system.appointments.getAppointmentById(visit.id ?? 0, clientId: s.anna).status == .scheduled)
        let one = try #require(try s.system.texts.receive(from: "+12025550143", text: "X3"))
        #expect(one == "You have one appointment soon: Nov 23, 2026 at 9:20 AM PST. Reply C to confirm it or X to cancel it.")
        #expect(try s.system.appointments.getAppointmentById(visit.id ?? 0, clientId: s.anna).status == .scheduled)
    }

    // MARK: Delivery reports

    /// By both paths (issue 56): the CLI's seam and a server's awaited store (`PhoneNetworkStore`).
    @Test(arguments: [false, true]) func aDeliveryReportIsRecordedOnItsTextAndNothingElse(awaited: Bool) async throws {
        let s = try await scene()
        func report(_ id: Int64, _ status: Int) async throws -> TextReport {
            if awaited { return try await s.system.texts.report(deliveryId: id, status: status) }
            return try { try s.system.texts.report(deliveryId: id, status: status) }()
        }
        _ = try await s.system.clients.setPhone(clientId: s.anna, number: "+12025550143")
        try await deliver(s)
        let id = try #require(s.texter.texts.last?.deliveryId)
        #expect(try await report(id, 8) == .accepted)
        #expect(try storedRows(s.system, "SELECT report FROM deliveries WHERE id = \(id)").first?.columns == ["report": "accepted"])
        #expect(try await report(id, 1) == .delivered)
        // The operator's "accepted" coming after "delivered" does not undo it.
        #expect(try await report(id, 8) == .accepted)
        #expect(try storedRows(s.system, "SELECT report, state FROM deliveries WHERE id = \(id)").first?.columns
                == ["report": "delivered", "state": "sent"], "and the sent text's body is not kept")
        #expect(try storedInt(s.system, "SELECT count(*) FROM deliveries WHERE id = \(id) AND payload IS NULL") == 1)
        // Issue 55 (A8): a final report is the first one's for good; a replayed report (the
        // gateway's log holds every signed address) cannot turn "delivered" into "failed".
        _ = try await report(id, 2)
        #expect(try storedRows(s.system, "SELECT report FROM deliveries WHERE id = \(id)").first?.columns == ["report": "delivered"])
        #expect(await expectError(.notFound) { _ = try await report(id + 100, 1) }?.key == .textReportUnknown)
        #expect(await expectError(.invalidInput) { _ = try await report(id, 3) } != nil)
        #expect(try storedRows(s.system, "SELECT report FROM deliveries WHERE id = \(id)").first?.columns == ["report": "delivered"])
    }
}
