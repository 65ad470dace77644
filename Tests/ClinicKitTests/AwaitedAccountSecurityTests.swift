import Foundation
import Testing
@testable import ClinicKit

/// A patient's keys to their account (issue 56: `AccountSecurityStore`), on both stores, by the
/// awaited path (the synchronous seam's is gone): the private calendar address,
/// "sign out everywhere else" and the password change, with what they renew and tell.
@Suite struct AwaitedAccountSecurityTests {
    enum Path: String, CaseIterable, CustomTestStringConvertible {
        case awaited
        var testDescription: String { rawValue }
    }

    let passwords = InlinePasswordRunner()


    func calendarToken(_ system: ClinicSystem, _ id: Int64, rotate: Bool = false, _ path: Path) async throws -> String {
        switch path {
        case .awaited: try await system.clients.calendarToken(clientId: id, rotate: rotate)
        }
    }

    func existing(_ system: ClinicSystem, _ id: Int64, _ path: Path) async throws -> String? {
        switch path {
        case .awaited: try await system.clients.existingCalendarToken(clientId: id)
        }
    }

    func endOthers(_ system: ClinicSystem, _ id: Int64, keeping token: String?, _ path: Path) async throws -> Int {
        switch path {
        case .awaited: try await system.clients.endOtherSessions(clientId: id, keeping: token)
        }
    }

    func changePassword(_ system: ClinicSystem, _ id: Int64, old: String, new: String, confirm: String? = nil,
                        keeping token: String?, _ path: Path) async throws {
        switch path {
        case .awaited:
            try await system.clients.changePassword(clientId: id, old: old, new: new, confirmNew: confirm, keeping: token,
                                                    passwords: passwords)
        }
    }

    func renewalMessages(_ system: ClinicSystem, _ id: Int64) throws -> Int {
        try system.clients.messages(clientId: id).filter { $0.subject == Strings.text(.messageCalendarRenewedSubject, .en) }.count
    }

    @Test(arguments: Path.allCases) func theCalendarAddressIsMadeShownRenewedAndEnded(_ path: Path) async throws {
        let system = try makeSystem()
        let anna = try register(system, "anna").id ?? 0
        #expect(try await existing(system, anna, path) == nil)
        let token = try await calendarToken(system, anna, path)
        #expect(try await calendarToken(system, anna, path) == token, "the one there is")
        #expect(try await existing(system, anna, .awaited) == token)
        #expect(try system.clients.calendarFeed(token: token).contains("BEGIN:VCALENDAR"))
        #expect(try fingerprint(system).contains(token) == false, "sealed, and found by its hash")

        let rotated = try await calendarToken(system, anna, rotate: true, path)
        let shown = try await existing(system, anna, path)
        #expect(rotated != token && shown == rotated)
        #expect(expectError(.notFound) { _ = try system.clients.calendarFeed(token: token) } != nil)
        #expect(try system.clients.calendarFeed(token: rotated).contains("BEGIN:VCALENDAR"))

        switch path {
        case .awaited: try await system.clients.revokeCalendarToken(clientId: anna)
        }
        #expect(try await existing(system, anna, path) == nil)
        #expect(expectError(.notFound) { _ = try system.clients.calendarFeed(token: rotated) } != nil)

        let before = try fingerprint(system)
        await #expect(throws: ClinicError(.notLoggedIn, .notLoggedIn)) { _ = try await calendarToken(system, 99_999, path) }
        #expect(try fingerprint(system) == before, "nothing made for no one")
    }

    /// The sessions but the one in use end; a calendar address is renewed and the patient told,
    /// in the inbox and by e-mail when their address is confirmed; without one nothing is made.
    @Test(arguments: Path.allCases) func signingOutEverywhereElseRenewsTheCalendarAddress(_ path: Path) async throws {
        let system = try makeSystem()
        let anna = try register(system, "anna").id ?? 0
        let mine = try system.clients.logIn(login: "anna", password: "correct-horse-42").token
        let others = try (0..<2).map { _ in try system.clients.logIn(login: "anna", password: "correct-horse-42").token }

        // No calendar address: the sessions end, and nothing else is written.
        #expect(try await endOthers(system, anna, keeping: mine, path) == 2)
        #expect(try system.clients.currentUser(token: mine).id == anna)
        for other in others { #expect(expectError(.notLoggedIn) { _ = try system.clients.currentUser(token: other) } != nil) }
        #expect(try await existing(system, anna, path) == nil)
        #expect(try renewalMessages(system, anna) == 0)

        // With one, and a confirmed e-mail address.
        var client = try await system.clients.getUserById(anna)
        client.email = "anna@example.org"
        try system.database.writing { tx in try system.database.updateClient(tx, client) }
        let token = try await calendarToken(system, anna, path)
        let other = try system.clients.logIn(login: "anna", password: "correct-horse-42").token
        let deliveries = try #require(try storedInt(system, "SELECT count(*) FROM deliveries"))
        #expect(try await endOthers(system, anna, keeping: mine, path) == 1)
        #expect(expectError(.notLoggedIn) { _ = try system.clients.currentUser(token: other) } != nil)
        let renewed = try #require(try await existing(system, anna, path))
        #expect(renewed != token)
        #expect(expectError(.notFound) { _ = try system.clients.calendarFeed(token: token) } != nil)
        #expect(try system.clients.calendarFeed(token: renewed).contains("BEGIN:VCALENDAR"))
        #expect(try renewalMessages(system, anna) == 1)
        #expect(try storedInt(system, "SELECT count(*) FROM deliveries") == deliveries + 1, "e-mailed too")

        // Keeping none ends them all; a patient gone is not signed in, and nothing is written.
        #expect(try await endOthers(system, anna, keeping: nil, path) == 1)
        let before = try fingerprint(system)
        await #expect(throws: ClinicError(.notLoggedIn, .notLoggedIn)) { _ = try await endOthers(system, 99_999, keeping: nil, path) }
        #expect(try fingerprint(system) == before)
    }

    /// The old password is needed and checked under log-in's lock; the new one typed twice must
    /// match and meet the policy (a refusal gives the right old one's attempt back); then the
    /// other sessions end and the calendar address is renewed, in one transaction.
    @Test(arguments: Path.allCases) func changingThePasswordAwaitedAsTheSeam(_ path: Path) async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna").id ?? 0
        let mine = try system.clients.logIn(login: "anna", password: "correct-horse-42").token
        let other = try system.clients.logIn(login: "anna", password: "correct-horse-42").token
        let token = try await calendarToken(system, anna, path)

        await #expect(throws: ClinicError.invalid(.passwordsDiffer)) {
            try await changePassword(system, anna, old: "correct-horse-42", new: "purple-monkey-dishwasher", confirm: "purple-monkey",
                                     keeping: mine, path)
        }
        #expect(try storedInt(system, "SELECT count(*) FROM login_attempts") == 0, "not tried")
        await #expect(throws: ClinicError(.invalidCredentials, .invalidCredentials)) {
            try await changePassword(system, anna, old: "wrong-horse-42", new: "purple-monkey-dishwasher", keeping: mine, path)
        }
        #expect(try storedInt(system, "SELECT failures FROM login_attempts") == 1, "a wrong one is counted")
        let weak = await #expect(throws: ClinicError.self) {
            try await changePassword(system, anna, old: "correct-horse-42", new: "short", keeping: mine, path)
        }
        #expect(weak?.code == .weakPassword)
        #expect(try storedInt(system, "SELECT failures FROM login_attempts") == 1, "a right one is given back")
        #expect(try system.clients.currentUser(token: other).id == anna)
        #expect(try await existing(system, anna, path) == token, "nothing changed")

        try await changePassword(system, anna, old: "correct-horse-42", new: "purple-monkey-dishwasher", keeping: mine, path)
        #expect(try system.clients.currentUser(token: mine).id == anna)
        #expect(expectError(.notLoggedIn) { _ = try system.clients.currentUser(token: other) } != nil)
        #expect(try await existing(system, anna, path) != token)
        #expect(try renewalMessages(system, anna) == 1)
        #expect(expectError(.invalidCredentials) { _ = try system.clients.logIn(login: "anna", password: "correct-horse-42") } != nil)
        #expect(try system.clients.logIn(login: "anna", password: "purple-monkey-dishwasher").client.id == anna)

        // The lock: four more wrong ones fill the window, and then even the right one is refused unchecked.
        for _ in 0..<3 {
            await #expect(throws: ClinicError(.invalidCredentials, .invalidCredentials)) {
                try await changePassword(system, anna, old: "wrong-horse-42", new: "purple-monkey-dishwasher", keeping: mine, path)
            }
        }
        let locked = await #expect(throws: ClinicError.self) {
            try await changePassword(system, anna, old: "purple-monkey-dishwasher", new: "green-monkey-dishwasher", keeping: mine, path)
        }
        #expect(locked?.code == .accountLocked)
        #expect(try storedInt(system, "SELECT failures FROM login_attempts") == 5)
        clock.advance(ClientController.throttleWindow)
        try await changePassword(system, anna, old: "purple-monkey-dishwasher", new: "green-monkey-dishwasher", keeping: mine, path)

        await #expect(throws: ClinicError.self) {
            try await changePassword(system, 99_999, old: "x", new: "purple-monkey-dishwasher", keeping: nil, path)
        }
    }

    /// Removing the number: the phone is forgotten and its texts not yet sent are dropped, the
    /// e-mail ones kept; a patient gone is not signed in, and nothing changes.
    @Test(arguments: Path.allCases) func removingTheNumberDropsItsPendingTexts(_ path: Path) async throws {
        let texts = TextTests(), s = try await texts.scene()
        try await texts.confirm(s, s.anna, "+13035550123")
        s.clock.advance(61) // past the minute between two codes
        _ = try await s.system.clients.setPhone(clientId: s.anna, number: "+13035550199")
        let pending = "SELECT count(*) FROM deliveries WHERE state = 'pending' AND purpose IN ('text', 'text_code')"
        #expect(try storedInt(s.system, pending) == 1, "the new number's code waits")
        func remove(_ id: Int64) async throws {
            switch path {
            case .awaited: try await s.system.clients.removePhone(clientId: id)
            }
        }
        try await remove(s.anna)
        #expect(try await s.system.clients.phone(clientId: s.anna) == PhoneStatus.none)
        #expect(try storedInt(s.system, pending) == 0)
        #expect(try storedInt(s.system, "SELECT count(*) FROM deliveries WHERE state = 'dropped'") == 1)
        let before = try fingerprint(s.system)
        await #expect(throws: ClinicError(.notLoggedIn, .notLoggedIn)) { try await remove(99_999) }
        #expect(try fingerprint(s.system) == before)
    }

    /// Confirming a number by its code: a wrong guess is counted and refused (after the fifth
    /// even the right code is), nothing waiting writes nothing, and the right code confirms the
    /// number and takes it from another patient who had confirmed it, on both paths.
    @Test(arguments: Path.allCases) func aNumberIsConfirmedByItsCodeAndWrongGuessesAreCounted(_ path: Path) async throws {
        let texts = TextTests(), s = try await texts.scene()
        func confirm(_ id: Int64, _ code: String) async throws -> PhoneStatus {
            switch path {
            case .awaited: try await s.system.clients.confirmPhone(clientId: id, code: code)
            }
        }
        let number = "+12025550143"
        try await texts.confirm(s, s.bob, number)
        _ = try await s.system.clients.setPhone(clientId: s.anna, number: number)
        try await texts.deliver(s)
        let right = try texts.code(s, to: number)
        let wrong = right == "000000" ? "111111" : "000000"
        let attempts = "SELECT code_attempts FROM phones WHERE client_id = \(s.anna)"

        await #expect(throws: ClinicError.invalid(.phoneCodeWrong)) { _ = try await confirm(s.anna, wrong) }
        #expect(try storedInt(s.system, attempts) == 1, "counted, though refused")
        let confirmed = try await confirm(s.anna, " \(right) ")
        #expect(confirmed == PhoneStatus(number: number, confirmed: true, textReminders: true, textOffers: true, stopped: false))
        #expect(try await s.system.clients.phone(clientId: s.anna) == confirmed)
        #expect(try storedInt(s.system, attempts) == 0)
        #expect(try await s.system.clients.phone(clientId: s.bob) == PhoneStatus.none, "whoever holds the phone confirms")

        // Nothing waits now: nothing is written; nor for a patient gone.
        let before = try fingerprint(s.system)
        await #expect(throws: ClinicError(.notFound, .phoneNoPending)) { _ = try await confirm(s.anna, right) }
        await #expect(throws: ClinicError(.notLoggedIn, .notLoggedIn)) { _ = try await confirm(99_999, right) }
        #expect(try fingerprint(s.system) == before)

        // Five wrong guesses, and the right code no longer confirms.
        s.clock.advance(61)
        _ = try await s.system.clients.setPhone(clientId: s.bob, number: "+12025550144")
        try await texts.deliver(s)
        let bobs = try texts.code(s, to: "+12025550144")
        for _ in 0..<5 {
            await #expect(throws: ClinicError.invalid(.phoneCodeWrong)) { _ = try await confirm(s.bob, bobs == "000000" ? "111111" : "000000") }
        }
        await #expect(throws: ClinicError.invalid(.phoneCodeWrong)) { _ = try await confirm(s.bob, bobs) }
        #expect(try await s.system.clients.phone(clientId: s.bob).confirmed == false)
    }

    /// A number set on both paths: refused before anything is written for a patient gone, a
    /// premium number, or a second code within the minute; counted, saved sealed, and its code
    /// texted; confirmed by it; then set again, the confirmed number writes nothing.
    @Test(arguments: Path.allCases) func aNumberIsSetCountedAndTextedItsCode(_ path: Path) async throws {
        let texts = TextTests(), s = try await texts.scene()
        func set(_ id: Int64, _ number: String, from: String? = nil) async throws -> PhoneStatus {
            switch path {
            case .awaited: try await s.system.clients.setPhone(clientId: id, number: number, from: from)
            }
        }
        let number = "+12025550143"
        let untouched = try fingerprint(s.system)
        await #expect(throws: ClinicError(.notLoggedIn, .notLoggedIn)) { _ = try await set(99_999, number) }
        await #expect(throws: ClinicError.self) { _ = try await set(s.anna, "+19005550143") }
        #expect(try fingerprint(s.system) == untouched)
        #expect(try await set(s.anna, "+1 202 555 0143", from: "192.0.2.7")
                == PhoneStatus(number: number, confirmed: false, textReminders: true, textOffers: true, stopped: false))
        let counted = try fingerprint(s.system)
        await #expect(throws: ClinicError(.rateLimited, .phoneCodeTooSoon, "60")) { _ = try await set(s.anna, "+12025550144") }
        #expect(try fingerprint(s.system) == counted)
        #expect(try storedInt(s.system, "SELECT count(*) FROM send_counts") == 5, "the minute, the budget, the account, the number, the client")
        #expect(try storedInt(s.system, "SELECT count(*) FROM deliveries WHERE state = 'pending' AND purpose = 'text_code'") == 1)
        #expect(try fingerprint(s.system).contains("2025550143") == false, "the number and the code's text sealed")
        #expect(try await texts.deliver(s).texts == 1)
        _ = try await s.system.clients.confirmPhone(clientId: s.anna, code: try texts.code(s, to: number))
        s.clock.advance(61)
        let confirmed = try fingerprint(s.system)
        #expect(try await set(s.anna, number).confirmed)
        #expect(try fingerprint(s.system) == confirmed, "the confirmed number: nothing written, nothing counted")
    }

    /// Codes asked for at once (on PostgreSQL, as from several servers), by mail or by text: one
    /// is queued, the others are refused by the minute's count in the same transaction, and
    /// nothing of theirs is written.
    @Test(arguments: [CodeLimits.Channel.mail, .text]) func codesAskedForAtOnceQueueOne(_ channel: CodeLimits.Channel) async throws {
        let system = try makeSystem()
        try await system.outbox.noteTextGateway()
        let anna = try register(system, "anna").id ?? 0
        // Two at once, as the test store's pool of two connections serves them: eight at once
        // waited for a connection past the pool's 10 s on the CI's loaded PostgreSQL and were
        // answered `busy` (the server's answer to overload, not this test's subject).
        let outcomes = await withTaskGroup(of: String.self) { group in
            var all: [String] = []
            for index in 0..<8 {
                if index >= 2, let outcome = await group.next() { all.append(outcome) }
                group.addTask {
                    do {
                        switch channel {
                        case .mail: _ = try await system.clients.setEmail(clientId: anna, address: "anna\(index)@example.org")
                        case .text: _ = try await system.clients.setPhone(clientId: anna, number: "+1202555016\(index)")
                        }
                        return "queued"
                    } catch let error as ClinicError {
                        return [.emailCodeTooSoon, .phoneCodeTooSoon].contains(error.key) ? "too soon" : "\(error)"
                    } catch {
                        return "\(error)"
                    }
                }
            }
            for await outcome in group { all.append(outcome) }
            return all
        }
        #expect(outcomes.sorted() == ["queued"] + Array(repeating: "too soon", count: 7), "\(outcomes)")
        #expect(try storedInt(system, "SELECT count(*) FROM deliveries WHERE state = 'pending'") == 1)
        switch channel {
        case .mail:
            #expect(try storedInt(system, "SELECT count(*) FROM email_confirmations") == 1)
            let status = try await system.clients.email(clientId: anna)
            let pending = try #require(status.pending)
            #expect(pending.hasPrefix("anna") && pending.hasSuffix("@example.org"))
        case .text:
            #expect(try storedInt(system, "SELECT count(*) FROM phones") == 1)
            #expect(try #require(try await system.clients.phone(clientId: anna).number).hasPrefix("+1202555016"))
        }
    }

    /// The e-mail address confirmed by its code and removed, on both paths: a wrong guess is
    /// counted and refused, the right code confirms the waiting address and the patient is found
    /// by it (the record sealed again, its search tokens made again); removing forgets both
    /// addresses, ends the code and drops the mail not yet sent; a patient gone changes nothing.
    @Test(arguments: Path.allCases) func anAddressIsConfirmedByItsCodeAndRemoved(_ path: Path) async throws {
        let clock = TestClock()
        let system = try makeSystem(clock: clock)
        let anna = try register(system, "anna").id ?? 0
        let mailer = RecordingMailer()
        func code() throws -> String {
            let mail = try #require(mailer.messages.last)
            return String(try #require(decodedParts(mail.text).first?.split(separator: "\r\n").first?.suffix(6)))
        }
        func confirm(_ id: Int64, _ code: String) async throws -> EmailStatus {
            switch path {
            case .awaited: try await system.clients.confirmEmail(clientId: id, code: code)
            }
        }
        func remove(_ id: Int64) async throws {
            switch path {
            case .awaited: try await system.clients.removeEmail(clientId: id)
            }
        }
        func set(_ id: Int64, _ address: String, from: String? = nil) async throws -> EmailStatus {
            switch path {
            case .awaited: try await system.clients.setEmail(clientId: id, address: address, from: from)
            }
        }
        let tokens = "SELECT count(*) FROM patient_search WHERE client_id = \(anna)"
        let unaddressed = try #require(try storedInt(system, tokens))
        // Refused before anything is written: a patient gone, an address that is none.
        let untouched = try fingerprint(system)
        await #expect(throws: ClinicError(.notLoggedIn, .notLoggedIn)) { _ = try await set(99_999, "x@example.org") }
        await #expect(throws: ClinicError.self) { _ = try await set(anna, "not an address") }
        #expect(try fingerprint(system) == untouched)
        #expect(try await set(anna, "anna@example.org", from: "192.0.2.7") == EmailStatus(confirmed: nil, pending: "anna@example.org"))
        // A second code within the minute is refused, and nothing of it is written or counted.
        let counted = try fingerprint(system)
        await #expect(throws: ClinicError(.rateLimited, .emailCodeTooSoon, "60")) { _ = try await set(anna, "anna@example.com") }
        #expect(try fingerprint(system) == counted)
        #expect(try storedInt(system, "SELECT count(*) FROM deliveries WHERE state = 'pending'") == 1)
        #expect(try storedInt(system, "SELECT count(*) FROM send_counts") == 5, "the minute, the budget, the account, the address, the client")
        _ = try await system.outbox.run(mailer: mailer, from: "clinic@example.org")
        let right = try code(), wrong = right == "000000" ? "111111" : "000000"

        await #expect(throws: ClinicError.invalid(.emailCodeWrong)) { _ = try await confirm(anna, wrong) }
        #expect(try storedInt(system, "SELECT attempts FROM email_confirmations") == 1, "counted, though refused")
        #expect(try await confirm(anna, right) == EmailStatus(confirmed: "anna@example.org", pending: nil))
        let confirmed = try await system.clients.email(clientId: anna)
        #expect(confirmed == EmailStatus(confirmed: "anna@example.org", pending: nil))
        #expect(try storedInt(system, "SELECT count(*) FROM email_confirmations") == 0)
        #expect(try #require(try storedInt(system, tokens)) > unaddressed, "found by the address too")
        #expect(try fingerprint(system).contains("anna@example.org") == false, "sealed")

        let before = try fingerprint(system)
        await #expect(throws: ClinicError(.notFound, .emailNoPending)) { _ = try await confirm(anna, right) }
        await #expect(throws: ClinicError(.notLoggedIn, .notLoggedIn)) { _ = try await confirm(99_999, right) }
        await #expect(throws: ClinicError(.notLoggedIn, .notLoggedIn)) { try await remove(99_999) }
        #expect(try fingerprint(system) == before, "nothing written")

        // A new address waits, its code not yet sent: removing forgets both and drops the code's mail.
        clock.advance(61)
        #expect(try await set(anna, "anna@example.net") == EmailStatus(confirmed: "anna@example.org", pending: "anna@example.net"))
        let pending = "SELECT count(*) FROM deliveries WHERE state = 'pending'"
        #expect(try storedInt(system, pending) == 1)
        try await remove(anna)
        let removed = try await system.clients.email(clientId: anna)
        #expect(removed == EmailStatus(confirmed: nil, pending: nil))
        #expect(try storedInt(system, pending) == 0)
        #expect(try storedInt(system, "SELECT count(*) FROM email_confirmations") == 0)
        #expect(try storedInt(system, tokens) == unaddressed)
    }
}

